/* SPDX-License-Identifier: BSD-3-Clause */
/* A catalog zone's members read from a zone version (catalog_read.h). */
#include "catalog/catalog_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/rrtype.h"
#include "dns/wire.h"
#include "util/error.h"

#define NAME_TEXT 1100 /* a name in presentation format, every byte escaped */

/* A member node as read, before it is kept. */
typedef struct member_text {
	uint8_t zone[APEX_NAME_MAX];
	uint8_t id[64];
	char group[256];
	uint8_t coo[APEX_NAME_MAX];
	bool has_coo;
} member_text_t;

/* Where a kept member's fields start in the reader's bytes (the bytes
 * move as they grow); coo is NO_COO when it has none. */
typedef struct kept {
	uint32_t zone, id, group, coo;
} kept_t;

#define NO_COO UINT32_MAX

/* One walk over a catalog's member nodes. */
typedef struct reader {
	const apex_zone_t *zone;
	uint8_t zones[APEX_NAME_MAX]; /* zones.$CATZ */
	apex_catalog_skip_fn skip;
	void *ctx;
	kept_t *kept;
	size_t count, capacity;
	uint8_t *bytes;
	size_t used, room;
} reader_t;

/* The node of label (wire: its length byte, then its bytes) below parent, or NULL. */
static const apex_node_t *find_below(const apex_zone_t *zone, const char *label,
				     const uint8_t *parent)
{
	uint8_t name[APEX_NAME_MAX];
	uint8_t key[APEX_KEY_MAX];
	size_t label_size = 1 + (size_t)(uint8_t)label[0];
	size_t parent_size = apex_name_size(parent);

	if (label_size + parent_size > APEX_NAME_MAX)
		return NULL;
	memcpy(name, label, label_size);
	memcpy(name + label_size, parent, parent_size);
	return apex_zone_find(zone, key, apex_name_key(name, key, NULL));
}

/* The RDATA of the i-th record of rrset (i < rrset->count), *size its length. */
static const uint8_t *record_at(const apex_rrset_t *rrset, uint16_t i, uint16_t *size)
{
	const uint8_t *p = rrset->rdata;

	for (; i > 0; i--)
		p += 2 + apex_read_u16(p);
	*size = apex_read_u16(p);
	return p + 2;
}

/* The version's TXT RRset at version.$CATZ holds the string "2". */
static bool is_version_2(const apex_zone_t *zone)
{
	const apex_node_t *node = find_below(zone, "\007version", zone->origin);
	const apex_rrset_t *txt = node != NULL ? apex_node_rrset(zone, node, APEX_TYPE_TXT) : NULL;

	for (uint16_t i = 0; txt != NULL && i < txt->count; i++) {
		uint16_t size;
		const uint8_t *rdata = record_at(txt, i, &size);
		if (size == 2 && rdata[0] == 1 && rdata[1] == '2')
			return true;
	}
	return false;
}

/* Tell the caller that the member node owner is skipped, and why. */
__attribute__((format(printf, 3, 4))) static void skipped(const reader_t *r, const uint8_t *owner,
							  const char *fmt, ...)
{
	char text[NAME_TEXT], reason[NAME_TEXT + 200];
	va_list ap;

	if (r->skip == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	r->skip(r->ctx, apex_name_to_str(owner, text, sizeof(text)), reason);
}

/* The name of a PTR record (rdata, size) lower-cased into out; false if it is not one name. */
static bool ptr_target(const uint8_t *rdata, uint16_t size, uint8_t *out)
{
	if (apex_name_checked_size(rdata, rdata + size) != size)
		return false;
	memcpy(out, rdata, size);
	apex_name_lower(out);
	return true;
}

/* The group property of member node into m->group; false (said why) if it cannot be read. */
static bool read_group(const reader_t *r, const apex_node_t *node, member_text_t *m)
{
	const apex_node_t *group = find_below(r->zone, "\005group", node->name);
	const apex_rrset_t *txt =
		group != NULL ? apex_node_rrset(r->zone, group, APEX_TYPE_TXT) : NULL;
	uint16_t size;

	if (txt == NULL)
		return true;
	if (txt->count != 1) {
		skipped(r, node->name, "group property of %u TXT records, not one", txt->count);
		return false;
	}
	const uint8_t *rdata = record_at(txt, 0, &size);
	if (size == 0 || size != 1 + rdata[0]) {
		skipped(r, node->name, "group property TXT not of one character-string");
		return false;
	}
	if (rdata[0] == 0) {
		skipped(r, node->name, "group property empty");
		return false;
	}
	for (uint16_t i = 1; i < size; i++) {
		uint8_t c = rdata[i];
		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			skipped(r, node->name, "group property with whitespace");
			return false;
		}
		if (c == '\0') {
			skipped(r, node->name, "group property with a NUL byte");
			return false;
		}
	}
	memcpy(m->group, rdata + 1, rdata[0]);
	m->group[rdata[0]] = '\0';
	return true;
}

/* The coo property of member node into m: one PTR record, else none. */
static void read_coo(const reader_t *r, const apex_node_t *node, member_text_t *m)
{
	const apex_node_t *coo = find_below(r->zone, "\003coo", node->name);
	const apex_rrset_t *ptr = coo != NULL ? apex_node_rrset(r->zone, coo, APEX_TYPE_PTR) : NULL;
	uint16_t size;

	if (ptr == NULL || ptr->count != 1)
		return;
	const uint8_t *rdata = record_at(ptr, 0, &size);
	m->has_coo = ptr_target(rdata, size, m->coo);
}

/* size bytes of data appended to r's bytes; where they start, or -1 when
 * out of memory. */
static int64_t keep_bytes(reader_t *r, const void *data, size_t size)
{
	size_t at = r->used;

	if (r->used + size > r->room) {
		size_t room = r->room > 0 ? r->room * 2 : 4096;
		uint8_t *grown;

		while (room < r->used + size)
			room *= 2;
		if (room > NO_COO || (grown = realloc(r->bytes, room)) == NULL)
			return -1;
		r->bytes = grown;
		r->room = room;
	}
	memcpy(r->bytes + at, data, size);
	r->used += size;
	return (int64_t)at;
}

/* m kept: its fields copied to r's bytes. */
static int keep(reader_t *r, const member_text_t *m)
{
	int64_t zone, id, group, coo = NO_COO;

	if (r->count == r->capacity) {
		size_t capacity = r->capacity ? 2 * r->capacity : 16;
		kept_t *grown = realloc(r->kept, capacity * sizeof(*grown));
		if (grown == NULL)
			return APEX_ENOMEM;
		r->kept = grown;
		r->capacity = capacity;
	}
	zone = keep_bytes(r, m->zone, apex_name_size(m->zone));
	id = keep_bytes(r, m->id, 1 + (size_t)m->id[0]);
	group = keep_bytes(r, m->group, strlen(m->group) + 1);
	if (m->has_coo)
		coo = keep_bytes(r, m->coo, apex_name_size(m->coo));
	if (zone < 0 || id < 0 || group < 0 || coo < 0)
		return APEX_ENOMEM;
	r->kept[r->count++] =
		(kept_t){ (uint32_t)zone, (uint32_t)id, (uint32_t)group, (uint32_t)coo };
	return APEX_OK;
}

/* The member of member node node (with its PTR RRset ptr) added, or skipped. */
static int read_member(reader_t *r, const apex_node_t *node, const apex_rrset_t *ptr)
{
	member_text_t m;
	char text[NAME_TEXT];
	uint16_t size;
	memset(&m, 0, sizeof(m));
	if (ptr->count != 1) {
		skipped(r, node->name, "%u PTR records, not one", ptr->count);
		return APEX_OK;
	}
	const uint8_t *rdata = record_at(ptr, 0, &size);
	if (!ptr_target(rdata, size, m.zone)) {
		skipped(r, node->name, "PTR record not a domain name");
		return APEX_OK;
	}
	if (m.zone[0] == 0) {
		skipped(r, node->name, "member zone is the root");
		return APEX_OK;
	}
	if (apex_name_is_subdomain(m.zone, r->zone->origin)) {
		skipped(r, node->name, "member zone %s is the catalog zone or below it",
			apex_name_to_str(m.zone, text, sizeof(text)));
		return APEX_OK;
	}
	uint8_t lower[APEX_NAME_MAX];
	memcpy(lower, node->name, node->name_size);
	apex_name_lower(lower);
	memcpy(m.id, lower, 1 + (size_t)lower[0]);
	if (!read_group(r, node, &m))
		return APEX_OK;
	read_coo(r, node, &m);
	return keep(r, &m);
}

/* Canonical order of two member node labels (length byte, then the label, lower-cased). */
static int label_compare(const uint8_t *a, const uint8_t *b)
{
	int c = memcmp(a + 1, b + 1, a[0] < b[0] ? a[0] : b[0]);

	return c != 0 ? c : (a[0] > b[0]) - (a[0] < b[0]);
}

/* By zone name, then by member node (the labels of one parent). */
static int member_order(const void *a, const void *b)
{
	const apex_catalog_member_t *x = a, *y = b;
	int c = apex_name_compare(x->zone, y->zone);

	return c != 0 ? c : label_compare(x->id, y->id);
}

/* The name of a member node, id.zones.$CATZ, into name. */
static const uint8_t *member_node(const reader_t *r, const uint8_t *id, uint8_t *name)
{
	size_t id_size = 1 + (size_t)id[0];

	memcpy(name, id, id_size);
	memcpy(name + id_size, r->zones, apex_name_size(r->zones));
	return name;
}

/* The members r kept, pointing into its bytes (taken); sorted by zone
 * name, and of several with one zone, the first member node's kept. */
static int sort_members(reader_t *r, apex_catalog_t *out)
{
	uint8_t kept[APEX_NAME_MAX], later[APEX_NAME_MAX];
	char text[NAME_TEXT], kept_text[NAME_TEXT];
	apex_catalog_member_t *members;
	size_t n = 0;

	if (r->count == 0)
		return APEX_OK; /* out stays empty */
	if ((members = malloc(r->count * sizeof(*members))) == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < r->count; i++) {
		const kept_t *k = &r->kept[i];

		members[i] = (apex_catalog_member_t){
			.zone = r->bytes + k->zone,
			.id = r->bytes + k->id,
			.group = (const char *)r->bytes + k->group,
			.coo = k->coo != NO_COO ? r->bytes + k->coo : NULL,
		};
	}
	if (r->count > 1)
		qsort(members, r->count, sizeof(*members), member_order);
	for (size_t i = 0; i < r->count; i++) {
		const apex_catalog_member_t *m = &members[i];
		if (n > 0 && apex_name_equal(m->zone, members[n - 1].zone)) {
			skipped(r, member_node(r, m->id, later),
				"member zone %s already at member node %s",
				apex_name_to_str(m->zone, text, sizeof(text)),
				apex_name_to_str(member_node(r, members[n - 1].id, kept), kept_text,
						 sizeof(kept_text)));
			continue;
		}
		if (n != i)
			members[n] = *m;
		n++;
	}
	out->members = members;
	out->count = n;
	out->bytes = r->bytes;
	r->bytes = NULL;
	return APEX_OK;
}

/* Every member node below zones.$CATZ, in canonical order. */
static int read_members(reader_t *r)
{
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(r->zones, key, NULL);
	int labels = apex_name_labels(r->zones) + 1;

	for (size_t rank = apex_zone_rank(r->zone, key, key_size); rank < r->zone->node_count;
	     rank++) {
		const apex_node_t *node = apex_zone_node_at(r->zone, rank);
		if (node->key_size < key_size || memcmp(apex_node_key(node), key, key_size) != 0)
			break; /* past the names below zones.$CATZ */
		const apex_rrset_t *ptr = apex_node_rrset(r->zone, node, APEX_TYPE_PTR);
		if (node->labels != labels || ptr == NULL)
			continue;
		int rc = read_member(r, node, ptr);
		if (rc != APEX_OK)
			return rc;
	}
	return APEX_OK;
}

int apex_catalog_read(const apex_zone_t *zone, apex_catalog_t *out, apex_catalog_skip_fn skip,
		      void *ctx, char *err, size_t err_size)
{
	char text[NAME_TEXT];
	reader_t r = { .zone = zone, .skip = skip, .ctx = ctx };
	size_t origin_size = apex_name_size(zone->origin);

	out->members = NULL;
	out->count = 0;
	out->bytes = NULL;
	if (!is_version_2(zone))
		return apex_fail(err, err_size, APEX_EINVAL,
				 "no version.%s TXT \"2\": not a catalog zone of schema version 2",
				 apex_name_to_str(zone->origin, text, sizeof(text)));
	if (err != NULL && err_size > 0)
		err[0] = '\0';
	if (1 + 5 + origin_size > APEX_NAME_MAX)
		return APEX_OK; /* no room for zones.$CATZ: no members */
	memcpy(r.zones, "\005zones", 6);
	memcpy(r.zones + 6, zone->origin, origin_size);

	int rc = read_members(&r);
	if (rc == APEX_OK)
		rc = sort_members(&r, out);
	free(r.kept);
	free(r.bytes);
	return rc;
}

void apex_catalog_free(apex_catalog_t *catalog)
{
	if (catalog == NULL)
		return;
	free(catalog->members);
	free(catalog->bytes);
	catalog->members = NULL;
	catalog->count = 0;
	catalog->bytes = NULL;
}

static int find_order(const void *key, const void *member)
{
	return apex_name_compare(key, ((const apex_catalog_member_t *)member)->zone);
}

const apex_catalog_member_t *apex_catalog_find(const apex_catalog_t *catalog, const uint8_t *zone)
{
	if (catalog == NULL || catalog->count == 0)
		return NULL;
	return bsearch(zone, catalog->members, catalog->count, sizeof(*catalog->members),
		       find_order);
}
