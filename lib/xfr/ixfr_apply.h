/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An incoming IXFR applied: the records of the version that results from
 * a served version and the change sets a primary sent (RFC 1995), in
 * order, for a builder to make the new version from.
 *
 * Several change sets are condensed first (xfr/condense.h); one is read
 * in place, its records not copied, with what condensing it would change
 * (a record removed twice, or added twice) done as condensing does it.
 * Then the old version's records are
 * given without the removed ones, then the additions; the new SOA comes
 * first.  Records are matched as IXFR matches them: owner without regard
 * to case, type, class and RDATA byte for byte.  A removal of a record the
 * old version does not hold means the sets do not apply to it (the
 * primary's history and ours differ): APEX_EMALFORMED, and the caller asks
 * for the whole zone instead.
 *
 * apex_ixfr_apply() gives every record of the new version, for a whole
 * build.  apex_ixfr_version() makes the new version itself: derived from
 * the old one (zone/derive.h), only the changed names built again, for
 * what a TLD's IXFRs hold (RRSIGs signed again, NS, DS and glue of
 * delegations, delegations registered and deleted); built whole for what
 * a derivation does not do.  Both versions answer the same
 * (tests/unit/test_ixfr_equivalence).
 */
#ifndef APEX_XFR_IXFR_APPLY_H
#define APEX_XFR_IXFR_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "xfr/changes.h"
#include "zone/zone.h"

/* Where the records go; a callback's error ends the application. */
typedef int (*apex_ixfr_emit_fn)(void *ctx, const apex_rr_t *rr);

/*
 * Give emit every record of old with sets[0..count) applied.  Returns
 * APEX_OK, APEX_EMALFORMED (a set does not apply; the reason in err),
 * APEX_ENOMEM, or emit's error.
 */
int apex_ixfr_apply(const apex_zone_t *old, const apex_changes_t *sets, size_t count,
		    apex_ixfr_emit_fn emit, void *ctx, char *err, size_t err_size);

/*
 * The version old becomes by sets[0..count): derived from old when the
 * change allows it (*in_place true), else built whole.  source names the
 * version's origin in messages ("transfer of ZONE from PRIMARY").
 * Returns APEX_OK with *out (one reference, the caller's; its precomputed
 * answers are not recorded yet), APEX_EMALFORMED (a set does not apply to
 * old), APEX_ELOAD (the result is not a zone apex can serve), with the
 * reason in err, or APEX_ENOMEM.
 */
int apex_ixfr_version(apex_zone_t *old, const apex_changes_t *sets, size_t count,
		      const char *source, apex_zone_t **out, bool *in_place, char *err,
		      size_t err_size);

/* Asked before a version is built whole (the change is not derived in
 * place): a negative code, with the reason in err, ends the application
 * with that code instead (apexd's memory-limit). */
typedef struct apex_ixfr_guard {
	int (*whole)(void *ctx, char *err, size_t err_size);
	void *ctx;
	/* Or NULL.  Told once a derivation in place has read all it needs of
	 * the sets, before it builds the version: the caller may free them
	 * then, so that they are not held through the derivation's peak (a
	 * reload's set of 100,000 changes, 10 MB).  A derivation that fails
	 * after it cannot fall back on a whole build, which would read them:
	 * apex_ixfr_version_guarded() returns APEX_ENOTSUP instead. */
	void (*sets_read)(void *ctx);
} apex_ixfr_guard_t;

/* apex_ixfr_version(), with guard (NULL: none) asked before a whole build
 * and told when the sets are read (then APEX_ENOTSUP too: above). */
int apex_ixfr_version_guarded(apex_zone_t *old, const apex_changes_t *sets, size_t count,
			      const char *source, const apex_ixfr_guard_t *guard, apex_zone_t **out,
			      bool *in_place, char *err, size_t err_size);

#endif
