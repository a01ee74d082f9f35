/* SPDX-License-Identifier: BSD-3-Clause */
/* apexctl: control a running apexd through its control socket. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: PACKAGE_VERSION, _GNU_SOURCE */
#endif

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl/reply.h"
#include "ctl/request.h"
#include "util/error.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define EXIT_USAGE 2
#define DEFAULT_TIMEOUT 600 /* seconds: a reload of a large zone takes a while */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: apexctl [-s SOCKET] [-t SECONDS] [--json] COMMAND [ARG...]\n"
		"\n"
		"Control a running apexd.\n"
		"\n"
		"Commands:\n"
		"  status               version, uptime, workers, zones\n"
		"  reload [ZONE...]     reload every zone, or those named, and wait for the "
		"result\n"
		"  zone-status [ZONE...] serial, file, load time, records, memory, state and "
		"error;\n"
		"                       for a secondary zone its primaries, checks and transfers\n"
		"  stats                query statistics per worker and in total, transfers\n"
		"  refresh ZONE         a secondary zone: ask its primaries for the SOA now\n"
		"  retransfer ZONE      a secondary zone: transfer it whole now\n"
		"  notify ZONE          send NOTIFY to the zone's notify: targets now\n"
		"  reconfig             read the config file again: add and remove zones\n"
		"  zone-add ZONE PATTERN add a zone with a pattern's settings (zone-list-file)\n"
		"  zone-remove ZONE     remove a zone zone-add added\n"
		"  stop                 stop apexd\n"
		"\n"
		"Options:\n"
		"  -s SOCKET    apexd's control socket (default " APEX_CONTROL_SOCKET_DEFAULT ")\n"
		"  -t SECONDS   give up waiting for the reply after SECONDS (default %d; 0: "
		"never)\n"
		"  --json, -j   JSON output, for scripts (also accepted after the command)\n"
		"  -h           show this help\n"
		"  -V           show the version\n"
		"\n"
		"Exit status: 0 on success, 1 on failure (with a one-line error), 2 on a usage "
		"error.\n",
		DEFAULT_TIMEOUT);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait until fd is ready for events or the deadline passes (deadline 0: never). */
static int wait_fd(int fd, short events, double deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int ms = -1, rc;

		if (deadline > 0) {
			double left = deadline - now_seconds();

			if (left <= 0)
				return -ETIMEDOUT;
			ms = (int)(left * 1000) + 1;
		}
		rc = poll(&p, 1, ms);
		if (rc > 0)
			return APEX_OK;
		if (rc == 0)
			continue; /* re-check the deadline */
		if (errno != EINTR)
			return apex_errno();
	}
}

/*
 * Send request to the socket at path and read the whole reply into a
 * new buffer (*reply, caller frees).  Returns APEX_OK, or an error
 * with the reason in err.
 */
static int exchange(const char *path, const char *request, double timeout, char **reply,
		    size_t *reply_size, char *err, size_t err_size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	double deadline = timeout > 0 ? now_seconds() + timeout : 0;
	size_t len = strlen(request), sent = 0, used = 0, capacity = 4096;
	char *buf = NULL;
	int fd;

	*reply = NULL;
	*reply_size = 0;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, err_size, "%s: socket path too long", path);
		return APEX_EINVAL;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "socket: %s", apex_strerror(failure));
		return failure;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int failure = apex_errno();
		snprintf(err, err_size, "cannot connect to %s: %s (is apexd running?)", path,
			 apex_strerror(failure));
		close(fd);
		return failure;
	}
	while (sent < len) {
		ssize_t n;

		if (wait_fd(fd, POLLOUT, deadline) < 0)
			goto timeout;
		n = send(fd, request + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, err_size, "%s: send: %s", path, strerror(errno));
			goto fail;
		}
		sent += (size_t)n;
	}
	buf = malloc(capacity);
	if (buf == NULL)
		goto nomem;
	for (;;) {
		ssize_t n;

		if (used == capacity) {
			char *grown;

			if (capacity >= APEX_CTL_REPLY_MAX) {
				snprintf(err, err_size, "reply larger than %u bytes",
					 APEX_CTL_REPLY_MAX);
				goto fail;
			}
			grown = realloc(buf, capacity * 2);
			if (grown == NULL)
				goto nomem;
			buf = grown;
			capacity *= 2;
		}
		if (wait_fd(fd, POLLIN, deadline) < 0)
			goto timeout;
		n = recv(fd, buf + used, capacity - used, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, err_size, "%s: recv: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	close(fd);
	*reply = buf;
	*reply_size = used;
	return APEX_OK;
timeout:
	snprintf(err, err_size, "no reply from apexd within %.0f s", timeout);
	goto fail;
nomem:
	snprintf(err, err_size, "out of memory");
fail:
	free(buf);
	close(fd);
	return APEX_EIO;
}

/* What the command line asks for, besides the command. */
typedef struct ctl_options {
	const char *path;
	apex_ctl_format_t format;
	double timeout;
} ctl_options_t;

/* The options before the command. Returns true to go on, else false with
 * the exit status in *status. */
static bool parse_options(int argc, char **argv, ctl_options_t *o, int *status)
{
	static const struct option long_options[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*status = EXIT_USAGE;
	opterr = 0;
	/* '+': stop at the command, whose arguments may look like options */
	while ((c = getopt_long(argc, argv, "+s:t:jhV", long_options, NULL)) != -1) {
		switch (c) {
		case 's': o->path = optarg; break;
		case 't': {
			char *end;

			errno = 0;
			o->timeout = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || errno != 0 || o->timeout < 0 ||
			    o->timeout > 86400 * 365) {
				fprintf(stderr,
					"apexctl: -t: expected a number of seconds, not '%s'\n",
					optarg);
				return false;
			}
			break;
		}
		case 'j': o->format = APEX_CTL_FORMAT_JSON; break;
		case 'h':
			usage(stdout);
			*status = EXIT_SUCCESS;
			return false;
		case 'V':
			printf("apexctl %s\n", PACKAGE_VERSION);
			*status = EXIT_SUCCESS;
			return false;
		case ':':
			fprintf(stderr, "apexctl: option %s needs a value\n", argv[optind - 1]);
			return false;
		default:
			fprintf(stderr, "apexctl: unknown option %s\n", argv[optind - 1]);
			usage(stderr);
			return false;
		}
	}
	return true;
}

/* The request line for the command at argv[optind] and its arguments.
 * Returns true, else false with the exit status in *status. */
static bool build_request(int argc, char **argv, ctl_options_t *o, char *request, size_t size,
			  int *status)
{
	const char **args;
	size_t argn = 0;

	*status = EXIT_USAGE;
	if (optind >= argc) {
		fprintf(stderr, "apexctl: no command given\n");
		usage(stderr);
		return false;
	}
	int command = apex_ctl_command_from_name(argv[optind]);
	if (command < 0) {
		fprintf(stderr, "apexctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return false;
	}
	args = calloc((size_t)argc, sizeof(*args));
	if (args == NULL) {
		fprintf(stderr, "apexctl: out of memory\n");
		*status = EXIT_FAILURE;
		return false;
	}
	for (int i = optind + 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0)
			o->format = APEX_CTL_FORMAT_JSON;
		else
			args[argn++] = argv[i];
	}
	int len = apex_ctl_request_format(request, size, o->format, (apex_ctl_command_t)command,
					  argn, args);
	free(args);
	if (len < 0) {
		fprintf(stderr, "apexctl: %s: %s\n", argv[optind],
			len == APEX_ESPACE
				? "too many or too long arguments"
				: "wrong number of arguments, or an argument with spaces or "
				  "control characters");
		return false;
	}
	return true;
}

/* Print the body of apexd's reply; the exit status says whether it
 * succeeded. */
static int print_reply(const char *reply, size_t reply_size)
{
	apex_ctl_reply_t parsed;

	if (apex_ctl_reply_parse((const uint8_t *)reply, reply_size, &parsed) < 0) {
		fprintf(stderr, "apexctl: malformed reply from apexd (%zu bytes)\n", reply_size);
		return EXIT_FAILURE;
	}
	if ((parsed.body_size > 0 &&
	     fwrite(parsed.body, 1, parsed.body_size, stdout) != parsed.body_size) ||
	    fflush(stdout) != 0) {
		fprintf(stderr, "apexctl: writing the output: %s\n", strerror(errno));
		return EXIT_FAILURE;
	}
	if (!parsed.ok) {
		fprintf(stderr, "apexctl: %.*s\n", (int)parsed.message_size, parsed.message);
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	ctl_options_t o = {
		.path = APEX_CONTROL_SOCKET_DEFAULT,
		.format = APEX_CTL_FORMAT_TEXT,
		.timeout = DEFAULT_TIMEOUT,
	};
	char request[APEX_CTL_REQUEST_MAX + 1], err[512];
	char *reply;
	size_t reply_size;
	int status;

	if (!parse_options(argc, argv, &o, &status) ||
	    !build_request(argc, argv, &o, request, sizeof(request), &status))
		return status;
	signal(SIGPIPE, SIG_IGN);
	if (exchange(o.path, request, o.timeout, &reply, &reply_size, err, sizeof(err)) < 0) {
		fprintf(stderr, "apexctl: %s\n", err);
		return EXIT_FAILURE;
	}
	status = print_reply(reply, reply_size);
	free(reply);
	return status;
}
