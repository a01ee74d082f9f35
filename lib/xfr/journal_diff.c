/* SPDX-License-Identifier: BSD-3-Clause */
/* A zone's difference written into its journal (xfr/journal_diff.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/journal_diff.h"

#include "util/error.h"
#include "xfr/changes.h"
#include "xfr/diff.h"

typedef struct piece_writer {
	apex_journal_writer_t w;
	char *err;
	size_t err_size;
} piece_writer_t;

static int write_piece(void *ctx, const uint8_t *data, size_t size)
{
	piece_writer_t *p = ctx;

	return apex_journal_write(&p->w, data, size, p->err, p->err_size);
}

/* The difference could not be made (rc): APEX_ESPACE, larger than j
 * keeps, empties j as apex_journal_append() would; another code is told
 * in err (what: the step that failed). */
static int refused(apex_journal_t *j, int rc, const char *what, char *err, size_t err_size)
{
	if (rc != APEX_ESPACE)
		return apex_fail(err, err_size, rc, "the difference could not be %s: %s", what,
				 apex_strerror(rc));
	int cleared = apex_journal_clear(j, err, err_size);
	return cleared < 0 ? cleared : APEX_ESPACE;
}

/* A version built whole: the difference made whole, then appended. */
static int append_whole(apex_journal_t *j, const apex_zone_t *from, const apex_zone_t *to,
			apex_changes_t *set, char *err, size_t err_size)
{
	int rc = apex_xfr_diff_within(from, to, apex_journal_payload_max(j), set);

	if (rc < 0)
		return refused(j, rc, "computed", err, err_size);
	return apex_journal_append(j, set->serial_from, set->serial_to, set->data, set->size, err,
				   err_size);
}

/* A derived version: sized, then written in pieces. */
static int append_pieces(apex_journal_t *j, const apex_zone_t *from, const apex_zone_t *to,
			 apex_changes_t *set, char *err, size_t err_size)
{
	piece_writer_t p = { .err = err, .err_size = err_size };
	size_t bytes;
	int rc = apex_xfr_diff_size(from, to, apex_journal_payload_max(j), &bytes);

	if (rc < 0)
		return refused(j, rc, "sized", err, err_size);
	rc = apex_journal_begin(j, from->serial, to->serial, bytes, &p.w, err, err_size);
	if (rc < 0)
		return rc;
	rc = apex_xfr_diff_stream(from, to, set, write_piece, &p);
	if (rc == APEX_OK)
		rc = apex_journal_commit(&p.w, err, err_size);
	if (rc < 0 && p.w.j != NULL) { /* not the journal's own failure: it says that */
		apex_fail(err, err_size, rc, "the difference could not be made: %s",
			  apex_strerror(rc));
		apex_journal_abort(&p.w);
	}
	return rc;
}

int apex_journal_append_diff(apex_journal_t *j, const apex_zone_t *from, const apex_zone_t *to,
			     size_t *removed, size_t *added, char *err, size_t err_size)
{
	apex_changes_t set;

	if (err_size > 0)
		err[0] = '\0';
	apex_changes_init(&set);
	int rc = to->base == from ? append_pieces(j, from, to, &set, err, err_size)
				  : append_whole(j, from, to, &set, err, err_size);
	*removed = set.removed;
	*added = set.added;
	apex_changes_free(&set);
	return rc;
}
