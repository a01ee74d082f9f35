/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NSEC links of an NSEC zone after names were added or removed
 * (derive_state.h).  A node's nsec is the nearest name at or before it in
 * canonical order with an NSEC RRset, its wildcard_nsec that of the place
 * "*.<name>" would take (zone.h).  A name X added or removed changes them
 * only for:
 *  - the names from X's place up to the next name with an NSEC (their
 *    nsec, and so their wildcard_nsec);
 *  - X's ancestors: a name sorts between an ancestor and the ancestor's
 *    "*" child only if it is below the ancestor, so an ancestor's
 *    wildcard may follow X.
 * A name with an NSEC after X keeps its links: its own NSEC comes later
 * than X, and "*.<name>" later still.  Only these names are linked
 * again, and only those whose links differ are copied.
 */
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/error.h"
#include "zone/build.h"
#include "zone/build_steps.h"
#include "zone/derive_state.h"

static bool has_nsec(const apex_zone_t *zone, const apex_node_t *node)
{
	return apex_node_rrset(zone, node, APEX_TYPE_NSEC) != NULL;
}

/* node's links set to nsec and wildcard_nsec, its page copied only if
 * they differ. */
static int set_links(apex_derive_t *d, const apex_node_t *node, uint32_t nsec, uint32_t wildcard)
{
	if (node->nsec == nsec && node->wildcard_nsec == wildcard)
		return APEX_OK;
	apex_node_t *w = apex_derive_writable(d, node->id);
	if (w == NULL)
		return APEX_ENOMEM;
	w->nsec = nsec;
	w->wildcard_nsec = wildcard;
	return APEX_OK;
}

/* The nsec links from rank up to the next name with an NSEC; the rank
 * that ends the run (the caller goes on past it). */
static int relink_run(apex_derive_t *d, size_t rank, size_t *end)
{
	const apex_zone_t *zone = d->zone;
	uint32_t last = rank > 0 ? apex_zone_node_at(zone, rank - 1)->nsec : APEX_NODE_NONE;
	size_t i = rank;
	int rc = APEX_OK;

	for (; i < zone->node_count && rc == APEX_OK; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		if (has_nsec(zone, node)) {
			if (i > rank)
				break; /* its links and those after it stay */
			last = node->id;
		}
		rc = set_links(d, node, last, node->wildcard_nsec);
	}
	*end = i;
	return rc;
}

/* The wildcard links of the names of ranks [from, to), once every nsec
 * link is right (a wildcard's is a neighbour's nsec). */
static int relink_wildcards(apex_derive_t *d, size_t from, size_t to)
{
	const apex_zone_t *zone = d->zone;
	int rc = APEX_OK;

	for (size_t i = from; i < to && rc == APEX_OK; i++) {
		const apex_node_t *node = apex_zone_node_at(zone, i);
		const apex_node_t *next =
			i + 1 < zone->node_count ? apex_zone_node_at(zone, i + 1) : NULL;
		rc = set_links(d, node, node->nsec, apex_build_wildcard_nsec(zone, node, next));
	}
	return rc;
}

/* The wildcard links of name's ancestors that are names of the new
 * version. */
static int relink_ancestors(apex_derive_t *d, const uint8_t *name)
{
	const apex_zone_t *zone = d->zone;
	const uint8_t *up = name;
	int rc = APEX_OK;

	while (rc == APEX_OK && up[0] != 0 && apex_name_labels(up) > zone->origin_labels) {
		up += 1 + up[0];
		uint8_t key[APEX_KEY_MAX];
		size_t key_size = apex_name_key(up, key, NULL);
		size_t rank = apex_zone_rank(zone, key, key_size);
		const apex_node_t *node =
			rank < zone->node_count ? apex_zone_node_at(zone, rank) : NULL;
		if (node != NULL &&
		    apex_key_compare(apex_node_key(node), node->key_size, key, key_size) == 0)
			rc = relink_wildcards(d, rank, rank + 1);
	}
	return rc;
}

/* The places of the new and removed names in the new order (NSEC3 owners
 * are none of the index), sorted. */
static void find_places(const apex_derive_t *d, size_t *ranks, size_t *count)
{
	const apex_zone_t *zone = d->zone;

	*count = 0;
	for (uint32_t r = 0; r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r]) {
			const apex_node_t *n = apex_zone_node_of(zone, d->ids[r]);
			ranks[(*count)++] = apex_zone_rank(zone, apex_node_key(n), n->key_size);
		}
	for (size_t i = 0; i < d->removed_count; i++) {
		const apex_node_t *n = apex_zone_node_of(d->old, d->removed[i]);
		ranks[(*count)++] = apex_zone_rank(zone, apex_node_key(n), n->key_size);
	}
	for (size_t i = 0; i < d->ent_count; i++)
		ranks[(*count)++] = apex_zone_rank(zone, d->ents[i].key, d->ents[i].key_size);
	qsort(ranks, *count, sizeof(*ranks), apex_derive_by_rank);
}

int apex_derive_nsec(apex_derive_t *d)
{
	size_t places = d->fresh_count - d->fresh_nsec3 + d->removed_count + d->ent_count;
	size_t count = 0, runs = 0;
	size_t *ranks = malloc((places + 1) * sizeof(*ranks));
	size_t *ends = malloc((places + 1) * sizeof(*ends));
	int rc = ranks != NULL && ends != NULL ? APEX_OK : APEX_ENOMEM;

	if (rc == APEX_OK)
		find_places(d, ranks, &count);
	/* Every nsec link first, in order: a run starts from the link of the
	 * name before it, which an earlier run may have set.  A place inside
	 * an earlier run is done. */
	for (size_t i = 0; i < count && rc == APEX_OK; i++) {
		if (runs > 0 && ranks[i] < ends[runs - 1])
			continue;
		ranks[runs] = ranks[i];
		rc = relink_run(d, ranks[runs], &ends[runs]);
		runs++;
	}
	/* Then the wildcard links of the same runs and of the ancestors. */
	for (size_t i = 0; i < runs && rc == APEX_OK; i++)
		rc = relink_wildcards(d, ranks[i], ends[i]);
	for (uint32_t r = 0; rc == APEX_OK && r < d->bd.b->owner_count; r++)
		if (d->fresh[r] && !d->bd.owner_is_nsec3[r])
			rc = relink_ancestors(d, apex_zone_node_of(d->zone, d->ids[r])->name);
	for (size_t i = 0; rc == APEX_OK && i < d->removed_count; i++)
		rc = relink_ancestors(d, apex_zone_node_of(d->old, d->removed[i])->name);
	free(ranks);
	free(ends);
	return rc;
}
