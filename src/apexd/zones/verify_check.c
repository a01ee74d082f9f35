/* SPDX-License-Identifier: BSD-3-Clause */
/* Each zone's verifier, and what it last found (verify_check.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "zones/verify_check.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "util/error.h"
#include "util/log.h"

#define ARGS_MAX 64

/* A verified zone: its settings and its last verification. */
typedef struct entry {
	uint8_t origin[APEX_NAME_MAX];
	char *verifier; /* the command line; owned */
	bool feed_zone;
	unsigned timeout;
	apexd_verify_report_t report;
} entry_t;

static struct {
	pthread_mutex_t lock;
	pthread_cond_t slot_free; /* a verifier ended: running < limit again */
	entry_t *entries;         /* the zones with a verifier; owned */
	size_t count;
	unsigned limit, running; /* verifier-count, and verifiers running */
	apexd_verify_totals_t totals;
} verifiers = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, 0, 1, 0, { 0 } };

/* Under the lock: the entry of origin, or NULL. */
static entry_t *find(const uint8_t *origin)
{
	for (size_t i = 0; i < verifiers.count; i++)
		if (apex_name_equal(verifiers.entries[i].origin, origin))
			return &verifiers.entries[i];
	return NULL;
}

static void free_entries(entry_t *entries, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(entries[i].verifier);
	free(entries);
}

/* zc's entry from its keys and the server's; false when it is not verified. */
static bool zone_entry(const apex_config_t *cfg, const apex_zone_config_t *zc, entry_t *e)
{
	bool on = zc->verify_zone >= 0 ? zc->verify_zone == 1 : cfg->verify_zones;
	const char *verifier = zc->verifier != NULL ? zc->verifier : cfg->verifier;

	memset(e, 0, sizeof(*e));
	if (!on || verifier == NULL)
		return false;
	memcpy(e->origin, zc->origin, apex_name_size(zc->origin));
	e->verifier = strdup(verifier);
	e->feed_zone =
		zc->verifier_feed_zone >= 0 ? zc->verifier_feed_zone == 1 : cfg->verifier_feed_zone;
	e->timeout =
		zc->verifier_timeout >= 0 ? (unsigned)zc->verifier_timeout : cfg->verifier_timeout;
	snprintf(e->report.verifier, sizeof(e->report.verifier), "%s", verifier);
	return true;
}

int apexd_verify_configure(const apex_config_t *cfg)
{
	entry_t *entries = calloc(cfg->zone_count + 1, sizeof(*entries));
	size_t n = 0;

	if (entries == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (!zone_entry(cfg, &cfg->zones[i], &entries[n]))
			continue;
		if (entries[n++].verifier == NULL) {
			free_entries(entries, n);
			return APEX_ENOMEM;
		}
	}
	pthread_mutex_lock(&verifiers.lock);
	for (size_t i = 0; i < n; i++) {
		const entry_t *old = find(entries[i].origin);

		if (old != NULL) { /* its last verification stays, the command may be new */
			char verifier[sizeof(old->report.verifier)];

			memcpy(verifier, entries[i].report.verifier, sizeof(verifier));
			entries[i].report = old->report;
			memcpy(entries[i].report.verifier, verifier, sizeof(verifier));
		}
	}
	free_entries(verifiers.entries, verifiers.count);
	verifiers.entries = entries;
	verifiers.count = n;
	verifiers.limit = cfg->verifier_count > 0 ? cfg->verifier_count : 1;
	pthread_cond_broadcast(&verifiers.slot_free);
	pthread_mutex_unlock(&verifiers.lock);
	return APEX_OK;
}

unsigned apexd_verify_parallel(void)
{
	pthread_mutex_lock(&verifiers.lock);
	unsigned n = verifiers.count > 0 ? verifiers.limit : 1;
	pthread_mutex_unlock(&verifiers.lock);
	return n;
}

void apexd_verify_free(void)
{
	pthread_mutex_lock(&verifiers.lock);
	free_entries(verifiers.entries, verifiers.count);
	verifiers.entries = NULL;
	verifiers.count = 0;
	pthread_mutex_unlock(&verifiers.lock);
}

/* line split into argv (words separated by blanks; no shell); the count. */
static int split_words(char *line, char **argv)
{
	int n = 0;

	for (char *save = NULL, *w = strtok_r(line, " \t", &save); w != NULL && n < ARGS_MAX;
	     w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

/* Each line of what the verifier said, logged at level under the zone's
 * name (its last line into last, when given). */
static void log_output(int level, const char *name, const apex_verify_result_t *res, char *last,
		       size_t last_size)
{
	const char *s = res->output;

	if (res->output_cut)
		apex_log(level, "zone %s: verifier said (its last %zu bytes):", name,
			 strlen(res->output));
	while (*s != '\0') {
		size_t len = strcspn(s, "\n");

		if (len > 0) {
			apex_log(level, "zone %s: verifier: %.*s", name, (int)len, s);
			if (last != NULL)
				snprintf(last, last_size, "%.*s", (int)len, s);
		}
		s += len + (s[len] == '\n');
	}
}

/* The verdict's words: "exit status 1", "killed by signal 9", ... */
static void verdict_text(const apex_verify_result_t *res, unsigned timeout, char *out, size_t size)
{
	if (res->outcome == APEX_VERIFY_TIMED_OUT)
		snprintf(out, size, "timed out after %u s (verifier-timeout)", timeout);
	else if (res->signal != 0)
		snprintf(out, size, "killed by signal %d", res->signal);
	else
		snprintf(out, size, "exit status %d", res->status);
}

/* Wait for a free verifier slot, then take it. */
static void take_slot(void)
{
	pthread_mutex_lock(&verifiers.lock);
	while (verifiers.running >= verifiers.limit)
		pthread_cond_wait(&verifiers.slot_free, &verifiers.lock);
	verifiers.running++;
	pthread_mutex_unlock(&verifiers.lock);
}

/* Under the lock: the slot given back, the outcome noted for origin. */
static void note(const uint8_t *origin, const apexd_verify_report_t *r)
{
	entry_t *e = find(origin);

	verifiers.running--;
	pthread_cond_signal(&verifiers.slot_free);
	if (r->not_run)
		verifiers.totals.not_run++;
	else if (r->outcome == APEX_VERIFY_PASSED)
		verifiers.totals.passed++;
	else if (r->outcome == APEX_VERIFY_TIMED_OUT)
		verifiers.totals.timed_out++;
	else
		verifiers.totals.failed++;
	if (e != NULL) { /* not removed meanwhile */
		char verifier[sizeof(e->report.verifier)];

		memcpy(verifier, e->report.verifier, sizeof(verifier));
		e->report = *r;
		memcpy(e->report.verifier, verifier, sizeof(verifier));
	}
}

/* The verifier run and its verdict logged and noted in *r; APEX_OK when
 * version may be served, else APEX_ELOAD with the reason in err. */
static int judge(const char *name, apex_zone_t *version, const apex_verifier_t *v,
		 const char *command, apexd_verify_report_t *r, char *err, size_t err_size)
{
	apex_verify_result_t *res = malloc(sizeof(*res));
	char why[200], last[160] = "";
	int rc;

	if (res == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "verifier: out of memory");
	rc = apex_verify_run(v, name, version, res, why, sizeof(why));
	clock_gettime(CLOCK_REALTIME, &r->at);
	r->serial = version->serial;
	if (rc < 0) {
		r->not_run = true;
		snprintf(r->detail, sizeof(r->detail), "%s", why);
		apex_error("zone %s serial %u: verifier not run: %s", name, version->serial, why);
		free(res);
		return apex_fail(err, err_size, APEX_ELOAD, "verifier not run: %s", why);
	}
	r->outcome = res->outcome;
	r->seconds = (double)res->ms / 1000.0;
	r->queries = res->queries;
	verdict_text(res, v->timeout, r->detail, sizeof(r->detail));
	if (res->outcome == APEX_VERIFY_PASSED) {
		log_output(APEX_LOG_DEBUG, name, res, NULL, 0);
		apex_info("zone %s serial %u: verifier %s passed in %.3f s (%" PRIu64
			  " queries answered to it)",
			  name, version->serial, command, r->seconds, res->queries);
		free(res);
		return APEX_OK;
	}
	log_output(APEX_LOG_ERROR, name, res, last, sizeof(last));
	apex_error("zone %s serial %u: verifier %s rejected it: %s (it ran %.3f s)", name,
		   version->serial, command, r->detail, r->seconds);
	apex_fail(err, err_size, APEX_ELOAD, "serial %u rejected by the verifier (%s)%s%s",
		  version->serial, r->detail, last[0] != '\0' ? ": " : "", last);
	free(res);
	return APEX_ELOAD;
}

int apexd_verify_check(const char *name, const uint8_t *origin, apex_zone_t *version, char *err,
		       size_t err_size)
{
	apexd_verify_report_t r;
	char *line, *argv[ARGS_MAX + 1];
	const char *command;
	apex_verifier_t v;
	int rc;

	pthread_mutex_lock(&verifiers.lock);
	entry_t *e = find(origin);
	line = e != NULL ? strdup(e->verifier) : NULL;
	v.feed_zone = e != NULL && e->feed_zone;
	v.timeout = e != NULL ? e->timeout : 0;
	pthread_mutex_unlock(&verifiers.lock);
	if (e == NULL)
		return APEX_OK;
	if (line == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "verifier: out of memory");
	if (split_words(line, argv) == 0) {
		free(line);
		return apex_fail(err, err_size, APEX_ELOAD, "verifier: an empty command");
	}
	v.argv = argv;
	command = argv[0];
	memset(&r, 0, sizeof(r));
	take_slot();
	pthread_mutex_lock(&verifiers.lock);
	if ((e = find(origin)) != NULL)
		e->report.running = true;
	pthread_mutex_unlock(&verifiers.lock);
	rc = judge(name, version, &v, command, &r, err, err_size);
	r.ran = true;
	pthread_mutex_lock(&verifiers.lock);
	note(origin, &r);
	pthread_mutex_unlock(&verifiers.lock);
	free(line);
	return rc;
}

bool apexd_verify_report(const uint8_t *origin, apexd_verify_report_t *out)
{
	pthread_mutex_lock(&verifiers.lock);
	const entry_t *e = find(origin);

	if (e != NULL)
		*out = e->report;
	pthread_mutex_unlock(&verifiers.lock);
	return e != NULL;
}

void apexd_verify_totals(apexd_verify_totals_t *t)
{
	pthread_mutex_lock(&verifiers.lock);
	*t = verifiers.totals;
	t->running = verifiers.running;
	pthread_mutex_unlock(&verifiers.lock);
}
