/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * systemd's service notifications (sd_notify(3), the plain protocol, no
 * libsystemd): when apexd runs as a Type=notify service, systemd sets
 * NOTIFY_SOCKET, and apexd sends it datagrams of "KEY=VALUE" lines:
 * READY=1 once it serves, RELOADING=1 ... READY=1 around a reload however
 * it was started (SIGHUP, `apexctl reload` or `apexctl reconfig`),
 * STOPPING=1 on shutdown, STATUS= lines and EXTEND_TIMEOUT_USEC= while
 * the zones load.  Without NOTIFY_SOCKET every call does nothing.
 *
 * The socket is connected at start-up, before the privilege drop and any
 * chroot, so that it can still be written to afterwards.  Any thread may
 * send (one send() per message) once it is open.
 */
#ifndef APEXD_SD_NOTIFY_H
#define APEXD_SD_NOTIFY_H

#include <stddef.h>

/* Connect to $NOTIFY_SOCKET if set (and unset it, so that nothing apexd
 * starts inherits it); a failure is logged, and notifications are off. */
void apexd_sd_notify_open(void);

/* Send the lines of fmt (printf-style); nothing when not connected. */
void apexd_sd_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * A reload begins: RELOADING=1 with MONOTONIC_USEC (systemd 253 wants
 * both), unless another is under way already.  Any thread.
 */
void apexd_sd_notify_reload_begin(void);

/*
 * A reload begun by apexd_sd_notify_reload_begin() is over: READY=1 and
 * STATUS=serving N zone(s), reloaded, once no other is under way, so that
 * reloads that overlap give one RELOADING=1 ... READY=1.  Any thread.
 */
void apexd_sd_notify_reload_end(size_t zones);

/* Close the socket. */
void apexd_sd_notify_close(void);

#endif
