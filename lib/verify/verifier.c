/* SPDX-License-Identifier: BSD-3-Clause */
/* An external verifier's verdict on a version (verifier.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* _GNU_SOURCE: posix_spawn_file_actions_addclosefrom_np */
#endif
#include "verify/verifier.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/error.h"
#include "verify/verify_feed.h"
#include "verify/verify_server.h"

extern char **environ;

/* How long a verifier that was sent SIGTERM (its timeout) has to exit
 * before SIGKILL. */
#define TERM_GRACE_MS 2000
/* How often the wait looks whether the verifier exited, at most. */
#define WAIT_STEP_MS 50
#define ENV_ADDED 9
#define ENV_TEXT 512

const char *apex_verify_outcome_name(apex_verify_outcome_t outcome)
{
	switch (outcome) {
	case APEX_VERIFY_PASSED: return "passed";
	case APEX_VERIFY_FAILED: return "failed";
	case APEX_VERIFY_TIMED_OUT: return "timed out";
	}
	return "?";
}

/* ---------------------------------------------------------------- environment */

/* The environment the verifier gets: the server's without any VERIFY_*
 * variable, and NSD's VERIFY_* for this run.  The array is malloc'ed, its
 * added strings in text (ENV_ADDED * ENV_TEXT bytes); NULL when out of
 * memory. */
static char **verifier_environment(const char *zone_name, bool on_stdin,
				   const apex_verify_server_t *s, char *text)
{
	size_t n = 0, count = 0;
	char **env;

	while (environ[count] != NULL)
		count++;
	env = malloc((count + ENV_ADDED + 1) * sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if (strncmp(environ[i], "VERIFY_", 7) != 0)
			env[n++] = environ[i];

	char *slot[ENV_ADDED];
	for (int i = 0; i < ENV_ADDED; i++)
		slot[i] = text + (size_t)i * ENV_TEXT;
	int used = 0;
	snprintf(slot[used], ENV_TEXT, "VERIFY_ZONE=%s", zone_name);
	env[n++] = slot[used++];
	snprintf(slot[used], ENV_TEXT, "VERIFY_ZONE_ON_STDIN=%s", on_stdin ? "yes" : "no");
	env[n++] = slot[used++];
	/* addrs[0] is IPv6 when it could be bound: NSD's preference */
	snprintf(slot[used], ENV_TEXT, "VERIFY_IP_ADDRESS=%s", s->addrs[0].text);
	env[n++] = slot[used++];
	snprintf(slot[used], ENV_TEXT, "VERIFY_PORT=%u", s->addrs[0].port);
	env[n++] = slot[used++];
	char *list = slot[used++];
	size_t len = (size_t)snprintf(list, ENV_TEXT, "VERIFY_IP_ADDRESSES=");
	for (int i = 0; i < s->addr_count; i++) {
		const apex_verify_address_t *a = &s->addrs[i];
		const char *family = a->family == AF_INET6 ? "IPV6" : "IPV4";

		len += (size_t)snprintf(list + len, ENV_TEXT - len, "%s%s@%u", i > 0 ? " " : "",
					a->text, a->port);
		snprintf(slot[used], ENV_TEXT, "VERIFY_%s_ADDRESS=%s", family, a->text);
		env[n++] = slot[used++];
		snprintf(slot[used], ENV_TEXT, "VERIFY_%s_PORT=%u", family, a->port);
		env[n++] = slot[used++];
	}
	env[n++] = list;
	env[n] = NULL;
	return env;
}

/* ---------------------------------------------------------------- the process */

/* The verifier started with stdin (a pipe's read end, or /dev/null) and
 * out (output and error) as its descriptors 0, 1 and 2; *pid.  0, or the
 * error posix_spawnp gave. */
static int spawn(const apex_verifier_t *v, char **env, int stdin_fd, int out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	sigemptyset(&none);
	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return rc;
	if ((rc = posix_spawnattr_init(&attr)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return rc;
	}
	if ((rc = posix_spawn_file_actions_adddup2(&fa, stdin_fd, 0)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1)) == 0 &&
	    (rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 2)) == 0 &&
	    (rc = posix_spawn_file_actions_addclosefrom_np(&fa, 3)) == 0 &&
	    /* the server's threads block signals and ignore SIGPIPE: the
	     * verifier starts with neither */
	    (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
	    (rc = posix_spawnattr_setsigdefault(&attr, &all)) == 0 &&
	    (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
	    (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
							  POSIX_SPAWN_SETPGROUP)) == 0)
		rc = posix_spawnp(pid, v->argv[0], &fa, &attr, v->argv, env);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc;
}

/* What the verifier wrote, the end of it kept in res->output. */
typedef struct output {
	char buf[2 * APEX_VERIFY_OUTPUT_MAX];
	size_t len;
	bool cut;
} output_t;

/* Read what is there on fd (non-blocking) into o; false at its end. */
static bool read_output(int fd, output_t *o)
{
	for (;;) {
		if (o->len > APEX_VERIFY_OUTPUT_MAX) { /* keep the end */
			size_t drop = o->len - (APEX_VERIFY_OUTPUT_MAX - 1);

			memmove(o->buf, o->buf + drop, o->len - drop);
			o->len -= drop;
			o->cut = true;
		}
		ssize_t n = read(fd, o->buf + o->len, sizeof(o->buf) - o->len);

		if (n > 0) {
			o->len += (size_t)n;
			continue;
		}
		return n < 0 && (errno == EAGAIN || errno == EINTR);
	}
}

/* Wait for pid, reading its output from out_fd, for at most timeout
 * seconds (0: no limit): SIGTERM to its group then, SIGKILL
 * TERM_GRACE_MS later.  Its wait status in *status; whether it was
 * timed out. */
static bool wait_verifier(pid_t pid, int out_fd, unsigned timeout, output_t *o, int *status)
{
	uint64_t start = apex_monotonic_ms(), term_at = 0;
	bool open = true, timed_out = false;
	struct pollfd pfd = { .fd = out_fd, .events = POLLIN };

	for (;;) {
		if (waitpid(pid, status, WNOHANG) == pid)
			break;
		uint64_t now = apex_monotonic_ms();

		if (timeout > 0 && !timed_out && now - start >= (uint64_t)timeout * 1000u) {
			timed_out = true;
			term_at = now;
			kill(-pid, SIGTERM);
		}
		if (timed_out && now - term_at >= TERM_GRACE_MS)
			kill(-pid, SIGKILL);
		if (open && poll(&pfd, 1, WAIT_STEP_MS) > 0)
			open = read_output(out_fd, o);
		else if (!open)
			poll(NULL, 0, WAIT_STEP_MS);
	}
	kill(-pid, SIGKILL); /* what it left running in its group */
	if (open)
		read_output(out_fd, o);
	return timed_out;
}

/* res from the wait status and the output. */
static void note_result(apex_verify_result_t *res, int status, bool timed_out, const output_t *o)
{
	res->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	res->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (timed_out)
		res->outcome = APEX_VERIFY_TIMED_OUT;
	else
		res->outcome = res->status == 0 ? APEX_VERIFY_PASSED : APEX_VERIFY_FAILED;
	size_t len = o->len < APEX_VERIFY_OUTPUT_MAX ? o->len : APEX_VERIFY_OUTPUT_MAX - 1;
	memcpy(res->output, o->buf + (o->len - len), len);
	res->output[len] = '\0';
	res->output_cut = o->cut || len < o->len;
}

/* Descriptors of one run: the output pipe, the feed pipe (or /dev/null). */
typedef struct run_fds {
	int out[2];
	int in[2];
} run_fds_t;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static int open_fds(run_fds_t *f, bool feed)
{
	f->out[0] = f->out[1] = f->in[0] = f->in[1] = -1;
	if (pipe2(f->out, O_CLOEXEC) != 0)
		return apex_errno();
	fcntl(f->out[0], F_SETFL, O_NONBLOCK);
	if (feed ? pipe2(f->in, O_CLOEXEC) != 0
		 : (f->in[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		int rc = apex_errno();

		close_fd(&f->out[0]);
		close_fd(&f->out[1]);
		return rc;
	}
	return APEX_OK;
}

int apex_verify_run(const apex_verifier_t *v, const char *zone_name, apex_zone_t *version,
		    apex_verify_result_t *res, char *err, size_t err_size)
{
	char env_text[ENV_ADDED * ENV_TEXT];
	apex_verify_server_t server;
	apex_verify_feed_t feed = { .running = false };
	output_t *o = NULL;
	run_fds_t fds;
	char **env = NULL;
	pid_t pid;
	int rc, status = 0;

	memset(res, 0, sizeof(*res));
	uint64_t start = apex_monotonic_ms();
	if ((rc = apex_verify_server_start(&server, version, err, err_size)) < 0)
		return rc;
	if ((rc = open_fds(&fds, v->feed_zone)) < 0) {
		apex_verify_server_stop(&server);
		return apex_fail(err, err_size, rc, "verifier: %s", apex_strerror(rc));
	}
	env = verifier_environment(zone_name, v->feed_zone, &server, env_text);
	o = malloc(sizeof(*o));
	rc = env == NULL || o == NULL ? ENOMEM : spawn(v, env, fds.in[0], fds.out[1], &pid);
	free(env);
	close_fd(&fds.in[0]);
	close_fd(&fds.out[1]);
	if (rc != 0) {
		close_fd(&fds.in[1]);
		close_fd(&fds.out[0]);
		apex_verify_server_stop(&server);
		free(o);
		return apex_fail(err, err_size, -rc, "verifier %s: %s", v->argv[0], strerror(rc));
	}
	memset(o, 0, sizeof(*o));
	if (v->feed_zone)
		apex_verify_feed_start(&feed, version, fds.in[1]); /* takes the write end */
	fds.in[1] = -1;
	bool timed_out = wait_verifier(pid, fds.out[0], v->timeout, o, &status);
	apex_verify_feed_join(&feed); /* ended: its reader is gone */
	close_fd(&fds.out[0]);
	res->queries = atomic_load(&server.queries);
	apex_verify_server_stop(&server);
	note_result(res, status, timed_out, o);
	free(o);
	res->ms = apex_monotonic_ms() - start;
	return APEX_OK;
}
