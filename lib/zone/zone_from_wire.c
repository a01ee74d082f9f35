/* SPDX-License-Identifier: BSD-3-Clause */
/* A zone version from records in wire form (see zone_from_wire.h). */
#include "zone/zone_from_wire.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "zone/derive.h"
#include "zone/file_map.h"
#include "zone/version_build.h"
#include "zone/zone_file_reader.h"

struct apex_zone_from_wire {
	apex_version_build_t v;
	apex_loader_t ld;
	apex_sink_t *sink;
	apex_reader_t r;
	int records;                              /* added so far: the "line" of messages */
	uint8_t wire[APEX_NAME_MAX + 10 + 65535]; /* one record, for ldns */
};

int apex_zone_from_wire_begin(apex_zone_from_wire_t **out, const uint8_t *origin,
			      const char *source, char *err, size_t err_size)
{
	/* all but the record buffer zeroed: 64 KiB written before it is read,
	 * for each of thousands of small zones transferred at once */
	apex_zone_from_wire_t *w = malloc(sizeof(*w));
	uint16_t file_index;

	*out = NULL;
	if (w == NULL)
		return APEX_ENOMEM;
	memset(w, 0, offsetof(apex_zone_from_wire_t, wire));
	int rc = apex_version_begin(&w->v, origin, source, err, err_size);
	if (rc != APEX_OK) {
		free(w);
		return rc;
	}
	w->v.b.table_spare = true; /* a secondary's: IXFRs are derived from it */
	w->ld.b = &w->v.b;
	w->ld.sinks = &w->sink;
	w->sink = apex_sink_new();
	if (w->sink == NULL || apex_loader_add_file(&w->ld, source, &file_index) != APEX_OK) {
		apex_zone_from_wire_abort(w);
		return APEX_ENOMEM;
	}
	w->ld.sink_count = 1;
	w->r = (apex_reader_t){ .ld = &w->ld,
				.sink = w->sink,
				.path = w->v.b.files[file_index],
				.file_index = file_index,
				.err = err,
				.err_size = err_size };
	memcpy(w->r.origin, origin, apex_name_size(origin));
	*out = w;
	return APEX_OK;
}

/* One record, its RDATA borrowed where the fast reader takes it (the
 * RDATA as given reaches the sink), copied where ldns reads it. */
static int add(apex_zone_from_wire_t *w, const uint8_t *owner, uint16_t type, uint32_t ttl,
	       const uint8_t *rdata, uint16_t rdlength, bool borrowed)
{
	size_t n = apex_name_size(owner), pos = 0;
	ldns_rr *rr = NULL;

	w->records++;
	w->sink->rdata_borrowed = borrowed;
	int rc = apex_record_store_wire(&w->r, w->records, owner, type, ttl, rdata, rdlength);
	w->sink->rdata_borrowed = false;
	if (rc != APEX_EINVAL)
		return rc;
	memcpy(w->wire, owner, n);
	apex_write_u16(w->wire + n, type);
	apex_write_u16(w->wire + n + 2, APEX_CLASS_IN);
	apex_write_u32(w->wire + n + 4, ttl);
	apex_write_u16(w->wire + n + 8, rdlength);
	memcpy(w->wire + n + 10, rdata, rdlength);
	/* ldns reads the RDATA by its description of the type */
	ldns_status status =
		ldns_wire2rr(&rr, w->wire, n + 10 + rdlength, &pos, LDNS_SECTION_ANSWER);
	if (status != LDNS_STATUS_OK)
		return status == LDNS_STATUS_MEM_ERR
			       ? APEX_ENOMEM
			       : apex_reader_fail(&w->r, w->records, "type %u: bad RDATA (%s)",
						  type, ldns_get_errorstr_by_id(status));
	rc = pos == n + 10 + rdlength
		     ? apex_record_store_ldns(&w->r, w->records, rr)
		     : apex_reader_fail(&w->r, w->records, "type %u: RDATA longer than it reads",
					type);
	ldns_rr_free(rr);
	return rc;
}

int apex_zone_from_wire_add(apex_zone_from_wire_t *w, const uint8_t *owner, uint16_t type,
			    uint32_t ttl, const uint8_t *rdata, uint16_t rdlength)
{
	return add(w, owner, type, ttl, rdata, rdlength, false);
}

int apex_zone_from_wire_add_borrowed(apex_zone_from_wire_t *w, const uint8_t *owner, uint16_t type,
				     uint32_t ttl, const uint8_t *rdata, uint16_t rdlength)
{
	w->v.b.rdata_borrowed = true;
	return add(w, owner, type, ttl, rdata, rdlength, true);
}

int apex_zone_from_wire_reserve(apex_zone_from_wire_t *w, size_t records, size_t owners)
{
	int rc = apex_sink_reserve(w->sink, records);

	return rc == APEX_OK ? apex_sink_reserve_owners(w->sink, owners) : rc;
}

void apex_zone_from_wire_give_way(apex_zone_from_wire_t *w, apex_give_way_fn give_way, void *ctx)
{
	w->v.b.give_way = give_way;
	w->v.b.give_way_ctx = ctx;
}

int apex_zone_from_wire_finish(apex_zone_from_wire_t *w, apex_zone_t **out)
{
	int rc = apex_version_finish(&w->v, &w->sink, 1, out);
	apex_reader_free(&w->r);
	apex_sink_free(w->sink);
	free(w);
	return rc;
}

int apex_zone_from_wire_derive(apex_zone_from_wire_t *w, apex_zone_t *old,
			       const apex_derive_owners_t *owners, apex_zone_t **out)
{
	int rc = apex_version_derive(&w->v, w->sink, old, owners, out);
	apex_reader_free(&w->r);
	apex_sink_free(w->sink);
	free(w);
	return rc;
}

void apex_zone_from_wire_abort(apex_zone_from_wire_t *w)
{
	apex_version_abort(&w->v);
	apex_reader_free(&w->r);
	if (w->sink != NULL)
		apex_sink_free(w->sink);
	free(w);
}
