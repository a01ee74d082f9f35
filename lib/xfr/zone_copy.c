/* SPDX-License-Identifier: BSD-3-Clause */
/* A secondary's copy of a zone on disk (zone_copy.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/zone_copy.h"

#include <errno.h>
#include <ldns/ldns.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
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

int apex_zone_copy_begin(apex_zone_copy_t *c, const char *path, const char *header, char *err,
			 size_t err_size)
{
	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	c->tmp_path = malloc(strlen(path) + 5);
	c->text = malloc(APEX_RECORD_TEXT_MAX);
	if (c->path == NULL || c->tmp_path == NULL || c->text == NULL) {
		release(c);
		snprintf(err, err_size, "out of memory");
		return APEX_ENOMEM;
	}
	sprintf(c->tmp_path, "%s.xfr", path);
	c->fp = fopen(c->tmp_path, "w");
	if (c->fp == NULL) {
		int rc = apex_errno();

		snprintf(err, err_size, "%s: %s", c->tmp_path, strerror(errno));
		release(c);
		return rc;
	}
	fprintf(c->fp, "; %s\n", header);
	return APEX_OK;
}

int apex_zone_copy_add(apex_zone_copy_t *c, const apex_rr_t *rr)
{
	uint8_t wire[APEX_NAME_MAX + 10 + 65535];
	size_t owner_size = apex_name_size(rr->owner), pos = 0;
	size_t n = apex_record_text(rr, c->text);
	ldns_rr *lrr = NULL;

	if (n > 0) {
		c->records++;
		return fwrite(c->text, 1, n, c->fp) == n ? APEX_OK : APEX_EIO;
	}
	memcpy(wire, rr->owner, owner_size);
	apex_write_u16(wire + owner_size, rr->type);
	apex_write_u16(wire + owner_size + 2, rr->rclass);
	apex_write_u32(wire + owner_size + 4, rr->ttl);
	apex_write_u16(wire + owner_size + 8, rr->rdlength);
	memcpy(wire + owner_size + 10, rr->rdata, rr->rdlength);
	if (ldns_wire2rr(&lrr, wire, owner_size + 10 + rr->rdlength, &pos, LDNS_SECTION_ANSWER) !=
	    LDNS_STATUS_OK)
		return APEX_EMALFORMED;
	ldns_rr_print(c->fp, lrr);
	ldns_rr_free(lrr);
	c->records++;
	return ferror(c->fp) ? APEX_EIO : APEX_OK;
}

/* apex_zone_copy_add() as an apex_rr_fn (version_records.h). */
static int add_record(void *ctx, const apex_rr_t *rr)
{
	return apex_zone_copy_add(ctx, rr);
}

int apex_zone_copy_version(apex_zone_copy_t *c, const apex_zone_t *zone)
{
	const apex_rrset_t *soa = zone->soa;
	apex_rr_t rr = {
		zone->origin,  APEX_TYPE_SOA, APEX_CLASS_IN, soa->ttl, apex_read_u16(soa->rdata),
		soa->rdata + 2
	};
	int rc = apex_zone_copy_add(c, &rr);

	return rc == APEX_OK ? apex_version_records(zone, add_record, c) : rc;
}

int apex_zone_copy_commit(apex_zone_copy_t *c, char *err, size_t err_size)
{
	int rc = APEX_OK;

	if (fflush(c->fp) != 0 || ferror(c->fp) || fsync(fileno(c->fp)) != 0) {
		rc = errno != 0 ? apex_errno() : APEX_EIO;
		snprintf(err, err_size, "%s: %s", c->tmp_path, strerror(-rc));
	} else if (rename(c->tmp_path, c->path) != 0) {
		rc = apex_errno();
		snprintf(err, err_size, "rename %s to %s: %s", c->tmp_path, c->path,
			 strerror(errno));
	}
	if (rc < 0)
		unlink(c->tmp_path);
	release(c);
	return rc;
}

void apex_zone_copy_abort(apex_zone_copy_t *c)
{
	if (c->tmp_path != NULL)
		unlink(c->tmp_path);
	release(c);
}
