/* SPDX-License-Identifier: BSD-3-Clause */
/* A secondary's copy of a zone on disk (zone_copy.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/zone_copy.h"

#include <errno.h>
#include <stdbool.h>
#include <ldns/ldns.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/crash_hook.h"
#include "util/error.h"
#include "xfr/record_text.h"
#include "xfr/version_records.h"

static void release(apex_zone_copy_t *c)
{
	if (c->fp != NULL)
		fclose(c->fp);
	free(c->path);
	free(c->tmp_path);
	free(c->text);
	memset(c, 0, sizeof(*c));
}

/* The copy failed with rc (the first failure is kept): given up, its
 * partial file removed at once.  Returns the copy's failure. */
static int give_up(apex_zone_copy_t *c, int rc)
{
	if (c->error == APEX_OK)
		c->error = rc;
	if (c->fp != NULL) {
		fclose(c->fp); /* its own error is the one kept, or follows from it */
		c->fp = NULL;
		if (c->tmp_path != NULL) /* NULL: a stream (apex_zone_copy_stream()) */
			unlink(c->tmp_path);
	}
	return c->error;
}

/* The copy's failure and its file into err; returns it. */
static int describe(const apex_zone_copy_t *c, char *err, size_t err_size)
{
	return apex_fail(err, err_size, c->error, "%s: %s",
			 c->tmp_path != NULL ? c->tmp_path : "the copy", apex_strerror(c->error));
}

int apex_zone_copy_begin(apex_zone_copy_t *c, const char *path, const char *header, char *err,
			 size_t err_size)
{
	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	c->tmp_path = malloc(strlen(path) + 5);
	c->text = malloc(APEX_RECORD_TEXT_MAX);
	if (c->path == NULL || c->tmp_path == NULL || c->text == NULL) {
		c->error = APEX_ENOMEM;
		return apex_fail(err, err_size, APEX_ENOMEM, "%s: out of memory", path);
	}
	sprintf(c->tmp_path, "%s.xfr", path);
	c->fp = fopen(c->tmp_path, "w");
	if (c->fp == NULL)
		give_up(c, apex_errno());
	else if (fprintf(c->fp, "; %s\n", header) < 0)
		give_up(c, apex_errno());
	return c->error < 0 ? describe(c, err, err_size) : APEX_OK;
}

int apex_zone_copy_stream(apex_zone_copy_t *c, FILE *fp)
{
	memset(c, 0, sizeof(*c));
	c->fp = fp;
	c->text = malloc(APEX_RECORD_TEXT_MAX);
	if (c->text == NULL)
		give_up(c, APEX_ENOMEM);
	return c->error;
}

int apex_zone_copy_close_stream(apex_zone_copy_t *c)
{
	int rc = c->error;

	if (c->fp != NULL && fflush(c->fp) != 0 && rc == APEX_OK)
		rc = apex_errno();
	release(c);
	return rc;
}

/* Write n bytes of text: APEX_OK, or the copy given up with the errno of
 * the write that failed (stdio sets it; a later call could change it). */
static int write_text(apex_zone_copy_t *c, const char *text, size_t n)
{
	if (fwrite(text, 1, n, c->fp) == n)
		return APEX_OK;
	return give_up(c, apex_errno());
}

/* rr as text by ldns (the types record_text.h leaves out). */
static int write_by_ldns(apex_zone_copy_t *c, const apex_rr_t *rr)
{
	uint8_t wire[APEX_NAME_MAX + 10 + 65535];
	size_t owner_size = apex_name_size(rr->owner), pos = 0;
	ldns_rr *lrr = NULL;
	char *text;
	int rc;

	memcpy(wire, rr->owner, owner_size);
	apex_write_u16(wire + owner_size, rr->type);
	apex_write_u16(wire + owner_size + 2, rr->rclass);
	apex_write_u32(wire + owner_size + 4, rr->ttl);
	apex_write_u16(wire + owner_size + 8, rr->rdlength);
	memcpy(wire + owner_size + 10, rr->rdata, rr->rdlength);
	if (ldns_wire2rr(&lrr, wire, owner_size + 10 + rr->rdlength, &pos, LDNS_SECTION_ANSWER) !=
	    LDNS_STATUS_OK)
		return give_up(c, APEX_EMALFORMED);
	text = ldns_rr2str(lrr); /* what ldns_rr_print() writes */
	ldns_rr_free(lrr);
	if (text == NULL)
		return give_up(c, APEX_EMALFORMED); /* it does not convert */
	rc = write_text(c, text, strlen(text));
	free(text);
	return rc;
}

int apex_zone_copy_add(apex_zone_copy_t *c, const apex_rr_t *rr)
{
	size_t n;
	int rc;

	if (c->error < 0)
		return c->error;
	n = apex_record_text(rr, c->text);
	rc = n > 0 ? write_text(c, c->text, n) : write_by_ldns(c, rr);
	if (rc == APEX_OK)
		c->records++;
	if (rc == APEX_OK && c->records == c->half && c->path != NULL &&
	    apex_crash_points_armed()) {
		fflush(c->fp); /* the half written on disk, as a crash finds it */
		apex_crash_at("copy-half-written");
	}
	return rc;
}

/* A copy of a version being written, and what it asks whether to give
 * way (NULL: nothing). */
typedef struct version_copy {
	apex_zone_copy_t *c;
	apex_give_way_fn give_way;
	void *ctx;
} version_copy_t;

/* Whether the copy gives way now (asked every APEX_ZONE_COPY_GIVE_WAY_EVERY
 * records). */
static bool gives_way(const version_copy_t *v)
{
	return v->give_way != NULL && v->c->records % APEX_ZONE_COPY_GIVE_WAY_EVERY == 0 &&
	       v->give_way(v->ctx);
}

/* apex_zone_copy_add() as an apex_rr_fn (version_records.h). */
static int add_record(void *ctx, const apex_rr_t *rr)
{
	version_copy_t *v = ctx;

	if (gives_way(v))
		return give_up(v->c, APEX_ECANCELED);
	return apex_zone_copy_add(v->c, rr);
}

int apex_zone_copy_version_or_give_way(apex_zone_copy_t *c, const apex_zone_t *zone,
				       apex_give_way_fn give_way, void *ctx)
{
	const apex_rrset_t *soa = zone->soa;
	apex_rr_t rr = {
		zone->origin,  APEX_TYPE_SOA, APEX_CLASS_IN, soa->ttl, apex_read_u16(soa->rdata),
		soa->rdata + 2
	};
	version_copy_t v = { c, give_way, ctx };
	int rc = gives_way(&v) ? give_up(c, APEX_ECANCELED) : apex_zone_copy_add(c, &rr);

	c->half = zone->record_count / 2;
	return rc == APEX_OK ? apex_version_records(zone, add_record, &v) : rc;
}

int apex_zone_copy_version(apex_zone_copy_t *c, const apex_zone_t *zone)
{
	return apex_zone_copy_version_or_give_way(c, zone, NULL, NULL);
}

int apex_zone_copy_flush(apex_zone_copy_t *c)
{
	if (c->error == APEX_OK && fflush(c->fp) != 0)
		give_up(c, apex_errno());
	return c->error;
}

/* Flush, sync (unless synced already) and close the file, each checked:
 * only a file whose every byte reached the disk is renamed over FILE.
 * The copy is given up, its file removed, on the first failure. */
static int finish_file(apex_zone_copy_t *c, bool synced)
{
	FILE *fp = c->fp;

	if (fflush(fp) != 0 || (!synced && fsync(fileno(fp)) != 0))
		return give_up(c, apex_errno());
	c->fp = NULL;
	if (fclose(fp) != 0) {
		c->error = apex_errno();
		unlink(c->tmp_path);
	}
	return c->error;
}

/* apex_zone_copy_commit(), the file synced by the caller or not. */
static int commit(apex_zone_copy_t *c, bool synced, char *err, size_t err_size)
{
	int rc = c->error;

	if (rc == APEX_OK && (rc = finish_file(c, synced)) == APEX_OK)
		apex_crash_at("copy-renaming");
	if (rc == APEX_OK && rename(c->tmp_path, c->path) != 0) {
		rc = apex_errno();
		apex_fail(err, err_size, rc, "cannot rename %s to %s: %s", c->tmp_path, c->path,
			  apex_strerror(rc));
		unlink(c->tmp_path);
	} else if (rc < 0) {
		describe(c, err, err_size);
	}
	release(c);
	return rc;
}

int apex_zone_copy_commit(apex_zone_copy_t *c, char *err, size_t err_size)
{
	return commit(c, false, err, err_size);
}

int apex_zone_copy_commit_synced(apex_zone_copy_t *c, char *err, size_t err_size)
{
	return commit(c, true, err, err_size);
}

void apex_zone_copy_abort(apex_zone_copy_t *c)
{
	if (c->fp != NULL)
		unlink(c->tmp_path);
	release(c);
}
