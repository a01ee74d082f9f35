/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control protocol requests (doc/control-protocol.md): one line of
 * printable ASCII, "FORMAT COMMAND [ARG...]\n", at most
 * APEX_CTL_REQUEST_MAX bytes with the newline.
 *
 * apex_ctl_request_parse() is a pure function of its input bytes: it
 * never allocates and never reads past size, so it can be fed anything
 * (the control socket is local, but a confused client must not crash
 * the server).
 */
#ifndef APEX_CTL_REQUEST_H
#define APEX_CTL_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* The control socket apexd creates and apexctl talks to unless told
 * otherwise: the build sets it from configure's runstatedir; this is the
 * fallback of a build that does not. */
#ifndef APEX_CONTROL_SOCKET_DEFAULT
#define APEX_CONTROL_SOCKET_DEFAULT "/run/apexd.sock"
#endif

#define APEX_CTL_REQUEST_MAX 4096 /* bytes, with the final newline */
#define APEX_CTL_ARGS_MAX 256     /* arguments after the command */

typedef enum {
	APEX_CTL_FORMAT_TEXT = 0, /* for people */
	APEX_CTL_FORMAT_JSON = 1, /* for scripts */
} apex_ctl_format_t;

typedef enum {
	APEX_CTL_STATUS = 0,
	APEX_CTL_RELOAD,
	APEX_CTL_ZONE_STATUS,
	APEX_CTL_STATS,
	APEX_CTL_RECONFIG,
	APEX_CTL_STOP,
	APEX_CTL_REFRESH,     /* a secondary zone: check the SOA now */
	APEX_CTL_RETRANSFER,  /* a secondary zone: transfer it whole now */
	APEX_CTL_NOTIFY,      /* a zone: NOTIFY its notify: targets now */
	APEX_CTL_ZONE_ADD,    /* a zone added with a pattern (NSD's addzone) */
	APEX_CTL_ZONE_REMOVE, /* a zone zone-add added, removed (NSD's delzone) */
	APEX_CTL_COMMAND_COUNT
} apex_ctl_command_t;

typedef struct apex_ctl_request {
	apex_ctl_format_t format;
	apex_ctl_command_t command;
	size_t argc;
	const char *argv[APEX_CTL_ARGS_MAX]; /* NUL-terminated, point into text */
	char text[APEX_CTL_REQUEST_MAX + 1]; /* private copy of the line */
} apex_ctl_request_t;

/* The command's name on the wire ("zone-status"), or NULL. */
const char *apex_ctl_command_name(apex_ctl_command_t command);

/* The command called name, or -1. */
int apex_ctl_command_from_name(const char *name);

/*
 * Parse one request from data[0..size).  The line may end with "\n" or
 * "\r\n" (or with nothing: the caller has already cut it off); any
 * other control or non-ASCII byte, an unknown format or command, a
 * wrong number of arguments or an oversized line is an error.  Returns
 * APEX_OK, or APEX_EMALFORMED with *reason set to a static one-line
 * explanation.  req is the caller's; nothing is allocated.
 */
int apex_ctl_request_parse(const uint8_t *data, size_t size, apex_ctl_request_t *req,
			   const char **reason);

/*
 * Write the request line for format, command and args into out (with
 * the final newline and a NUL after it).  Returns the line's length, or
 * APEX_ESPACE if it does not fit or would be longer than
 * APEX_CTL_REQUEST_MAX, or APEX_EINVAL if an argument is empty or holds
 * a byte the protocol does not carry (space, control, non-ASCII).
 */
int apex_ctl_request_format(char *out, size_t out_size, apex_ctl_format_t format,
			    apex_ctl_command_t command, size_t argc, const char *const *argv);

#endif
