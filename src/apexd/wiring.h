/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hooks between apexd's threads, across its directories: a zone
 * served goes to its journal and its secondaries are told; workers sign
 * answers with the keys in force, hand NOTIFY to the secondary zones,
 * zone transfers to xfr_out and their queries to dnstap; the control
 * socket reaches every thread.
 */
#ifndef APEXD_WIRING_H
#define APEXD_WIRING_H

#include "control/commands.h"
#include "daemon.h"

/*
 * After the zones' first loads: the settings in force, the secondary
 * zones, notify and outgoing transfers, and the hooks that join them to
 * the reloader and the workers.  Returns APEX_OK, or a negative apex code
 * once the failure is logged (finish() releases what was set up).
 */
int apexd_wire(apexd_t *d);

/* What the control socket and the metrics endpoint reach (commands.h),
 * reconfig included when apexd was started with a config file. */
apex_command_context_t apexd_command_context(apexd_t *d);

/* dnstap's rings and each worker's hook into them (dnstap-enable: yes),
 * before the privilege drop.  Returns APEX_OK, or a negative apex code
 * once the failure is logged. */
int apexd_open_dnstap(apexd_t *d);

/* The dnstap writer thread (if open), with the socket's path as seen in
 * the chroot.  Returns APEX_OK, or a negative apex code once logged. */
int apexd_run_dnstap(apexd_t *d);

/* After the chroot (if any): the paths the threads open from now on, as
 * seen inside it. */
void apexd_rebase(apexd_t *d);

/* Before the threads start, the journals open and the privileges dropped:
 * each zone's journal ahead of the version loaded from its file replayed
 * over it, a secondary's copy written again (transfers/journal_replay.h). */
void apexd_replay_journals(apexd_t *d);

#endif
