/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verify/verifier: a version offered to an external command before it is
 * served.  The verdict follows the exit status (0 passes; another status
 * fails, with the command's output kept; the timeout kills it); the
 * command gets NSD's VERIFY_* environment, the version as a zone file on
 * its standard input when asked, and can query the version over UDP and
 * TCP at the address and port it is given.  A verifier that does not read
 * its input, or leaves a process behind, does not hold the server up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "query/precompute.h"
#include "util/error.h"
#include "verify/verifier.h"
#include "zone/load.h"

/* Queries www.example. A over UDP and TCP at VERIFY_IP_ADDRESS and
 * VERIFY_PORT; exits 0 when both answers are NOERROR with one record. */
static const char query_script[] =
	"import os, socket, struct, sys\n"
	"addr, port = os.environ['VERIFY_IP_ADDRESS'], int(os.environ['VERIFY_PORT'])\n"
	"q = struct.pack('>HHHHHH', 0x1234, 0, 1, 0, 0, 0)\n"
	"q += b'\\x03www\\x07example\\x00' + struct.pack('>HH', 1, 1)\n"
	"fam = socket.AF_INET6 if ':' in addr else socket.AF_INET\n"
	"u = socket.socket(fam, socket.SOCK_DGRAM); u.settimeout(5)\n"
	"u.sendto(q, (addr, port)); a = u.recv(65535)\n"
	"t = socket.create_connection((addr, port), 5)\n"
	"t.sendall(struct.pack('>H', len(q)) + q)\n"
	"n = struct.unpack('>H', t.recv(2))[0]; b = b''\n"
	"while len(b) < n: b += t.recv(n - len(b))\n"
	"for m in (a, b):\n"
	"    if m[3] & 15 != 0 or struct.unpack('>H', m[6:8])[0] != 1: sys.exit(1)\n"
	"print('answered twice')\n";

typedef struct fixture {
	char path[64];
	apex_zone_t *zone;
	char err[512];
	apex_verify_result_t res;
} fixture_t;

/* example. with extra A records (so that its text passes a pipe's buffer). */
static int setup(void **state)
{
	fixture_t *f = calloc(1, sizeof(*f));
	uint8_t origin[APEX_NAME_MAX];

	assert_non_null(f);
	strcpy(f->path, "/tmp/apex-verifier-XXXXXX");
	int fd = mkstemp(f->path);
	assert_true(fd >= 0);
	FILE *fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs("$ORIGIN example.\n$TTL 3600\n"
	      "@ SOA ns hostmaster 7 3600 900 604800 300\n@ NS ns\nns A 192.0.2.1\n"
	      "www A 192.0.2.80\n",
	      fp);
	for (int i = 0; i < 5000; i++)
		fprintf(fp, "host-%d A 198.51.100.%d\n", i, i % 250);
	assert_int_equal(fclose(fp), 0);
	assert_true(apex_name_from_str("example.", origin) > 0);
	assert_int_equal(apex_zone_load(f->path, origin, &f->zone, f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(apex_precompute(f->zone), APEX_OK);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture_t *f = *state;

	apex_zone_unref(f->zone);
	unlink(f->path);
	free(f);
	return 0;
}

/* Run "sh -c script" on the fixture's zone; apex_verify_run()'s result. */
static int run_sh(fixture_t *f, const char *script, bool feed, unsigned timeout)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	apex_verifier_t v = { .argv = argv, .feed_zone = feed, .timeout = timeout };

	return apex_verify_run(&v, "example", f->zone, &f->res, f->err, sizeof(f->err));
}

static void test_exit_zero_passes(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "exit 0", false, 0), APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
	assert_int_equal(f->res.status, 0);
	assert_string_equal(apex_verify_outcome_name(f->res.outcome), "passed");
}

static void test_other_status_fails_with_its_output(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "echo signature expired >&2; echo on stdout; exit 3", false, 0),
			 APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_FAILED);
	assert_int_equal(f->res.status, 3);
	assert_non_null(strstr(f->res.output, "signature expired\n"));
	assert_non_null(strstr(f->res.output, "on stdout\n"));
	assert_false(f->res.output_cut);
}

static void test_a_signal_fails(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "kill -KILL $$", false, 0), APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_FAILED);
	assert_int_equal(f->res.status, -1);
	assert_int_equal(f->res.signal, SIGKILL);
}

static void test_long_output_keeps_its_end(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "seq 1 100000; echo the last line; exit 1", false, 0), APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_FAILED);
	assert_true(f->res.output_cut);
	assert_true(strlen(f->res.output) < APEX_VERIFY_OUTPUT_MAX);
	assert_non_null(strstr(f->res.output, "99999\n100000\nthe last line\n"));
}

static void test_environment_is_nsds(void **state)
{
	fixture_t *f = *state;

	setenv("VERIFY_PORT", "1", 1); /* the server's own is replaced */
	assert_int_equal(run_sh(f,
				"test \"$VERIFY_ZONE\" = example && "
				"test \"$VERIFY_ZONE_ON_STDIN\" = no && "
				"test \"$VERIFY_PORT\" -gt 1 && "
				"test \"$VERIFY_IPV4_ADDRESS\" = 127.0.0.1 && "
				"case \" $VERIFY_IP_ADDRESSES \" in "
				"*\" 127.0.0.1@$VERIFY_IPV4_PORT \"*) exit 0;; esac; exit 1",
				false, 0),
			 APEX_OK);
	unsetenv("VERIFY_PORT");
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
}

static void test_zone_fed_on_stdin(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f,
				"test \"$VERIFY_ZONE_ON_STDIN\" = yes && "
				"n=$(grep -c '^host-[0-9]*\\.example\\.[[:space:]].*A'); "
				"echo $n; test \"$n\" = 5000",
				true, 0),
			 APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
}

static void test_unread_feed_does_not_hang(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "exit 0", true, 0), APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
}

static void test_verifier_queries_the_version(void **state)
{
	fixture_t *f = *state;
	char *argv[] = { "python3", "-c", (char *)query_script, NULL };
	apex_verifier_t v = { .argv = argv };

	assert_int_equal(apex_verify_run(&v, "example", f->zone, &f->res, f->err, sizeof(f->err)),
			 APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
	assert_int_equal(f->res.queries, 2);
	assert_non_null(strstr(f->res.output, "answered twice"));
}

static void test_timeout_kills_it(void **state)
{
	fixture_t *f = *state;

	assert_int_equal(run_sh(f, "sleep 60", false, 1), APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_TIMED_OUT);
	assert_int_equal(f->res.signal, SIGTERM);
	assert_string_equal(apex_verify_outcome_name(f->res.outcome), "timed out");
}

/* Whether pid runs: it exists and is not a zombie (which a container's
 * first process may never reap). */
static bool running(int pid)
{
	char path[64], stat[256];
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fp = fopen(path, "r");
	if (fp == NULL)
		return false;
	size_t n = fread(stat, 1, sizeof(stat) - 1, fp);
	fclose(fp);
	stat[n] = '\0';
	const char *end = strrchr(stat, ')');
	return end != NULL && end[1] == ' ' && end[2] != 'Z';
}

static void test_process_left_behind_is_killed(void **state)
{
	fixture_t *f = *state;

	/* the background sleep holds the output pipe; without the group's
	 * kill the run would still end, but the sleep would live on */
	assert_int_equal(
		run_sh(f, "sleep 60 & echo $! > /tmp/apex-verifier-left.pid; exit 0", false, 0),
		APEX_OK);
	assert_int_equal(f->res.outcome, APEX_VERIFY_PASSED);
	FILE *fp = fopen("/tmp/apex-verifier-left.pid", "r");
	int pid = 0;

	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%d", &pid), 1);
	fclose(fp);
	unlink("/tmp/apex-verifier-left.pid");
	for (int i = 0; i < 100 && running(pid); i++)
		usleep(10000);
	assert_false(running(pid));
}

static void test_missing_command_is_an_error(void **state)
{
	fixture_t *f = *state;
	char *argv[] = { "/nonexistent/verifier", NULL };
	apex_verifier_t v = { .argv = argv };

	assert_true(apex_verify_run(&v, "example", f->zone, &f->res, f->err, sizeof(f->err)) < 0);
	assert_non_null(strstr(f->err, "/nonexistent/verifier"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_exit_zero_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_status_fails_with_its_output, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_a_signal_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_output_keeps_its_end, setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment_is_nsds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zone_fed_on_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unread_feed_does_not_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verifier_queries_the_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_kills_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_left_behind_is_killed, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing_command_is_an_error, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
