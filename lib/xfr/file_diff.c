/* SPDX-License-Identifier: BSD-3-Clause */
/* A zone file compared with the version served (file_diff.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/file_diff.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "xfr/version_records.h"
#include "zone/derive.h"
#include "zone/load.h"

/* The SOA RDATA a file may give and be compared here (two names and 20
 * bytes); a longer one is left to a whole load. */
#define SOA_RDATA_MAX (2 * APEX_NAME_MAX + 20)

/* Past old->record_count / ADDITIONS_SHARE + ADDITIONS_FLOOR records not
 * in old, the change is most of a zone: its set and the version built
 * from it would take more than a whole load of the file, which is made
 * instead (the parse stops there). */
#define ADDITIONS_SHARE 4
#define ADDITIONS_FLOOR 4096

typedef struct file_diff {
	const apex_zone_t *old;
	/* by node id: the index of the node's first record among the bits
	 * (its records in apex_node_records() order) */
	uint32_t *first;
	size_t id_limit;
	_Atomic uint64_t *seen; /* one bit per record of old */
	size_t records;
	/* the file's SOA: claimed by the first parser thread to meet one */
	atomic_uint soa_count;
	uint8_t soa_owner[APEX_NAME_MAX]; /* the apex as the file spells it */
	uint32_t soa_ttl;
	uint16_t soa_rdlength;
	uint8_t soa_rdata[SOA_RDATA_MAX];
	atomic_bool whole;                      /* a SOA the comparison cannot take */
	atomic_size_t additions, additions_max; /* records kept so far, and the bound */
	atomic_size_t added_bytes;              /* their size in the set */
	apex_changes_t *out;                    /* the set, written once the file is parsed */
} file_diff_t;

/* ------------------------------------------------------------ indexing */

/* The two arrays of the comparison are mapped apart from the allocator's
 * memory: the system's small pages, never a huge page made resident by
 * a byte written to it, and all of it given back when they are unmapped. */
static void *map_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void unmap(void *p, size_t size)
{
	if (p != NULL)
		munmap(p, size);
}

static size_t first_size(const file_diff_t *d)
{
	return (d->id_limit ? d->id_limit : 1) * sizeof(*d->first);
}

static size_t seen_size(const file_diff_t *d)
{
	return (d->records / 64 + 1) * sizeof(*d->seen);
}

static int count_record(void *ctx, const apex_rr_t *rr)
{
	(void)rr;
	(*(size_t *)ctx)++;
	return APEX_OK;
}

/* Every node of old, the name index's then the owners of NSEC3 records only. */
static const apex_node_t *node_at(const apex_zone_t *old, size_t i)
{
	return i < old->node_count ? apex_zone_node_at(old, i)
				   : apex_zone_nsec3_owner_at(old, i - old->node_count);
}

/* The bit of every node's first record (d->first), and the bitset. */
static int index_records(file_diff_t *d)
{
	const apex_zone_t *old = d->old;
	size_t nodes = old->node_count + old->nsec3_owner_count, total = 0;

	d->id_limit = 0;
	for (size_t i = 0; i < nodes; i++) {
		uint32_t id = apex_node_id(node_at(old, i));

		if ((size_t)id + 1 > d->id_limit)
			d->id_limit = (size_t)id + 1;
	}
	d->first = map_zeroed(first_size(d));
	if (d->first == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < nodes; i++) {
		const apex_node_t *n = node_at(old, i);

		if (total > UINT32_MAX)
			return APEX_ENOMEM;
		d->first[apex_node_id(n)] = (uint32_t)total;
		apex_node_records(old, n, count_record, &total);
	}
	d->records = total;
	d->seen = map_zeroed(seen_size(d));
	return d->seen != NULL ? APEX_OK : APEX_ENOMEM;
}

/* ------------------------------------------------------------ the parse */

/* A record of the file looked for among a node's. */
typedef struct probe {
	uint16_t type;
	uint32_t ttl;
	const uint8_t *rdata;
	size_t rdlength;
	size_t index; /* records of the node passed so far */
} probe_t;

#define PROBE_FOUND 1 /* ends apex_node_records() at the match */

static int match_record(void *ctx, const apex_rr_t *rr)
{
	probe_t *p = ctx;

	if (rr->type == p->type && rr->ttl == p->ttl && rr->rdlength == p->rdlength &&
	    memcmp(rr->rdata, p->rdata, p->rdlength) == 0)
		return PROBE_FOUND;
	p->index++;
	return APEX_OK;
}

/* The file's SOA noted (dropped: the change set places it). */
static int note_soa(file_diff_t *d, const uint8_t *owner, uint32_t ttl, const uint8_t *rdata,
		    size_t rdlength)
{
	if (atomic_fetch_add(&d->soa_count, 1) != 0 || rdlength > SOA_RDATA_MAX ||
	    !apex_name_equal(owner, d->old->origin)) {
		atomic_store(&d->whole, true);
		return 1;
	}
	memcpy(d->soa_owner, owner, apex_name_size(owner));
	d->soa_ttl = ttl;
	d->soa_rdlength = (uint16_t)rdlength;
	memcpy(d->soa_rdata, rdata, rdlength);
	return 1;
}

/* The loader's drop (zone/load.h): 1 for a record old holds, marked seen. */
static int drop_held(void *ctx, const uint8_t *owner, uint16_t type, uint32_t ttl,
		     const uint8_t *rdata, size_t rdlength)
{
	file_diff_t *d = ctx;

	if (type == APEX_TYPE_SOA)
		return note_soa(d, owner, ttl, rdata, rdlength);
	const apex_node_t *n = apex_zone_find_owner(d->old, owner, NULL);
	size_t size = apex_name_size(owner);

	/* another spelling of the owner: served as the file spells it */
	probe_t p = { type, ttl, rdata, rdlength, 0 };
	if (n == NULL || n->name_size != size || memcmp(n->name, owner, size) != 0 ||
	    apex_node_records(d->old, n, match_record, &p) != PROBE_FOUND) {
		atomic_fetch_add(&d->added_bytes, size + 10 + rdlength);
		return atomic_fetch_add(&d->additions, 1) < d->additions_max ? 0 : APEX_ENOTSUP;
	}
	size_t bit = (size_t)d->first[apex_node_id(n)] + p.index;
	atomic_fetch_or_explicit(&d->seen[bit / 64], (uint64_t)1 << (bit % 64),
				 memory_order_relaxed);
	return 1;
}

/* The loader's restart: nothing seen yet. */
static void restart(void *ctx)
{
	file_diff_t *d = ctx;

	memset((void *)d->seen, 0, seen_size(d));
	atomic_store(&d->soa_count, 0);
	atomic_store(&d->additions, 0);
	atomic_store(&d->added_bytes, 0);
	atomic_store(&d->whole, false);
}

static int append_soa(apex_changes_t *c, apex_change_kind_t kind, const apex_zone_t *zone)
{
	apex_rr_t rr = { zone->apex->name,
			 APEX_TYPE_SOA,
			 APEX_CLASS_IN,
			 zone->soa->ttl,
			 apex_read_u16(zone->soa->rdata),
			 zone->soa->rdata + 2 };

	return apex_changes_append(c, kind, &rr);
}

static int append_file_soa(apex_changes_t *c, const file_diff_t *d)
{
	apex_rr_t rr = { d->soa_owner, APEX_TYPE_SOA,   APEX_CLASS_IN,
			 d->soa_ttl,   d->soa_rdlength, d->soa_rdata };

	return apex_changes_append(c, APEX_CHANGE_NEW_SOA, &rr);
}

/* A walk of old's records, the unmarked ones appended as removals. */
typedef struct removals {
	const file_diff_t *d;
	apex_changes_t *out; /* NULL: the size of the removals is counted */
	size_t bit, bytes;
} removals_t;

static int remove_unseen(void *ctx, const apex_rr_t *rr)
{
	removals_t *w = ctx;
	size_t bit = w->bit++;

	if (atomic_load_explicit(&w->d->seen[bit / 64], memory_order_relaxed) &
	    ((uint64_t)1 << (bit % 64)))
		return APEX_OK;
	if (w->out == NULL) { /* sizing the set */
		w->bytes += apex_changes_rr_size(rr);
		return APEX_OK;
	}
	return apex_changes_append(w->out, APEX_CHANGE_REMOVE, rr);
}

/* The removals (w->out NULL: their size, in w->bytes). */
static int walk_removals(const file_diff_t *d, removals_t *w)
{
	const apex_zone_t *old = d->old;
	size_t nodes = old->node_count + old->nsec3_owner_count;
	int rc = APEX_OK;

	for (size_t i = 0; i < nodes && rc == APEX_OK; i++) {
		const apex_node_t *n = node_at(old, i);

		w->bit = d->first[apex_node_id(n)];
		rc = apex_node_records(old, n, remove_unseen, w);
	}
	return rc;
}

/* Once the file is parsed: old's SOA, the removals and the file's SOA
 * open the set; the additions follow.  The set is given its size first:
 * grown by doubling, a large one would take twice its size. */
static int open_set(file_diff_t *d)
{
	removals_t size = { d, NULL, 0, 2 * (d->old->apex->name_size + 10 + SOA_RDATA_MAX) };
	removals_t w = { d, d->out, 0, 0 };
	int rc = walk_removals(d, &size);

	if (rc == APEX_OK)
		rc = apex_changes_reserve(d->out, size.bytes + atomic_load(&d->added_bytes));
	if (rc == APEX_OK)
		rc = append_soa(d->out, APEX_CHANGE_OLD_SOA, d->old);
	if (rc == APEX_OK)
		rc = walk_removals(d, &w);
	return rc == APEX_OK ? append_file_soa(d->out, d) : rc;
}

/* Whether the comparison holds: one SOA, at the apex. */
static bool comparable(const file_diff_t *d)
{
	return atomic_load(&d->soa_count) == 1 && !atomic_load(&d->whole);
}

/* The loader's kept (called once the whole file is parsed): an addition,
 * after the removals (open_set()). */
static int keep_added(void *ctx, const uint8_t *owner, uint16_t type, uint32_t ttl,
		      const uint8_t *rdata, size_t rdlength)
{
	file_diff_t *d = ctx;
	apex_rr_t rr = { owner, type, APEX_CLASS_IN, ttl, (uint16_t)rdlength, rdata };

	if (!comparable(d))
		return APEX_OK; /* a whole load instead */
	if (d->out->next == APEX_CHANGE_OLD_SOA) {
		int rc = open_set(d);

		if (rc != APEX_OK)
			return rc;
	}
	return apex_changes_append(d->out, APEX_CHANGE_ADD, &rr);
}

/* The file's SOA is old's, byte for byte, TTL and the apex's spelling included. */
static bool same_soa(const file_diff_t *d)
{
	const apex_rrset_t *soa = d->old->soa;

	return soa->ttl == d->soa_ttl && apex_name_size(d->soa_owner) == d->old->apex->name_size &&
	       memcmp(d->soa_owner, d->old->apex->name, d->old->apex->name_size) == 0 &&
	       apex_read_u16(soa->rdata) == d->soa_rdlength &&
	       memcmp(soa->rdata + 2, d->soa_rdata, d->soa_rdlength) == 0;
}

int apex_file_diff(const apex_zone_t *old, const char *file, apex_changes_t *out,
		   apex_file_diff_result_t *result, apex_file_digest_t *digest, char *err,
		   size_t err_size)
{
	file_diff_t *d = calloc(1, sizeof(*d));
	int rc;

	*result = APEX_FILE_DIFF_WHOLE;
	if (digest != NULL)
		digest->valid = false;
	if (err_size > 0)
		err[0] = '\0';
	if (d == NULL)
		return APEX_ENOMEM;
	d->old = old;
	d->out = out;
	d->additions_max = old->record_count / ADDITIONS_SHARE + ADDITIONS_FLOOR;
	rc = index_records(d);
	if (rc == APEX_OK) {
		apex_load_filter_t filter = { drop_held, restart, keep_added, d };

		rc = apex_zone_load_filtered(file, old->origin, &filter, digest, err, err_size);
	}
	if (rc == APEX_ENOTSUP) { /* more added than a whole load would take */
		rc = APEX_OK;
		atomic_store(&d->whole, true);
		if (err_size > 0)
			err[0] = '\0';
	}
	if (rc == APEX_OK && comparable(d)) {
		if (out->next == APEX_CHANGE_OLD_SOA) /* no addition */
			rc = open_set(d);
		if (rc == APEX_OK)
			*result = out->removed == 0 && out->added == 0 && same_soa(d)
					  ? APEX_FILE_DIFF_SAME
					  : APEX_FILE_DIFF_CHANGED;
	}
	unmap(d->first, first_size(d));
	unmap((void *)d->seen, seen_size(d));
	free(d);
	return rc;
}
