/* SPDX-License-Identifier: BSD-3-Clause */
/* The change sets of a journal ahead of a loaded version (journal_replay.h). */
#include "xfr/journal_replay.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/error.h"

int apex_journal_replay_from(const apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule,
			     size_t *first)
{
	size_t at;

	if (apex_journal_find(j, serial, &at) != APEX_OK || at == j->count)
		return APEX_ENOENT; /* not in the chain, or its newest version */
	if (rule == APEX_REPLAY_PRIMARY && at != 0)
		return APEX_ENOENT;
	*first = at;
	return APEX_OK;
}

/* Whether the payload of set reads as a complete change set whose SOAs
 * carry the serials the journal's entry has. */
static bool set_reads(const apex_changes_t *set)
{
	apex_changes_reader_t r;
	apex_change_kind_t kind;
	apex_rr_t rr;
	uint32_t serial, from = 0, to = 0;
	bool have_from = false, have_to = false;
	int rc;

	apex_changes_reader_init(&r, set->data, set->size);
	while ((rc = apex_changes_next(&r, &rr, &kind)) == APEX_OK) {
		if (kind != APEX_CHANGE_OLD_SOA && kind != APEX_CHANGE_NEW_SOA)
			continue;
		if (!apex_changes_soa_serial(rr.rdata, rr.rdlength, &serial))
			return false;
		if (kind == APEX_CHANGE_OLD_SOA) {
			from = serial;
			have_from = true;
		} else {
			to = serial;
			have_to = true;
		}
	}
	return rc == APEX_ENOENT && have_from && have_to && from == set->serial_from &&
	       to == set->serial_to;
}

int apex_journal_replay_sets(const apex_journal_t *j, uint32_t serial, apex_replay_rule_t rule,
			     apex_changes_t **sets, size_t *count, char *err, size_t err_size)
{
	size_t first;

	*sets = NULL;
	*count = 0;
	if (apex_journal_replay_from(j, serial, rule, &first) != APEX_OK)
		return APEX_OK;
	size_t n = j->count - first;
	apex_changes_t *out = calloc(n, sizeof(*out));
	if (out == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const apex_journal_entry_t *e = &j->entries[first + i];
		apex_changes_t *set = &out[i];
		int rc;

		apex_changes_init(set);
		set->data = malloc(e->size ? e->size : 1);
		if (set->data == NULL) {
			apex_journal_sets_free(out, n);
			return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
		}
		set->size = set->capacity = e->size;
		set->serial_from = e->serial_from;
		set->serial_to = e->serial_to;
		set->next = APEX_CHANGE_ADD; /* complete */
		rc = apex_journal_read(j, first + i, set->data, e->size);
		if (rc == APEX_OK && !set_reads(set))
			rc = APEX_EMALFORMED;
		if (rc < 0) {
			apex_journal_sets_free(out, n);
			return apex_fail(err, err_size, rc == APEX_ENOMEM ? rc : APEX_EMALFORMED,
					 "%s: the change from serial %u to %u does not read back",
					 j->path, e->serial_from, e->serial_to);
		}
	}
	*sets = out;
	*count = n;
	return APEX_OK;
}

void apex_journal_sets_free(apex_changes_t *sets, size_t count)
{
	for (size_t i = 0; sets != NULL && i < count; i++)
		apex_changes_free(&sets[i]);
	free(sets);
}
