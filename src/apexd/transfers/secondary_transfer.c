/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One transfer of a secondary zone (secondary.h): asked of a primary,
 * received into a new version (and, for a whole zone, the zone's copy),
 * then published through the zone table; an IXFR's copy is left to
 * secondary_copy.c.
 */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's: _GNU_SOURCE */
#endif
#include "transfers/secondary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dns/rrtype.h"
#include "dns/serial.h"
#include "observe/write_failures.h"
#include "process/crash_point.h"
#include "process/memory.h"
#include "transfers/copies.h"
#include "transfers/secondary_internal.h"
#include "zones/compact.h"
#include "zones/reload.h"
#include "zones/verify_check.h"
#include "zones/zonemd_check.h"
#include "query/precompute.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/log.h"
#include "xfr/ixfr_apply.h"
#include "xfr/xfr_client.h"
#include "xfr/zone_copy.h"
#include "zone/derive_profile.h"
#include "zone/index_block.h"
#include "zone/wire_feed.h"
#include "zone/zone_from_wire.h"

#define CONNECT_TIMEOUT_MS 5000

/* Where what a primary sends goes: the records of a whole zone to the new
 * version; the change sets of an IXFR, kept until applied. */
typedef struct receiver {
	/* the records of a whole zone, handed to the version's builder on a
	 * thread of its own as they arrive (zone/wire_feed.h), its messages
	 * in build_err, read once the feed has ended; begun with the copy at
	 * the first record of a whole zone (begin_whole()), so that an IXFR
	 * makes neither a builder nor a file on its way to serving */
	apex_wire_feed_t *feed;
	const uint8_t *origin; /* the zone's, for the builder */
	const char *file;      /* the copy's path */
	char header[300];      /* the copy's first line */
	bool feed_failed;      /* it refused a record: build_err says why */
	char build_err[512];
	/* The copy: for a whole zone, written from the version once it is
	 * published, so that the new serial is served without waiting for
	 * the file (a million records written as text cost about as much as
	 * receiving them); for an IXFR, given up here and written later from
	 * the version served (secondary_copy.c).  A copy that fails (a full
	 * disk) is given up and its failure kept for the commit. */
	apex_zone_copy_t copy;
	bool derived;         /* the version comes from the old one and sets (an IXFR) */
	bool in_place;        /* ... derived in place (zone/derive.h), not built whole */
	char source[200];     /* the new version's source, for messages */
	apex_changes_t *sets; /* copies, owned */
	size_t set_count;
	/* CLOCK_MONOTONIC microseconds, for the log of the path to serving
	 * (log_path()): the transfer begun, the answer received, the version
	 * made, its answers precomputed, published, the journal appended, the
	 * old version let go */
	uint64_t start, received, made, precomputed, published, journaled, retired;
	/* the derivation's steps, when in_place (zone/derive_profile.h) */
	float derive_ms[APEX_DERIVE_STEPS];
	/* memory-limit: the transfer's claim, raised from the counts of x as
	 * the records of a whole zone arrive */
	apex_transfer_memory_t *memory;
	const apex_xfr_in_t *x;
	/* an IXFR's: the version it is asked from, its zone and secondary */
	const apex_zone_t *current;
	apex_secondary_zone_t *zone;
	apex_secondary_t *secondary;
} receiver_t;

/* The builder of a whole zone and its copy (a copy that cannot be made is
 * told at its commit: the transfer is served from memory all the same). */
static int begin_whole(receiver_t *r)
{
	int rc = apex_wire_feed_begin(&r->feed, r->origin, r->source, r->build_err,
				      sizeof(r->build_err));

	if (rc == APEX_OK)
		(void)apex_zone_copy_begin(&r->copy, r->file, r->header, NULL, 0);
	return rc;
}

static int receive_record(void *ctx, const apex_rr_t *rr)
{
	receiver_t *r = ctx;
	int rc;

	if (r->feed == NULL && (rc = begin_whole(r)) < 0)
		return rc;
	rc = apex_wire_feed_add(r->feed, rr->owner, rr->type, rr->ttl, rr->rdata, rr->rdlength);
	r->feed_failed = rc < 0;
	if (rc == APEX_OK)
		rc = apex_transfer_memory_progress(r->memory, r->x->records, r->x->bytes);
	return rc;
}

/* The set taken as it is (xfr_in.h): its data is the receiver's now, not
 * copied (0.7 MB, 180 pages new to the process, for 10,000 changes). */
static int receive_changes(void *ctx, apex_changes_t *set)
{
	receiver_t *r = ctx;
	apex_changes_t *grown = realloc(r->sets, (r->set_count + 1) * sizeof(*grown));

	if (grown == NULL)
		return APEX_ENOMEM;
	r->sets = grown;
	grown[r->set_count++] = *set;
	apex_changes_init(set);
	return APEX_OK;
}

/* An IXFR asked for: while its answer comes, the name index's block
 * (zone/index_block.h) and the pool regions the last purge gave back
 * (process/memory.h) are made; the purge gives back what is unused. */
static void ixfr_requested(void *ctx)
{
	receiver_t *r = ctx;
	uint64_t none = 0;

	apex_index_block_prepare(r->current);
	if (apex_index_block_kept(r->current) > 0)
		atomic_store(&r->zone->index_kept, true);
	apex_memory_prepare();
	atomic_compare_exchange_strong(&r->secondary->purge_due, &none,
				       apex_monotonic_ms() + APEX_SECONDARY_PURGE_DELAY_MS);
}

/* Give up what r holds (the builder and the copy unless already done). */
static void receiver_abort(receiver_t *r)
{
	if (r->feed != NULL)
		apex_wire_feed_abort(r->feed);
	apex_zone_copy_abort(&r->copy); /* nothing once committed */
	for (size_t i = 0; i < r->set_count; i++)
		apex_changes_free(&r->sets[i]);
	free(r->sets);
	memset(r, 0, sizeof(*r));
}

/* The connection the calling thread of the pool keeps to a primary
 * (xfr_client.h): the next check or transfer from the same primary,
 * a catalog's next member, uses it again. */
static __thread apex_xfr_kept_t kept = APEX_XFR_KEPT_NONE;

void apex_secondary_rest(void *arg)
{
	(void)arg;
	apex_xfr_kept_close(&kept, 0);
}

void apex_secondary_primary_of(const apex_secondary_t *s, const apex_acl_entry_t *e,
			       apex_xfr_primary_t *p)
{
	memset(p, 0, sizeof(*p));
	p->addr_len = apex_acl_sockaddr(e, &p->addr);
	p->key = e->key;
	p->text = e->text;
	p->kept = &kept;
	if (e->tls_auth != NULL) {
		p->tls_name = e->tls_auth->auth_domain_name;
		p->tls = apex_tls_clients_get(&s->tls_clients, e->tls_auth, &p->tls_error);
	}
}

void apex_secondary_timeouts_of(const apex_secondary_t *s, apex_xfr_timeouts_t *t)
{
	t->connect_ms = CONNECT_TIMEOUT_MS;
	t->idle_ms = s->applied->cfg->xfr_idle_timeout * 1000u;
	t->total_ms = s->applied->cfg->xfr_timeout * 1000u;
	t->cancel_fd = s->stop_fd;
}

/* The feed of r refused a record, and the transfer ended: the error,
 * with the builder's reason in err. */
static int feed_refused(receiver_t *r, const apex_acl_entry_t *e, char *err, size_t err_size)
{
	apex_zone_from_wire_t *builder;
	int rc = apex_wire_feed_end(r->feed, &builder);

	r->feed = NULL;
	if (rc == APEX_OK) { /* cannot happen: the feed said it failed */
		apex_zone_from_wire_abort(builder);
		rc = APEX_ELOAD;
	}
	return apex_fail(err, err_size, rc, "%s: %s", e->text,
			 r->build_err[0] != '\0' ? r->build_err : apex_strerror(rc));
}

/* The whole zone r received, built: APEX_OK with *out, or an apex code
 * with the reason (the builder's) in err. */
static int build_whole(receiver_t *r, apex_zone_t **out, char *err, size_t err_size)
{
	apex_zone_from_wire_t *builder;
	int rc = r->feed != NULL ? APEX_OK : begin_whole(r); /* no record: the builder says so */

	if (rc < 0)
		return apex_fail(err, err_size, rc, "out of memory");
	rc = apex_wire_feed_end(r->feed, &builder);

	r->feed = NULL;
	if (rc == APEX_OK)
		rc = apex_zone_from_wire_finish(builder, out);
	if (rc < 0)
		apex_fail(err, err_size, rc, "%s",
			  r->build_err[0] != '\0' ? r->build_err : apex_strerror(rc));
	return rc;
}

/*
 * Ask e for z (IXFR from the serial of current, or AXFR when current is
 * NULL) and receive the answer into r, begun here; x holds the counts.
 */
static int receive(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
		   const apex_zone_t *current, receiver_t *r, apex_xfr_in_t *x,
		   apex_transfer_memory_t *memory, char *err, size_t err_size)
{
	/* not under memory-limit: its claim would count what is made ahead */
	bool ahead = current != NULL && !apexd_memory_limit_on(s->memory_limit);
	apex_xfr_in_handler_t handler = { r, receive_record, receive_changes,
					  ahead ? ixfr_requested : NULL };
	apex_xfr_in_limits_t limits = { s->applied->cfg->xfr_size_limit, 0 };
	apex_xfr_primary_t primary;
	apex_xfr_timeouts_t t;
	int rc;

	apex_secondary_copy_settle(s, z); /* before r's copy truncates its file */
	memset(r, 0, sizeof(*r));
	r->memory = memory;
	r->x = x;
	r->current = current;
	r->zone = z;
	r->secondary = s;
	r->origin = z->origin;
	r->file = z->file;
	/* an AXFR: claimed at once as large as the version served */
	if (current == NULL && (rc = apex_transfer_memory_axfr(memory)) < 0)
		return apex_fail(err, err_size, rc, "%s", memory->err);
	apex_secondary_primary_of(s, e, &primary);
	apex_secondary_timeouts_of(s, &t);
	snprintf(r->source, sizeof(r->source), "transfer of %s from %s", z->name, e->text);
	snprintf(r->header, sizeof(r->header), "zone %s, received from %s", z->name, e->text);
	rc = apex_xfr_client_transfer(
		&primary, z->origin, current != NULL ? APEX_TYPE_IXFR : APEX_TYPE_AXFR,
		current != NULL ? current->serial : 0, &handler, &limits, &t, x, err, err_size);
	z->expire_option = x->expire;
	if (memory->refused) /* the records were refused as they came */
		rc = apex_fail(err, err_size, APEX_EMEMLIMIT, "%s", memory->err);
	else if (r->feed_failed) /* a record the builder refused: its reason */
		rc = feed_refused(r, e, err, err_size);
	if (rc == APEX_OK && x->out_of_zone > 0)
		apex_warning("zone %s: %llu record(s) outside the zone dropped from the transfer "
			     "from %s",
			     z->name, (unsigned long long)x->out_of_zone, e->text);
	return rc;
}

/* The bytes of the change sets r received (an IXFR's). */
static uint64_t sets_bytes(const receiver_t *r)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < r->set_count; i++)
		bytes += r->sets[i].size;
	return bytes;
}

void apex_secondary_copy_again(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	apex_zone_t *zone;

	if (!apexd_write_behind(z->file))
		return;
	zone = apex_server_served_version(s->server, z->origin);
	if (zone == NULL)
		return;
	apex_secondary_flush_copy(s, z, zone, "again after a failed write");
	apex_zone_unref(zone);
}

/* Milliseconds from a to b (microseconds; 0 when either is unknown). */
static double ms_between(uint64_t a, uint64_t b)
{
	return a != 0 && b >= a ? (double)(b - a) / 1000.0 : 0.0;
}

/*
 * The path of the transfer r of z to serving, phase by phase (info, one
 * line a transfer: doc/transfers.md, "The path of an IXFR"): from the
 * NOTIFY's arrival at a worker (or the check's start) to the version
 * published, which the workers pick up at their next query, then what
 * follows off that path.
 */
static void log_path(const apex_secondary_zone_t *z, const receiver_t *r, uint32_t serial)
{
	uint64_t from = z->check_notified_us != 0 ? z->check_notified_us : z->check_began_us;
	uint64_t first = r->x->first_message_us != 0 ? r->x->first_message_us : r->received;

	apex_info("zone %s: serial %u served %.2f ms after %s: to the transfer thread %.2f, "
		  "SOA query %.2f, connect and request %.2f, first message %.2f, rest of the "
		  "answer %.2f, %s %.2f, precomputed answers %.2f, checks and publication %.2f; "
		  "after serving: journal %.2f, old version let go %.2f ms",
		  z->name, serial, ms_between(from, r->published),
		  z->check_notified_us != 0 ? "the NOTIFY" : "its check began",
		  ms_between(z->check_notified_us, z->check_began_us),
		  ms_between(z->check_began_us, z->check_newer_us),
		  ms_between(r->start, r->x->requested_us), ms_between(r->x->requested_us, first),
		  ms_between(first, r->received), r->derived ? "derivation" : "build",
		  ms_between(r->received, r->made), ms_between(r->made, r->precomputed),
		  ms_between(r->precomputed, r->published), ms_between(r->published, r->journaled),
		  ms_between(r->journaled, r->retired));
	if (r->in_place) {
		/* the derivation in parts: what its change costs, and what its
		 * copies proportional to the zone cost (derive_profile.h) */
		float steps = 0;
		char text[200];
		for (int i = 0; i < APEX_DERIVE_STEPS; i++)
			steps += r->derive_ms[i];
		double all = ms_between(r->received, r->made);
		apex_derive_profile_text(r->derive_ms, text, sizeof(text));
		apex_debug("zone %s: serial %u derivation %.2f ms: change set read and its owners "
			   "looked up %.2f, %s",
			   z->name, serial, all, all > steps ? all - steps : 0.0, text);
	}
}

/*
 * Publish zone (the caller's reference, taken), the version r received,
 * rename the copy; the status says how it came.  *held: the caller's
 * reference to the version served when its check began (or NULL), dropped
 * here once the new version is published, so that the old version is
 * freed as soon as the workers let go of it (apex_server_retire() waits
 * for that, at most a few seconds).
 */
static int publish(apex_secondary_t *s, apex_secondary_zone_t *z, receiver_t *r, apex_zone_t *zone,
		   const char *how, const char *detail, apex_zone_t **held, char *err,
		   size_t err_size)
{
	apex_zone_t *old;
	int rc = APEX_OK;

	if ((rc = apex_precompute(zone)) < 0)
		snprintf(err, err_size, "precomputing answers: %s", apex_strerror(rc));
	r->precomputed = apex_monotonic_us();
	if (rc == APEX_OK)
		rc = apexd_zonemd_check(z->name, zone, z->zonemd_verify, err, err_size);
	if (rc == APEX_OK)
		rc = apexd_verify_check(z->name, z->origin, zone, err, err_size);
	if (rc < 0) {
		apex_zone_unref(zone);
		return rc;
	}
	/* answered as EDNS EXPIRE from the start; refresh() corrects it */
	uint32_t soa_expire = apex_zone_soa_expire(zone);
	if (soa_expire > 0)
		apex_secondary_mark_expire(zone,
					   apex_secondary_expire_granted(soa_expire, r->x->expire));
	old = apex_server_served_version(s->server, z->origin);
	uint32_t serial = zone->serial;
	size_t records = zone->record_count;
	apex_zone_ref(zone); /* for the published hook, dropped below */
	rc = s->reloader != NULL ? apex_reloader_publish(s->reloader, z->reloader_id, zone)
				 : apex_zonetable_publish(&s->server->zonetable, zone);
	if (rc < 0) {
		snprintf(err, err_size, "not published: %s",
			 rc == APEX_ENOENT ? "the zone was removed meanwhile" : apex_strerror(rc));
		apex_zone_unref(zone);
		apex_zone_unref(zone);
		apex_zone_unref(old);
		return rc;
	}
	r->published = apex_monotonic_us();
	if (r->derived && old != NULL)
		apex_secondary_copy_before_journal(s, z, old, sets_bytes(r));
	if (s->published != NULL)
		s->published(s->published_arg, old, zone, r->derived ? r->sets : NULL,
			     r->derived ? r->set_count : 0);
	r->journaled = apex_monotonic_us();
	uint32_t old_serial = old != NULL ? old->serial : 0;
	apex_zone_unref(*held);
	*held = NULL;
	apex_server_retire(s->server, old, true);
	r->retired = apex_monotonic_us();
	/* a crash from here on leaves the journal ahead of the copy (an
	 * IXFR, whose copy lags until it is flushed: the next start replays
	 * the journal), or the copy behind the primary (an AXFR: the next
	 * start transfers again) */
	if (r->derived) {
		apexd_crash_point("journal-appended");
		apex_secondary_copy_after_ixfr(s, z, zone, old_serial);
	} else {
		apex_secondary_commit_copy(s, z, &r->copy, zone);
		z->copy_due = 0; /* the copy holds what is published */
	}
	/* kept for the next IXFR a while (secondary_internal.h); a small
	 * zone's AXFR too: a purge per zone of thousands transferred at once
	 * (a catalog's members) cost more than their transfers */
	if (r->derived)
		atomic_store(&z->index_kept, true);
	if (r->derived || zone->memory < APEX_SECONDARY_PURGE_NOW_BYTES)
		s->purge_due = apex_monotonic_ms() + APEX_SECONDARY_PURGE_DELAY_MS;
	else
		apex_memory_purge();
	apex_zone_unref(zone);
	pthread_mutex_lock(&s->lock);
	z->status.transfers++;
	clock_gettime(CLOCK_REALTIME, &z->status.last_transfer);
	z->status.expired = false;
	snprintf(z->status.last_result, sizeof(z->status.last_result),
		 "%s serial %u %.180s: %zu records", how, serial, detail, records);
	apex_info("zone %s: %s", z->name, z->status.last_result);
	pthread_mutex_unlock(&s->lock);
	log_path(z, r, serial);
	if (r->derived) /* its chain let go of when it holds too much */
		z->compact_wanted = true;
	return APEX_OK;
}

/* What a compaction at the end of a refresh gives way to: a NOTIFY of its
 * zone (or apexctl refresh) that came since the refresh was handed over,
 * when the pass that handed it cleared z->notified. */
typedef struct compact_give_way {
	apex_secondary_t *s;
	apex_secondary_zone_t *z;
	bool paused; /* the test hook's pause is taken: once a compaction */
} compact_give_way_t;

static bool notified_since(void *ctx)
{
	compact_give_way_t *g = ctx;

	if (!g->paused && g->s->compact_give_way_pause_ms != 0) { /* a test's hook */
		g->paused = true;
		usleep(g->s->compact_give_way_pause_ms * 1000u);
	}
	return atomic_load_explicit(&g->z->notified, memory_order_relaxed);
}

/* notified_since() after a compaction's last part, once the test hook's
 * pause (APEX_TEST_COMPACT_LAST_GIVE_WAY_MS) is over. */
static bool notified_after_parts(void *ctx)
{
	compact_give_way_t *g = ctx;

	usleep(g->s->compact_last_give_way_pause_ms * 1000u);
	return notified_since(ctx);
}

void apex_secondary_compact(apex_secondary_t *s, apex_secondary_zone_t *z)
{
	compact_give_way_t g = { s, z, false };
	apex_compact_zone_t c = { .server = s->server,
				  .reloader = s->reloader,
				  .zone_id = z->reloader_id,
				  .origin = z->origin,
				  .name = z->name,
				  .limit = s->memory_limit,
				  .kind = APEXD_MEMORY_TRANSFER,
				  .give_way = notified_since,
				  .give_way_ctx = &g,
				  .give_way_after_parts = s->compact_last_give_way_pause_ms != 0
								  ? notified_after_parts
								  : NULL,
				  .parts_gave_way = &z->compact_parts_gave_way };

	if (!z->compact_wanted)
		return;
	if (z->compact_gave_way >= APEX_SECONDARY_COMPACT_GIVE_WAY_MAX) {
		apex_info("zone %s: the compaction gave way %u times in a row: this one does not",
			  z->name, z->compact_gave_way);
		c.give_way = NULL;
	}
	z->compact_wanted = apex_compact_served(&c) == APEX_ECANCELED;
	z->compact_gave_way = z->compact_wanted ? z->compact_gave_way + 1 : 0;
}

/* The version r received: a whole zone built, or the change sets of an
 * IXFR applied to current (ixfr_apply.h; -ESTALE if they do not apply). */
static int received_version(receiver_t *r, apex_zone_t *current, apex_zone_t **out, char *err,
			    size_t err_size)
{
	apex_ixfr_guard_t guard = { apex_transfer_memory_whole, r->memory, NULL };
	int rc;

	if (!r->derived)
		return build_whole(r, out, err, err_size);
	if (r->feed != NULL) /* received nothing */
		apex_wire_feed_abort(r->feed);
	r->feed = NULL;
	if ((rc = apex_transfer_memory_ixfr(r->memory, r->sets, r->set_count)) < 0)
		return apex_fail(err, err_size, rc, "%s", r->memory->err);
	rc = apex_ixfr_version_guarded(current, r->sets, r->set_count, r->source, &guard, out,
				       &r->in_place, err, err_size);
	return rc == APEX_EMALFORMED ? -ESTALE : rc;
}

/*
 * Transfer z from one primary and publish it: by IXFR from current (the
 * version served; NULL: AXFR).  Returns APEX_OK (also when up to date), or
 * an apex code with the reason in err: nothing is published or written
 * then.  -ESTALE: the change sets do not apply to current (ask by AXFR).
 */
static int transfer(apex_secondary_t *s, apex_secondary_zone_t *z, const apex_acl_entry_t *e,
		    apex_zone_t *current, apex_zone_t **held, char *err, size_t err_size)
{
	uint64_t start = apex_monotonic_us();
	char detail[300];
	apex_xfr_in_t x;
	receiver_t r;
	apex_transfer_memory_t memory;
	apex_zone_t *zone = NULL;

	memset(&x, 0, sizeof(x));
	apex_transfer_memory_begin(&memory, s->memory_limit, z->name,
				   current != NULL ? current : *held);
	int rc = receive(s, z, e, current, &r, &x, &memory, err, err_size);

	/* an IXFR asked without a SOA query first (a NOTIFY's serial) may
	 * find the primary no newer: a whole zone at a serial not newer than
	 * the one served is not taken either */
	if (rc == APEX_OK && current != NULL && x.style == APEX_XFR_STYLE_AXFR &&
	    !apex_serial_newer(x.serial, current->serial)) {
		apex_info("zone %s: %s sent serial %u, not newer than %u: kept", z->name, e->text,
			  x.serial, current->serial);
		x.style = APEX_XFR_STYLE_UP_TO_DATE;
	}
	if (rc == APEX_OK && x.style == APEX_XFR_STYLE_UP_TO_DATE) {
		receiver_abort(&r);
		apex_xfr_in_free(&x);
		apex_transfer_memory_end(&memory);
		return APEX_OK;
	}
	r.start = start;
	r.received = apex_monotonic_us();
	r.derived = rc == APEX_OK && x.style == APEX_XFR_STYLE_IXFR;
	if (r.derived) /* an IXFR's copy is written from the version, later */
		apex_zone_copy_abort(&r.copy);
	if (rc == APEX_OK)
		rc = received_version(&r, current, &zone, err, err_size);
	r.made = apex_monotonic_us();
	if (rc == APEX_OK && r.in_place)
		memcpy(r.derive_ms, zone->derive_ms, sizeof(r.derive_ms));
	snprintf(detail, sizeof(detail), "from %s%s: %llu messages, %llu bytes, %.3f s%s", e->text,
		 e->tls_auth != NULL ? " over TLS" : "", (unsigned long long)x.messages,
		 (unsigned long long)x.bytes, (double)(apex_monotonic_us() - start) / 1e6,
		 r.in_place ? ", derived in place" : "");
	if (rc == APEX_OK)
		rc = publish(s, z, &r, zone,
			     x.style == APEX_XFR_STYLE_IXFR ? "IXFR"
			     : current != NULL              ? "IXFR (whole zone)"
							    : "AXFR",
			     detail, held, err, err_size);
	receiver_abort(&r);
	apex_xfr_in_free(&x);
	apex_transfer_memory_end(&memory);
	return rc;
}

/*
 * Transfer z from e: by IXFR from current when there is one and e allows
 * it, falling back to AXFR when the primary refuses IXFR or its change
 * sets do not apply to what is served.  *held as for publish().
 */
int apex_secondary_transfer_any(apex_secondary_t *s, apex_secondary_zone_t *z,
				const apex_acl_entry_t *e, apex_zone_t *current, apex_zone_t **held,
				char *err, size_t err_size)
{
	bool incremental = current != NULL && !e->axfr_only;

	/* memory-limit weighs the resident size: the pages kept for the next
	 * IXFR (s->purge_due) go back first, so that they are not counted */
	if (s->purge_due != 0 && apexd_memory_limit_on(s->memory_limit)) {
		apex_memory_purge();
		s->purge_due = 0;
	}
	int rc = transfer(s, z, e, incremental ? current : NULL, held, err, err_size);

	if (incremental && (rc == -ESTALE || rc == APEX_EREFUSED)) {
		apex_warning("zone %s: IXFR from %s: %s; asking for the whole zone", z->name,
			     e->text, err);
		rc = transfer(s, z, e, NULL, held, err, err_size);
	}
	return rc;
}
