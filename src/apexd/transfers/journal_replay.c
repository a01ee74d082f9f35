/* SPDX-License-Identifier: BSD-3-Clause */
/* A journal ahead of a zone's loaded version, replayed (journal_replay.h). */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/journal_replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/precompute.h"
#include "transfers/copies.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/ixfr_apply.h"
#include "zones/verify_check.h"
#include "zones/zonemd_check.h"

/* What the reloader knows of the zone. */
typedef struct zone_info {
	uint64_t id;
	char name[APEX_RELOAD_NAME_TEXT];
	char *file; /* owned */
	bool secondary, zonemd_verify;
} zone_info_t;

static void info_of(const apex_managed_zone_t *z, void *arg)
{
	zone_info_t *info = arg;

	info->id = z->id;
	snprintf(info->name, sizeof(info->name), "%s", z->name);
	info->file = strdup(z->file);
	info->secondary = z->secondary;
	info->zonemd_verify = z->zonemd_verify;
}

/* old with sets applied, ready to publish: *out, or an apex code and why. */
static int replayed_version(const zone_info_t *info, apex_zone_t *old, const apex_changes_t *sets,
			    size_t count, apex_zone_t **out, char *err, size_t err_size)
{
	char source[APEX_RELOAD_NAME_TEXT + 32];
	bool in_place = false;
	int rc;

	snprintf(source, sizeof(source), "journal of %s", info->name);
	rc = apex_ixfr_version(old, sets, count, source, out, &in_place, err, err_size);
	if (rc == APEX_OK && (rc = apex_precompute(*out)) < 0)
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
	if (rc == APEX_OK)
		rc = apexd_zonemd_check(info->name, *out, info->zonemd_verify, err, err_size);
	if (rc == APEX_OK)
		rc = apexd_verify_check(info->name, (*out)->origin, *out, err, err_size);
	if (rc < 0 && *out != NULL) {
		apex_zone_unref(*out);
		*out = NULL;
	}
	return rc;
}

/* The copy of a secondary zone written again from version; a failure is
 * logged (copies.h).  Whether it is written. */
static bool rewrite_copy(const zone_info_t *info, const apex_zone_t *version)
{
	char header[APEX_RELOAD_NAME_TEXT + 64];

	snprintf(header, sizeof(header), "zone %s, replayed from its journal", info->name);
	return apexd_copy_write(info->name, info->file, version, header) == APEX_OK;
}

/* Say what was done, and what it leaves behind on disk. */
static void report(const zone_info_t *info, uint32_t from, const apex_zone_t *version, size_t count,
		   bool copy_written)
{
	apex_info("zone %s: journal replayed: serial %u to %u (%zu change set(s)), %zu records",
		  info->name, from, version->serial, count, version->record_count);
	if (!info->secondary)
		apex_warning("zone %s: the file %s is at serial %u, behind its journal: serving "
			     "serial %u; bring the file up to date (a reload of the file as it "
			     "is serves serial %u again and clears the journal)",
			     info->name, info->file, from, version->serial, from);
	else if (!copy_written)
		apex_info("zone %s: the copy %s is written again by the next transfer", info->name,
			  info->file);
}

/* Replay sets over old (served, one reference the caller's) and publish. */
static bool replay(apex_reloader_t *r, const zone_info_t *info, apex_zone_t *old,
		   const apex_changes_t *sets, size_t count, bool at_start)
{
	apex_zone_t *version = NULL;
	char err[512];
	int rc = replayed_version(info, old, sets, count, &version, err, sizeof(err));

	if (rc < 0) {
		apex_warning("zone %s: the journal's changes from serial %u to %u do not apply to "
			     "the version loaded (%s): serving serial %u",
			     info->name, old->serial, sets[count - 1].serial_to, err, old->serial);
		return false;
	}
	apex_zone_ref(version); /* kept for the copy and the report */
	rc = apex_reloader_publish_over(r, info->id, old, version);
	if (rc < 0) {
		apex_info("zone %s: the journal's version is not published: %s", info->name,
			  rc == -ESTALE ? "another version is served already"
					: "the zone was removed meanwhile");
		apex_zone_unref(version);
		apex_zone_unref(version);
		return false;
	}
	bool copy_written = at_start && info->secondary && rewrite_copy(info, version);
	report(info, old->serial, version, count, copy_written);
	apex_zone_unref(version);
	return true;
}

bool apex_journal_replay_zone(apex_journals_t *js, apex_server_t *server, apex_reloader_t *r,
			      const uint8_t *origin, bool at_start)
{
	zone_info_t info = { 0 };
	apex_changes_t *sets = NULL;
	apex_zone_t *old = NULL;
	size_t count = 0;
	char err[512];
	bool done = false;

	if (apex_reloader_foreach(r, origin, info_of, &info) != APEX_OK || info.file == NULL)
		goto out;
	old = apex_server_served_version(server, origin);
	if (old == NULL)
		goto out;
	if (apex_journals_replay_sets(js, origin, old->serial,
				      info.secondary ? APEX_REPLAY_SECONDARY : APEX_REPLAY_PRIMARY,
				      &sets, &count, err, sizeof(err)) < 0)
		apex_warning("zone %s: the journal is not replayed: %s", info.name, err);
	if (count > 0)
		done = replay(r, &info, old, sets, count, at_start);
out:
	apex_journal_sets_free(sets, count);
	apex_zone_unref(old); /* the new version holds it while derived from it */
	free(info.file);
	return done;
}
