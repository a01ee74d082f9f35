/* SPDX-License-Identifier: BSD-3-Clause */
/* ZONEMD digests and their verification (zonemd.h). */
#include "zonemd/zonemd.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"
#include "zonemd/canonical_rdata.h"

#define BATCH 65536 /* bytes handed to the hash at a time */

/* One record of an RRset being digested, its RDATA in canonical form. */
typedef struct entry {
	const uint8_t *rdata;
	uint16_t size;
	uint32_t ttl;
} entry_t;

typedef struct digest_ctx {
	const apex_zone_t *zone;
	EVP_MD_CTX *md;
	uint8_t *batch; /* BATCH bytes, of which used are waiting */
	size_t used;
	uint8_t *scratch; /* canonical RDATA of the RRset at hand */
	size_t scratch_capacity;
	entry_t *entries;
	size_t entry_capacity;
	bool failed; /* the hash failed */
} digest_ctx_t;

static void flush(digest_ctx_t *c)
{
	if (c->used > 0 && EVP_DigestUpdate(c->md, c->batch, c->used) != 1)
		c->failed = true;
	c->used = 0;
}

static void put(digest_ctx_t *c, const uint8_t *p, size_t size)
{
	if (c->used + size > BATCH) {
		flush(c);
		if (size > BATCH) {
			if (EVP_DigestUpdate(c->md, p, size) != 1)
				c->failed = true;
			return;
		}
	}
	memcpy(c->batch + c->used, p, size);
	c->used += size;
}

/* One record: owner (lowercased), type, class IN, TTL, RDLENGTH, RDATA. */
static void put_rr(digest_ctx_t *c, const uint8_t *owner, size_t owner_size, uint16_t type,
		   const entry_t *e)
{
	uint8_t fixed[10];

	apex_write_u16(fixed, type);
	apex_write_u16(fixed + 2, 1);
	apex_write_u32(fixed + 4, e->ttl);
	apex_write_u16(fixed + 8, e->size);
	put(c, owner, owner_size);
	put(c, fixed, sizeof(fixed));
	put(c, e->rdata, e->size);
}

static int compare_entries(const void *a, const void *b)
{
	const entry_t *x = a, *y = b;
	int cmp = memcmp(x->rdata, y->rdata, x->size < y->size ? x->size : y->size);

	return cmp != 0 ? cmp : (x->size > y->size) - (x->size < y->size);
}

/* Room for count more entries and size more bytes of canonical RDATA. */
static int reserve(digest_ctx_t *c, size_t count, size_t size)
{
	if (count > c->entry_capacity) {
		entry_t *grown = realloc(c->entries, count * sizeof(*grown));

		if (grown == NULL)
			return APEX_ENOMEM;
		c->entries = grown;
		c->entry_capacity = count;
	}
	if (size > c->scratch_capacity) {
		uint8_t *grown = realloc(c->scratch, size);

		if (grown == NULL)
			return APEX_ENOMEM;
		c->scratch = grown;
		c->scratch_capacity = size;
	}
	return APEX_OK;
}

/* Append the records of rs to c->entries[*n..] in canonical form, at
 * c->scratch + *at (room reserved by the caller). */
static void add_records(digest_ctx_t *c, const apex_rrset_t *rs, size_t *n, size_t *at)
{
	const uint8_t *p = rs->rdata;

	for (uint16_t i = 0; i < rs->count; i++) {
		uint16_t size = apex_read_u16(p);
		uint8_t *out = c->scratch + *at;

		apex_canonical_rdata(rs->type, p + 2, size, out);
		c->entries[(*n)++] = (entry_t){ out, size, rs->ttl };
		*at += size;
		p += 2u + size;
	}
}

/* The RRSIG RRset of node n (all its RRSIGs, each with its own TTL, the
 * stray ones of zone.h included), those covering the apex ZONEMD RRset
 * left out. */
/* The i-th RRSIG set of node n: its RRsets' RRSIGs, then its stray ones;
 * NULL for none, or for those of the apex ZONEMD RRset (RFC 8976 3.3.1). */
static const apex_rrset_t *sig_set(const apex_zone_t *zone, const apex_node_t *n,
				   const apex_stray_rrsig_t *stray, size_t i, bool apex)
{
	if (i >= n->rrset_count) {
		const apex_rrset_t *sigs = stray[i - n->rrset_count].sigs;
		bool zonemd = apex_read_u16(sigs->rdata + 2) == APEX_TYPE_ZONEMD;

		return apex && zonemd ? NULL : sigs;
	}
	if (apex && apex_node_rrsets(zone, n)[i].type == APEX_TYPE_ZONEMD)
		return NULL;
	return apex_node_rrsets(zone, n)[i].rrsig;
}

static int put_rrsigs(digest_ctx_t *c, const uint8_t *owner, size_t owner_size,
		      const apex_node_t *n, bool apex)
{
	size_t count = 0, size = 0, used = 0, at = 0, strays;
	const apex_stray_rrsig_t *stray = apex_zone_stray_rrsigs(c->zone, n, &strays);

	for (size_t i = 0; i < n->rrset_count + strays; i++) {
		const apex_rrset_t *sig = sig_set(c->zone, n, stray, i, apex);

		if (sig != NULL) {
			count += sig->count;
			size += sig->rdata_size;
		}
	}
	if (count == 0)
		return APEX_OK;
	if (reserve(c, count, size) < 0)
		return APEX_ENOMEM;
	for (size_t i = 0; i < n->rrset_count + strays; i++) {
		const apex_rrset_t *sig = sig_set(c->zone, n, stray, i, apex);

		if (sig != NULL)
			add_records(c, sig, &used, &at);
	}
	qsort(c->entries, used, sizeof(*c->entries), compare_entries);
	for (size_t i = 0; i < used; i++)
		put_rr(c, owner, owner_size, APEX_TYPE_RRSIG, &c->entries[i]);
	return APEX_OK;
}

static int put_rrset(digest_ctx_t *c, const uint8_t *owner, size_t owner_size,
		     const apex_rrset_t *rs)
{
	size_t used = 0, at = 0;

	if (reserve(c, rs->count, rs->rdata_size) < 0)
		return APEX_ENOMEM;
	add_records(c, rs, &used, &at);
	if (used > 1)
		qsort(c->entries, used, sizeof(*c->entries), compare_entries);
	for (size_t i = 0; i < used; i++)
		put_rr(c, owner, owner_size, rs->type, &c->entries[i]);
	return APEX_OK;
}

/* Every record of node n, its RRsets in type order, the RRSIGs in theirs. */
static int put_node(digest_ctx_t *c, const apex_node_t *n)
{
	uint8_t owner[APEX_NAME_MAX];
	size_t owner_size = n->name_size;
	bool apex = n == c->zone->apex, sigs = false;
	int rc = APEX_OK;

	memcpy(owner, n->name, owner_size);
	apex_name_lower(owner);
	for (uint16_t i = 0; i < n->rrset_count && rc == APEX_OK; i++) {
		const apex_rrset_t *rs = &apex_node_rrsets(c->zone, n)[i];

		if (!sigs && rs->type > APEX_TYPE_RRSIG) {
			sigs = true;
			rc = put_rrsigs(c, owner, owner_size, n, apex);
		}
		if (rc == APEX_OK && !(apex && rs->type == APEX_TYPE_ZONEMD))
			rc = put_rrset(c, owner, owner_size, rs);
	}
	if (rc == APEX_OK && !sigs)
		rc = put_rrsigs(c, owner, owner_size, n, apex);
	return rc;
}

/* The names of the index and the NSEC3 owners, merged in canonical order. */
static int put_zone(digest_ctx_t *c)
{
	const apex_zone_t *z = c->zone;
	size_t i = 0, j = 0;
	int rc = APEX_OK;

	while (rc == APEX_OK && (i < z->node_count || j < z->nsec3_owner_count)) {
		const apex_node_t *a = i < z->node_count ? apex_zone_node_at(z, i) : NULL;
		const apex_node_t *b =
			j < z->nsec3_owner_count ? apex_zone_nsec3_owner_at(z, j) : NULL;

		if (b == NULL ||
		    (a != NULL && apex_key_compare(apex_node_key(a), a->key_size, apex_node_key(b),
						   b->key_size) < 0)) {
			rc = put_node(c, a);
			i++;
		} else {
			rc = put_node(c, b);
			j++;
		}
	}
	return rc;
}

int apex_zonemd_digest(const apex_zone_t *zone, uint8_t algorithm, uint8_t *digest, size_t *size)
{
	const EVP_MD *type = algorithm == APEX_ZONEMD_SHA384   ? EVP_sha384()
			     : algorithm == APEX_ZONEMD_SHA512 ? EVP_sha512()
							       : NULL;
	digest_ctx_t c = { .zone = zone };
	unsigned int n = 0;
	int rc;

	if (type == NULL)
		return APEX_EINVAL;
	c.md = EVP_MD_CTX_new();
	c.batch = malloc(BATCH);
	if (c.md == NULL || c.batch == NULL || EVP_DigestInit_ex(c.md, type, NULL) != 1) {
		rc = APEX_ENOMEM;
	} else {
		rc = put_zone(&c);
		flush(&c);
		if (rc == APEX_OK && (c.failed || EVP_DigestFinal_ex(c.md, digest, &n) != 1))
			rc = APEX_ENOMEM; /* the hash fails only for want of memory */
	}
	*size = n;
	EVP_MD_CTX_free(c.md);
	free(c.batch);
	free(c.scratch);
	free(c.entries);
	return rc;
}

static const char *algorithm_name(uint8_t algorithm)
{
	return algorithm == APEX_ZONEMD_SHA384 ? "SHA-384" : "SHA-512";
}

static void hex(const uint8_t *p, size_t size, char *out)
{
	for (size_t i = 0; i < size; i++)
		snprintf(out + 2 * i, 3, "%02X", p[i]);
	out[2 * size] = '\0';
}

/* Whether a record's RDATA is a ZONEMD of a supported scheme and hash. */
static bool supported(const uint8_t *rdata, uint16_t size)
{
	return size >= 6 && rdata[4] == APEX_ZONEMD_SCHEME_SIMPLE &&
	       (rdata[5] == APEX_ZONEMD_SHA384 || rdata[5] == APEX_ZONEMD_SHA512);
}

/* Check one supported ZONEMD record against the digests (computed on
 * first use into digests[algorithm]): *match, and what was found in
 * res->detail (why not, when it does not match).  Returns APEX_OK or
 * APEX_ENOMEM. */
static int check_record(const apex_zone_t *zone, const uint8_t *rdata, uint16_t size,
			uint8_t digests[3][APEX_ZONEMD_DIGEST_MAX], size_t lengths[3],
			apex_zonemd_result_t *res, bool *match)
{
	uint8_t algorithm = rdata[5];
	uint32_t serial = apex_read_u32(rdata);
	size_t want = algorithm == APEX_ZONEMD_SHA384 ? 48 : 64;
	char theirs[2 * APEX_ZONEMD_DIGEST_MAX + 1], ours[2 * APEX_ZONEMD_DIGEST_MAX + 1];

	*match = false;
	if (serial != zone->serial) {
		snprintf(res->detail, sizeof(res->detail),
			 "ZONEMD serial %u is not the SOA serial %u (RFC 8976 section 4)", serial,
			 zone->serial);
		return APEX_OK;
	}
	if (size - 6u != want) {
		snprintf(res->detail, sizeof(res->detail),
			 "ZONEMD %s digest of %u bytes (%zu expected)", algorithm_name(algorithm),
			 size - 6u, want);
		return APEX_OK;
	}
	if (lengths[algorithm] == 0) {
		int rc = apex_zonemd_digest(zone, algorithm, digests[algorithm],
					    &lengths[algorithm]);

		if (rc < 0)
			return rc;
	}
	if (memcmp(digests[algorithm], rdata + 6, want) == 0) {
		*match = true;
		res->algorithm = algorithm;
		snprintf(res->detail, sizeof(res->detail), "ZONEMD verified (%s, serial %u)",
			 algorithm_name(algorithm), serial);
		return APEX_OK;
	}
	hex(rdata + 6, want, theirs);
	hex(digests[algorithm], want, ours);
	snprintf(res->detail, sizeof(res->detail),
		 "ZONEMD digest mismatch (%s): the zone's record has %s, its data gives %s",
		 algorithm_name(algorithm), theirs, ours);
	return APEX_OK;
}

int apex_zonemd_verify(const apex_zone_t *zone, apex_zonemd_result_t *res)
{
	const apex_rrset_t *rs = apex_node_rrset(zone, zone->apex, APEX_TYPE_ZONEMD);
	uint8_t digests[3][APEX_ZONEMD_DIGEST_MAX];
	size_t lengths[3] = { 0, 0, 0 };
	bool seen[3] = { false, false, false };
	const uint8_t *p;
	size_t usable = 0;

	memset(res, 0, sizeof(*res));
	if (rs == NULL) {
		res->status = APEX_ZONEMD_ABSENT;
		snprintf(res->detail, sizeof(res->detail), "no ZONEMD record at the apex");
		return APEX_OK;
	}
	/* RFC 8976 section 2.4: one record per scheme and hash algorithm */
	p = rs->rdata;
	for (uint16_t i = 0; i < rs->count; i++, p += 2u + apex_read_u16(p)) {
		if (!supported(p + 2, apex_read_u16(p)))
			continue;
		if (seen[p[2 + 5]]) {
			res->status = APEX_ZONEMD_FAILED;
			snprintf(res->detail, sizeof(res->detail),
				 "two ZONEMD records with scheme SIMPLE and hash %s (RFC 8976 "
				 "section 2.4)",
				 algorithm_name(p[2 + 5]));
			return APEX_OK;
		}
		seen[p[2 + 5]] = true;
		usable++;
	}
	if (usable == 0) {
		res->status = APEX_ZONEMD_UNSUPPORTED;
		snprintf(res->detail, sizeof(res->detail),
			 "ZONEMD with no supported scheme and hash algorithm (SIMPLE with SHA-384 "
			 "or SHA-512): not verified");
		return APEX_OK;
	}
	p = rs->rdata;
	for (uint16_t i = 0; i < rs->count; i++, p += 2u + apex_read_u16(p)) {
		bool match;

		if (!supported(p + 2, apex_read_u16(p)))
			continue;
		int rc = check_record(zone, p + 2, apex_read_u16(p), digests, lengths, res, &match);
		if (rc < 0)
			return rc;
		if (match) {
			res->status = APEX_ZONEMD_VERIFIED;
			return APEX_OK;
		}
	}
	res->status = APEX_ZONEMD_FAILED;
	return APEX_OK;
}
