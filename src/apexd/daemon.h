/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The daemon as main() builds it: every part of apexd, set up step by
 * step (main.c), joined together (wiring.h), released in reverse order.
 */
#ifndef APEXD_DAEMON_H
#define APEXD_DAEMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "catalog/consumer.h"
#include "config/daemon_config.h"
#include "control/control.h"
#include "control/metrics_server.h"
#include "observe/dnstap.h"
#include "process/memory_limit.h"
#include "process/options.h"
#include "process/privs.h"
#include "serve/server.h"
#include "transfers/journals.h"
#include "transfers/notifier.h"
#include "transfers/secondary.h"
#include "transfers/xfr_out.h"
#include "zones/reload.h"
#include "zones/settings.h"

/* What main() sets up, released in reverse order by its finish(). */
typedef struct apexd {
	apexd_options_t opt;
	apex_config_t cfg;
	apexd_memory_limit_t memory_limit; /* memory-limit: the reloads' and transfers' */
	apex_server_t server;
	apex_reloader_t reloader;
	apex_secondary_t secondary;
	apex_xfr_out_t xfr_out;
	apex_notifier_t notifier;
	apex_journals_t journals;
	apex_xfr_serve_journal_t journal_reader; /* of journals, for xfr_out */
	/* the keys and transfer lists in force: cfg's, then a reconfig's */
	apex_settings_holder_t settings;
	apex_settings_cache_t *tsig_caches; /* each worker's, for signed answers */
	apex_control_t *control;
	apex_metrics_server_t *metrics; /* NULL without a metrics: key */
	apex_dnstap_t *dnstap;          /* NULL without dnstap-enable: yes */
	apexd_catalogs_t *catalogs;     /* NULL without a config file */
	sigset_t signals;
	apex_privs_t privs;
	unsigned workers;
	size_t loaded, awaiting; /* zones served, secondaries without a copy yet */
	bool config_ready, memory_limit_ready, server_ready, reloader_ready, settings_ready,
		secondary_ready, xfr_out_ready, notifier_ready, journals_ready, pid_written;
} apexd_t;

#endif
