/* SPDX-License-Identifier: BSD-3-Clause */
/* A catalog's members (consumer_internal.h): the lists kept, and which catalog owns each. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "catalog/consumer_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/log.h"

uint8_t *name_dup(const uint8_t *name)
{
	size_t size = apex_name_size(name);
	uint8_t *copy = malloc(size);

	if (copy != NULL)
		memcpy(copy, name, size);
	return copy;
}

int compare_names(const void *a, const void *b)
{
	return apex_name_compare(*(uint8_t *const *)a, *(uint8_t *const *)b);
}

static int compare_members(const void *a, const void *b)
{
	return apex_name_compare(((const member_t *)a)->zone, ((const member_t *)b)->zone);
}

/* By zone, then by their catalogs' place in the configuration. */
static int compare_ranked(const void *a, const void *b)
{
	const member_t *x = a, *y = b;
	int cmp = compare_members(a, b);

	return cmp != 0 ? cmp : (x->rank > y->rank) - (x->rank < y->rank);
}

void member_clear(member_t *m)
{
	free(m->zone);
	free(m->catalog);
	free(m->pattern);
	free(m->group);
	free(m->file);
}

void members_free(member_t *list, size_t count)
{
	for (size_t i = 0; i < count; i++)
		member_clear(&list[i]);
	free(list);
}

/* The member named zone in a list sorted by zone, or NULL. */
member_t *member_find(member_t *list, size_t count, const uint8_t *zone)
{
	member_t key = { .zone = (uint8_t *)zone };

	return count == 0 ? NULL : bsearch(&key, list, count, sizeof(*list), compare_members);
}

bool is_configured(const apexd_catalogs_t *c, const uint8_t *zone)
{
	return c->configured_count > 0 && bsearch(&zone, c->configured, c->configured_count,
						  sizeof(*c->configured), compare_names) != NULL;
}

consumer_t *consumer_find(apexd_catalogs_t *c, const uint8_t *origin)
{
	for (size_t i = 0; i < c->consumer_count; i++)
		if (apex_name_equal(c->consumers[i].origin, origin))
			return &c->consumers[i];
	return NULL;
}

void consumer_clear(consumer_t *k)
{
	free(k->name);
	free(k->pattern);
	apex_catalog_free(&k->catalog);
}

void text_of(const uint8_t *name, char *text, size_t size)
{
	apex_name_to_str(name, text, size);
}

/* ---------------------------------------------------------------- who owns a member */

/* A member entry for m, listed by catalog k. */
static int member_from(member_t *out, const consumer_t *k, size_t rank,
		       const apex_catalog_member_t *m)
{
	memset(out, 0, sizeof(*out));
	out->rank = rank;
	out->zone = name_dup(m->zone);
	out->catalog = name_dup(k->origin);
	memcpy(out->id, m->id, 1 + (size_t)m->id[0]);
	if (m->group[0] != '\0')
		out->group = strdup(m->group);
	if (out->zone == NULL || out->catalog == NULL || (m->group[0] != '\0' && !out->group)) {
		member_clear(out);
		return APEX_ENOMEM;
	}
	return APEX_OK;
}

/* Whether k's entry for zone has a coo property naming the catalog of
 * origin `to`, and that catalog lists zone: the zone moves there (RFC 9432
 * section 4.4.1: only once the new catalog lists it). */
static bool moves_to(apexd_catalogs_t *c, const consumer_t *k, const uint8_t *zone,
		     const uint8_t *to)
{
	const apex_catalog_member_t *entry = apex_catalog_find(&k->catalog, zone);
	const consumer_t *next;

	if (entry == NULL || entry->coo == NULL || (to != NULL && !apex_name_equal(entry->coo, to)))
		return false;
	next = consumer_find(c, entry->coo);
	return next != NULL && next != k && apex_catalog_find(&next->catalog, zone) != NULL;
}

/*
 * Whether catalog k may take zone, which the members in force give to
 * k, to another catalog or to none (RFC 9432 sections 4.4.1 and 5.3).
 */
static bool may_take(apexd_catalogs_t *c, const consumer_t *k, const uint8_t *zone)
{
	const member_t *held = member_find(c->members, c->member_count, zone);
	const consumer_t *owner;
	const apex_catalog_member_t *entry;
	char text[APEX_NAME_MAX * 4 + 1];

	if (is_configured(c, zone)) {
		text_of(zone, text, sizeof(text));
		apex_warning("catalog %s: member %s ignored: a zone of the configuration file",
			     k->name, text);
		return false;
	}
	if (held == NULL)
		return true;
	if (held->catalog == NULL) {
		text_of(zone, text, sizeof(text));
		apex_warning("catalog %s: member %s ignored: a zone apexctl zone-add added",
			     k->name, text);
		return false;
	}
	if (apex_name_equal(held->catalog, k->origin)) {
		if (!moves_to(c, k, zone, NULL))
			return true;
		text_of(zone, text, sizeof(text));
		apex_info("catalog %s: member %s leaves it for the catalog its coo names", k->name,
			  text);
		return false;
	}
	owner = consumer_find(c, held->catalog);
	entry = owner != NULL ? apex_catalog_find(&owner->catalog, zone) : NULL;
	if (entry == NULL)
		return true; /* its owner let it go */
	if (moves_to(c, owner, zone, k->origin))
		return true; /* change of ownership */
	text_of(zone, text, sizeof(text));
	apex_warning("catalog %s: member %s ignored: a member of catalog %s", k->name, text,
		     owner->name);
	return false;
}

bool same_owner(const member_t *a, const member_t *b)
{
	if (a->catalog == NULL || b->catalog == NULL)
		return a->catalog == b->catalog;
	return apex_name_equal(a->catalog, b->catalog);
}

/* An entry for a zone zone-add added, ranked after every catalog's. */
static int member_added(member_t *out, const added_t *a)
{
	memset(out, 0, sizeof(*out));
	out->rank = SIZE_MAX;
	out->zone = name_dup(a->zone);
	out->pattern = strdup(a->pattern);
	if (out->zone == NULL || out->pattern == NULL) {
		member_clear(out);
		return APEX_ENOMEM;
	}
	return APEX_OK;
}

/* The members as the catalogs and zone-add now give them, sorted by zone,
 * into *out. */
int assign(apexd_catalogs_t *c, member_t **out, size_t *count)
{
	size_t total = c->added_count, n = 0, kept = 0;
	member_t *list;

	for (size_t i = 0; i < c->consumer_count; i++)
		total += c->consumers[i].catalog.count;
	if ((list = calloc(total > 0 ? total : 1, sizeof(*list))) == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < c->consumer_count; i++) {
		const consumer_t *k = &c->consumers[i];

		for (size_t j = 0; j < k->catalog.count; j++) {
			if (!may_take(c, k, k->catalog.members[j].zone))
				continue;
			if (member_from(&list[n], k, i, &k->catalog.members[j]) < 0) {
				members_free(list, n);
				return APEX_ENOMEM;
			}
			n++;
		}
	}
	for (size_t i = 0; i < c->added_count; i++) {
		if (is_configured(c, c->added[i].zone))
			continue; /* the file took it: its settings win */
		if (member_added(&list[n], &c->added[i]) < 0) {
			members_free(list, n);
			return APEX_ENOMEM;
		}
		n++;
	}
	/* two catalogs listing a zone none held (at start, say): the first
	 * configured takes it, unless its entry's coo names the other */
	qsort(list, n, sizeof(*list), compare_ranked);
	for (size_t i = 0; i < n; i++) {
		if (kept > 0 && apex_name_equal(list[kept - 1].zone, list[i].zone)) {
			char text[APEX_NAME_MAX * 4 + 1];
			consumer_t *first = list[kept - 1].catalog != NULL
						    ? consumer_find(c, list[kept - 1].catalog)
						    : NULL;

			if (first != NULL && list[i].catalog != NULL &&
			    moves_to(c, first, list[i].zone, list[i].catalog)) {
				member_clear(&list[kept - 1]);
				list[kept - 1] = list[i];
				continue;
			}
			text_of(list[i].zone, text, sizeof(text));
			apex_warning("member %s: listed by two catalogs, or by one and added by "
				     "zone-add; the first configured catalog takes it",
				     text);
			member_clear(&list[i]);
			continue;
		}
		list[kept++] = list[i];
	}
	*out = list;
	*count = kept;
	return APEX_OK;
}
