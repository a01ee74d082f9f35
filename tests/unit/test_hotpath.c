/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The query path takes no lock, calls no allocator and writes no shared
 * memory: a proof by measurement.
 *
 * 1. Interposition.  The test is linked with -Wl,--wrap for the
 *    allocator (malloc, calloc, realloc, free, posix_memalign,
 *    aligned_alloc, strdup, strndup, jemalloc's xallocx, and the page
 *    pool small arenas take their chunks from) and for
 *    every pthread lock function.  libapex is a static convenience library, so each of its
 *    references goes through the __wrap_ functions below, which count
 *    calls while `counting` is set.  It is set only around the calls of
 *    apex_worker_answer() (src/apexd/serve/worker.h: the daemon's answer path,
 *    with the client's address, server cookies, NSID, response rate
 *    limiting and the worker's statistics, exactly as a worker calls
 *    it), and of the same path for queries read ahead in batches as a
 *    worker's UDP batch reads them where a zone is large
 *    (apex_answer_ahead_step(), apex_worker_answer_ahead()); a control
 *    proves that a call inside the window is counted.
 *    With jemalloc, the per-thread allocated/deallocated byte counters
 *    are checked too: they also see allocations made inside the C
 *    library on the engine's behalf, which --wrap cannot.
 *
 * 2. Memory protection.  While the zones load, every allocation libapex
 *    makes is served from one private mapping (`region`), so every byte
 *    of the zone versions, their arenas and the zoneset lives there.
 *    That mapping and the program's own writable segments (.data and
 *    .bss, which hold libapex's globals and the answer configuration)
 *    are then made read-only with mprotect(), and two threads answer
 *    thousands of queries at the same time.  Any write to shared memory
 *    faults; the handler names the address and the test fails.  A
 *    forked child proves the protection is really in force.  The two
 *    threads' answers must equal the single-threaded reference answers
 *    byte for byte.
 *
 * 3. The AF_XDP path.  apex_xdp_worker_serve() (src/apexd/serve/xdp.c), the
 *    batch a worker serves from its AF_XDP socket, runs on rings laid
 *    out in memory as the kernel lays them out, with query frames in
 *    the receive ring: no allocator or lock call, no write to the zones
 *    or the program's data (read-only, as in 2, while a batch is
 *    served), and every answer frame it queues carries the bytes the
 *    socket path answers.
 *
 * The query mix covers referrals, DS at cuts, NXDOMAIN and NODATA with
 * NSEC (root.zone) and NSEC3 (fj.zone, example.nsec3.zone: the hash is
 * computed per query), wildcards, CNAME chains, DNAME, DO on and off,
 * no EDNS (512-byte limit, TC), and TCP-sized answers.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/wire.h"
#include "query/answer.h"
#include "query/answer_ahead.h"
#include "query/precompute.h"
#include "util/error.h"
#include "util/page_pool.h"
#include "zone/load.h"
#include "zone/zoneset.h"
#include "observe/dnstap.h" /* src/apexd: the worker's dnstap hook */
#include "serve/worker.h"   /* src/apexd: the daemon's answer path */
#include "serve/xdp.h"      /* src/apexd: the AF_XDP path of a worker */
#include "xdp/frame.h"

/* ------------------------------------------------------------ counters */

enum {
	C_MALLOC,
	C_CALLOC,
	C_REALLOC,
	C_FREE,
	C_POSIX_MEMALIGN,
	C_ALIGNED_ALLOC,
	C_STRDUP,
	C_STRNDUP,
	C_XALLOCX,
	C_PAGE_POOL_ALLOC,
	C_PAGE_POOL_FREE,
	C_MUTEX_LOCK,
	C_MUTEX_TRYLOCK,
	C_MUTEX_TIMEDLOCK,
	C_RW_RDLOCK,
	C_RW_WRLOCK,
	C_RW_TRYRDLOCK,
	C_RW_TRYWRLOCK,
	C_RW_TIMEDRDLOCK,
	C_RW_TIMEDWRLOCK,
	C_RW_UNLOCK,
	C_SPIN_LOCK,
	C_SPIN_TRYLOCK,
	C_COND_WAIT,
	C_COND_TIMEDWAIT,
	C_APEX_RDLOCK,
	C_APEX_WRLOCK,
	C_ZONETABLE_ACQUIRE,
	C_ZONESET_RELEASE,
	C_COUNT
};
static const char *const counter_names[C_COUNT] = {
	"malloc",
	"calloc",
	"realloc",
	"free",
	"posix_memalign",
	"aligned_alloc",
	"strdup",
	"strndup",
	"xallocx",
	"apex_page_pool_alloc",
	"apex_page_pool_free",
	"pthread_mutex_lock",
	"pthread_mutex_trylock",
	"pthread_mutex_timedlock",
	"pthread_rwlock_rdlock",
	"pthread_rwlock_wrlock",
	"pthread_rwlock_tryrdlock",
	"pthread_rwlock_trywrlock",
	"pthread_rwlock_timedrdlock",
	"pthread_rwlock_timedwrlock",
	"pthread_rwlock_unlock",
	"pthread_spin_lock",
	"pthread_spin_trylock",
	"pthread_cond_wait",
	"pthread_cond_timedwait",
	"apex_rwlock_rdlock",
	"apex_rwlock_wrlock",
	"apex_zonetable_acquire",
	"apex_zoneset_release",
};

/* The counters live in their own mapping, which stays writable while the
 * program's data segment is read-only. */
static atomic_ulong *calls;
static volatile int counting;

static inline void count(int which)
{
	if (counting)
		atomic_fetch_add_explicit(&calls[which], 1, memory_order_relaxed);
}

static unsigned long total_calls(void)
{
	unsigned long sum = 0;
	for (int i = 0; i < C_COUNT; i++)
		sum += atomic_load(&calls[i]);
	return sum;
}

static void reset_calls(void)
{
	for (int i = 0; i < C_COUNT; i++)
		atomic_store(&calls[i], 0);
}

/* ------------------------------------------- region for zone memory */

/* While `region_active`, libapex's allocations are bump-allocated from
 * one reserved mapping (freed blocks are simply not reused), so that the
 * whole zone database can be made read-only in one mprotect() call. */
#define REGION_RESERVE ((size_t)256 << 20) /* the three zones take about 16 MiB */
#define REGION_HEADER 16                   /* the block's size, keeping 16-byte alignment */
static uint8_t *region_base;
static size_t region_used;
static int region_active;

static bool in_region(const void *p)
{
	return region_base != NULL && (const uint8_t *)p >= region_base &&
	       (const uint8_t *)p < region_base + REGION_RESERVE;
}

static void *region_alloc(size_t size, size_t align)
{
	if (align < 16)
		align = 16;
	size_t start = (region_used + REGION_HEADER + align - 1) & ~(align - 1);
	if (size > REGION_RESERVE || start + size > REGION_RESERVE) {
		errno = ENOMEM;
		return NULL;
	}
	region_used = start + size;
	memcpy(region_base + start - sizeof(size_t), &size, sizeof(size_t));
	return region_base + start;
}

static size_t region_block_size(const void *p)
{
	size_t size;
	memcpy(&size, (const uint8_t *)p - sizeof(size_t), sizeof(size_t));
	return size;
}

/* ------------------------------------------------------- the wrappers */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t align, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
#ifdef HAVE_JEMALLOC
size_t __real_xallocx(void *p, size_t size, size_t extra, int flags);
#endif
int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
int __real_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int __real_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int __real_pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t);
int __real_pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t);
int __real_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __real_pthread_spin_lock(pthread_spinlock_t *l);
int __real_pthread_spin_trylock(pthread_spinlock_t *l);
int __real_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __real_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int __real_apex_rwlock_rdlock(apex_rwlock_t *l);
int __real_apex_rwlock_wrlock(apex_rwlock_t *l);
apex_zoneset_t *__real_apex_zonetable_acquire(apex_zonetable_t *t, unsigned long long *g);
void __real_apex_zoneset_release(apex_zoneset_t *s);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_pthread_mutex_lock(pthread_mutex_t *m);
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m);
int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int __wrap_pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t);
int __wrap_pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t);
int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l);
int __wrap_pthread_spin_lock(pthread_spinlock_t *l);
int __wrap_pthread_spin_trylock(pthread_spinlock_t *l);
int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int __wrap_apex_rwlock_rdlock(apex_rwlock_t *l);
int __wrap_apex_rwlock_wrlock(apex_rwlock_t *l);
apex_zoneset_t *__wrap_apex_zonetable_acquire(apex_zonetable_t *t, unsigned long long *g);
void __wrap_apex_zoneset_release(apex_zoneset_t *s);

void *__wrap_malloc(size_t size)
{
	count(C_MALLOC);
	return region_active ? region_alloc(size, 16) : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	count(C_CALLOC);
	if (!region_active)
		return __real_calloc(n, size);
	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	return region_alloc(n * size, 16); /* fresh anonymous pages are zero */
}

void *__wrap_realloc(void *p, size_t size)
{
	count(C_REALLOC);
	if (p != NULL && in_region(p)) {
		size_t old = region_block_size(p);
		void *q = region_alloc(size, 16);
		if (q != NULL)
			memcpy(q, p, old < size ? old : size);
		return q;
	}
	if (p == NULL && region_active)
		return region_alloc(size, 16);
	return __real_realloc(p, size);
}

void __wrap_free(void *p)
{
	count(C_FREE);
	if (!in_region(p))
		__real_free(p);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	count(C_POSIX_MEMALIGN);
	if (!region_active)
		return __real_posix_memalign(p, align, size);
	*p = region_alloc(size, align);
	return *p ? 0 : ENOMEM;
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	count(C_ALIGNED_ALLOC);
	return region_active ? region_alloc(size, align) : __real_aligned_alloc(align, size);
}

#ifdef HAVE_JEMALLOC
size_t __wrap_xallocx(void *p, size_t size, size_t extra, int flags);

/* jemalloc's resize in place (an arena's chunk trimmed): a block of the
 * region keeps its size. */
size_t __wrap_xallocx(void *p, size_t size, size_t extra, int flags)
{
	count(C_XALLOCX);
	return in_region(p) ? region_block_size(p) : __real_xallocx(p, size, extra, flags);
}
#endif

void *__real_apex_page_pool_alloc(size_t pages);
void __real_apex_page_pool_free(void *p, size_t pages);
void *__wrap_apex_page_pool_alloc(size_t pages);
void __wrap_apex_page_pool_free(void *p, size_t pages);

/* The page pool's runs (small arenas' chunks) come from the region too,
 * so that they are made read-only with the rest of the zones. */
void *__wrap_apex_page_pool_alloc(size_t pages)
{
	count(C_PAGE_POOL_ALLOC);
	return region_active ? region_alloc(pages * APEX_PAGE_POOL_PAGE, APEX_PAGE_POOL_PAGE)
			     : __real_apex_page_pool_alloc(pages);
}

void __wrap_apex_page_pool_free(void *p, size_t pages)
{
	count(C_PAGE_POOL_FREE);
	if (!in_region(p))
		__real_apex_page_pool_free(p, pages);
}

char *__wrap_strdup(const char *s)
{
	count(C_STRDUP);
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	count(C_STRNDUP);
	return __real_strndup(s, n);
}

#define WRAP_LOCK(name, counter, type)   \
	int __wrap_##name(type *l)       \
	{                                \
		count(counter);          \
		return __real_##name(l); \
	}
WRAP_LOCK(pthread_mutex_lock, C_MUTEX_LOCK, pthread_mutex_t)
WRAP_LOCK(pthread_mutex_trylock, C_MUTEX_TRYLOCK, pthread_mutex_t)
WRAP_LOCK(pthread_rwlock_rdlock, C_RW_RDLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_rwlock_wrlock, C_RW_WRLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_rwlock_tryrdlock, C_RW_TRYRDLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_rwlock_trywrlock, C_RW_TRYWRLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_rwlock_unlock, C_RW_UNLOCK, pthread_rwlock_t)
WRAP_LOCK(pthread_spin_lock, C_SPIN_LOCK, pthread_spinlock_t)
WRAP_LOCK(pthread_spin_trylock, C_SPIN_TRYLOCK, pthread_spinlock_t)
WRAP_LOCK(apex_rwlock_rdlock, C_APEX_RDLOCK, apex_rwlock_t)
WRAP_LOCK(apex_rwlock_wrlock, C_APEX_WRLOCK, apex_rwlock_t)

int __wrap_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	count(C_MUTEX_TIMEDLOCK);
	return __real_pthread_mutex_timedlock(m, t);
}

int __wrap_pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	count(C_RW_TIMEDRDLOCK);
	return __real_pthread_rwlock_timedrdlock(l, t);
}

int __wrap_pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	count(C_RW_TIMEDWRLOCK);
	return __real_pthread_rwlock_timedwrlock(l, t);
}

int __wrap_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	count(C_COND_WAIT);
	return __real_pthread_cond_wait(c, m);
}

int __wrap_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	count(C_COND_TIMEDWAIT);
	return __real_pthread_cond_timedwait(c, m, t);
}

apex_zoneset_t *__wrap_apex_zonetable_acquire(apex_zonetable_t *t, unsigned long long *g)
{
	count(C_ZONETABLE_ACQUIRE);
	return __real_apex_zonetable_acquire(t, g);
}

void __wrap_apex_zoneset_release(apex_zoneset_t *s)
{
	count(C_ZONESET_RELEASE);
	__real_apex_zoneset_release(s);
}

/* ------------------------------------------------------------- queries */

enum { Z_ROOT, Z_FJ, Z_EXAMPLE, Z_COUNT };
static const char *const zone_files[Z_COUNT] = { "root.zone", "fj.zone", "example.nsec3.zone" };
static const char *const zone_origins[Z_COUNT] = { ".", "fj.", "example." };

enum { K_EXISTING, K_BELOW, K_JUNK, K_FEATURE, K_COUNT };

/* Names of example.nsec3.zone that reach the engine's special cases. */
static const char *const feature_names[] = {
	"x.wild.example.", "a.b.wild.example.",  "explicit.wild.example.", "y.wc.example.",
	"chain1.example.", "loop1.example.",     "dangling.example.",      "chainout.example.",
	"tosub.example.",  "x.dname.example.",   "host.dname.example.",    "a.b.c.ent.example.",
	"c.ent.example.",  "sub.example.",       "x.sub.example.",         "nods.example.",
	"mail.example.",   "_sip._tcp.example.", "www.example.",           "MiXeD.CaSe.example.",
};

typedef struct query {
	uint8_t wire[360];
	uint16_t size;
	struct sockaddr_storage peer; /* the client it comes from */
	uint8_t zone, kind;
	apex_transport_t transport;
	bool dnssec_ok;
	/* reference answer */
	uint32_t answer_size;
	uint64_t answer_hash;
} query_t;

#define QUERY_COUNT 6000
#define ROUNDS 4 /* each thread answers every query this many times */

static apex_zonetable_t table;
static apex_zoneset_t *zones;
static apex_answer_config_t cfg;
static query_t *queries;

/* The daemon's settings that reach the query path: server cookies (on by
 * default), NSID, and response rate limiting with a rate no query of the
 * test reaches (every answer is still compared with the reference). */
static const uint8_t cookie_secret[16] = "hotpath-secret!";
static const uint8_t nsid[] = "hotpath";
static const apex_rrl_config_t rrl_config = {
	.rate = 1000000000,
	.slip = 2,
	.ipv4_prefix = 24,
	.ipv6_prefix = 56,
	.table_size = 4096,
};
/* The batch clock is pinned after each batch so that server cookies,
 * which carry it, compare byte for byte with the reference answers. */
#define PINNED_NOW 1700000000u
static apex_worker_t *reference_worker;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so a failure is reproducible */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static const uint16_t qtypes[] = {
	APEX_TYPE_A,      APEX_TYPE_AAAA,       APEX_TYPE_NS,  APEX_TYPE_DS,    APEX_TYPE_SOA,
	APEX_TYPE_DNSKEY, APEX_TYPE_TXT,        APEX_TYPE_MX,  APEX_TYPE_CNAME, APEX_TYPE_ANY,
	APEX_TYPE_NSEC,   APEX_TYPE_NSEC3PARAM, APEX_TYPE_SRV, APEX_TYPE_DNAME, 99 /* SPF */,
};

/* EDNS options at random: an NSID request, a client cookie alone (the
 * server computes one), or with a server cookie that fails the check.
 * Returns the bytes written. */
static size_t add_options(uint8_t *p)
{
	size_t n = 0;
	if ((rng() & 3) == 0) {
		apex_write_u16(p, 3); /* NSID, empty */
		apex_write_u16(p + 2, 0);
		n += 4;
	}
	unsigned cookie = (unsigned)(rng() % 4); /* 0, 1: none; 2: client; 3: client + server */
	if (cookie >= 2) {
		size_t len = cookie == 2 ? 8 : 24;
		apex_write_u16(p + n, 10); /* COOKIE */
		apex_write_u16(p + n + 2, (uint16_t)len);
		for (size_t i = 0; i < len; i++)
			p[n + 4 + i] = (uint8_t)rng();
		n += 4 + len;
	}
	return n;
}

/* A client address at random: IPv4 from a few /24s, or IPv6. */
static void set_peer(struct sockaddr_storage *peer)
{
	memset(peer, 0, sizeof(*peer));
	if (rng() % 3 == 0) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)peer;
		in6->sin6_family = AF_INET6;
		in6->sin6_addr.s6_addr[0] = 0x20;
		in6->sin6_addr.s6_addr[1] = 0x01;
		in6->sin6_addr.s6_addr[2] = 0x0d;
		in6->sin6_addr.s6_addr[3] = 0xb8;
		in6->sin6_addr.s6_addr[15] = (uint8_t)rng();
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)peer;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr =
			htonl(0xc0000200u | (uint32_t)(rng() % 4) << 8 | (uint32_t)(rng() & 0xff));
	}
}

/* A query for `name` (wire format, `prefix` labels of random letters in
 * front), random type, random case, EDNS/DO/transport chosen at random. */
static void make_query(query_t *q, const uint8_t *name, int prefix)
{
	uint8_t *w = q->wire;
	size_t pos = APEX_HEADER_SIZE;
	memset(w, 0, APEX_HEADER_SIZE);
	apex_write_u16(w + APEX_HDR_ID, (uint16_t)rng());
	apex_write_u16(w + APEX_HDR_FLAGS, (rng() & 1) ? 0x0100 : 0); /* RD sometimes */
	apex_write_u16(w + APEX_HDR_QDCOUNT, 1);
	for (int i = 0; i < prefix; i++) {
		int len = 1 + (int)(rng() % 12);
		w[pos++] = (uint8_t)len;
		for (int j = 0; j < len; j++)
			w[pos++] = (uint8_t)("abcdefghijklmnopqrstuvwxyz0123456789-"[rng() % 37]);
	}
	size_t name_size = apex_name_size(name);
	memcpy(w + pos, name, name_size);
	/* random letter case: the question must come back as sent */
	for (size_t i = APEX_HEADER_SIZE; i < pos + name_size; i++) {
		if (w[i] >= 'a' && w[i] <= 'z' && (rng() & 3) == 0)
			w[i] -= 32;
	}
	pos += name_size;
	apex_write_u16(w + pos, qtypes[rng() % (sizeof(qtypes) / sizeof(qtypes[0]))]);
	apex_write_u16(w + pos + 2, 1);
	pos += 4;

	unsigned mode = (unsigned)(rng() % 10);
	q->transport = mode == 9 ? APEX_TRANSPORT_TCP : APEX_TRANSPORT_UDP;
	q->dnssec_ok = false;
	if (mode != 0) { /* mode 0: no EDNS, 512-byte limit */
		q->dnssec_ok = (rng() & 1) != 0;
		w[pos] = 0;
		apex_write_u16(w + pos + 1, APEX_TYPE_OPT);
		apex_write_u16(w + pos + 3, mode == 1 ? 4096 : 1232);
		w[pos + 5] = 0;
		w[pos + 6] = 0;
		apex_write_u16(w + pos + 7, q->dnssec_ok ? 0x8000 : 0);
		size_t rdlen_at = pos + 9;
		pos += 11;
		pos += add_options(w + pos);
		apex_write_u16(w + rdlen_at, (uint16_t)(pos - rdlen_at - 2));
		apex_write_u16(w + APEX_HDR_ARCOUNT, 1);
	}
	q->size = (uint16_t)pos;
	set_peer(&q->peer);
}

static void make_queries(void)
{
	for (size_t i = 0; i < QUERY_COUNT; i++) {
		query_t *q = &queries[i];
		q->zone = (uint8_t)(rng() % Z_COUNT);
		q->kind = (uint8_t)(rng() % K_COUNT);
		uint8_t origin[APEX_NAME_MAX];
		apex_name_from_str(zone_origins[q->zone], origin);
		const apex_zone_t *zone = apex_zoneset_get(zones, origin);
		const apex_node_t *node = apex_zone_node_at(zone, rng() % zone->node_count);
		switch (q->kind) {
		case K_EXISTING: /* the name itself: answers, NODATA, referrals at cuts, DS */
			make_query(q, node->name, 0);
			if (node->rrset_count > 0 && (rng() & 1)) /* a type it has */
				apex_write_u16(
					q->wire + APEX_HEADER_SIZE + apex_name_size(node->name),
					apex_node_rrsets(zone, node)[rng() % node->rrset_count]
						.type);
			break;
		case K_FEATURE: { /* wildcards, CNAME chains, DNAME, ENTs, cuts */
			uint8_t name[APEX_NAME_MAX];
			q->zone = Z_EXAMPLE;
			apex_name_from_str(feature_names[rng() % (sizeof(feature_names) /
								  sizeof(feature_names[0]))],
					   name);
			make_query(q, name, 0);
			break;
		}
		case K_BELOW: /* below an existing name: referrals, wildcards, DNAME, NXDOMAIN */
			make_query(q, node->name, 1 + (int)(rng() % 2));
			break;
		default: /* a junk name right under the apex: NXDOMAIN with proofs */
			make_query(q, zone->origin, 1);
			break;
		}
	}
}

/* A worker as the daemon sets one up (outside any window: it allocates
 * its rate-limiting table and takes the table's lock once). */
static apex_worker_t *new_worker(unsigned index)
{
	apex_worker_t *w = aligned_alloc(64, sizeof(*w));
	if (w == NULL || apex_worker_init(w, index, &table, &cfg, &rrl_config, 2) != APEX_OK)
		return NULL;
	return w;
}

/* What the daemon does between batches, with the clock pinned after. */
static void begin_batch(apex_worker_t *w)
{
	apex_worker_batch(w, false);
	w->now = PINNED_NOW;
}

/* ---------------------------------------------------- fixtures, loading */

static int setup(void **state)
{
	(void)state;
	calls = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	region_base = mmap(NULL, REGION_RESERVE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (calls == MAP_FAILED || region_base == MAP_FAILED)
		return -1;
	apex_answer_config_init(&cfg);
	cfg.cookie_secret = cookie_secret;
	cfg.nsid = nsid;
	cfg.nsid_size = sizeof(nsid) - 1;

	/* Everything libapex allocates from here on lives in the region. */
	region_active = 1;
	int rc = apex_zonetable_init(&table);
	for (int z = 0; z < Z_COUNT && rc == APEX_OK; z++) {
		char path[1024], err[512] = "";
		uint8_t origin[APEX_NAME_MAX];
		apex_zone_t *zone = NULL;
		snprintf(path, sizeof(path), "%s/zones/%s", APEX_SRCDIR, zone_files[z]);
		apex_name_from_str(zone_origins[z], origin);
		rc = apex_zone_load(path, origin, &zone, err, sizeof(err));
		if (rc == APEX_OK)
			rc = apex_precompute(zone);
		if (rc != APEX_OK)
			fprintf(stderr, "load %s: %s\n", path, err);
		else
			rc = apex_zonetable_publish(&table, zone);
	}
	unsigned long long generation;
	zones = rc == APEX_OK ? apex_zonetable_acquire(&table, &generation) : NULL;
	region_active = 0;
	if (zones == NULL)
		return -1;

	queries = calloc(QUERY_COUNT, sizeof(*queries));
	reference_worker = new_worker(0);
	if (queries == NULL || reference_worker == NULL)
		return -1;
	make_queries();
	return 0;
}

/* The zone memory stays mapped to the end: freeing it would hand region
 * pointers to the real allocator. */
static int teardown(void **state)
{
	(void)state;
	free(queries);
	return 0;
}

/* ------------------------------------------------ protection of memory */

typedef struct range {
	uintptr_t start, end;
} range_t;

#define MAX_RANGES 8
static range_t data_ranges[MAX_RANGES]; /* the program's writable segments */
static int data_range_count;

static int find_data_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	long page = sysconf(_SC_PAGESIZE);
	/* the first object is the program itself */
	for (int i = 0; i < info->dlpi_phnum && data_range_count < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W) == 0)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		uintptr_t end = start + ph->p_memsz;
		data_ranges[data_range_count].start = start & ~(uintptr_t)(page - 1);
		data_ranges[data_range_count].end =
			(end + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
		data_range_count++;
	}
	return 1; /* stop after the program */
}

static int protect_all(int prot)
{
	size_t region_len = (region_used + 4095) & ~(size_t)4095;
	if (mprotect(region_base, region_len, prot) != 0)
		return -1;
	for (int i = 0; i < data_range_count; i++) {
		if (mprotect((void *)data_ranges[i].start,
			     data_ranges[i].end - data_ranges[i].start, prot) != 0)
			return -1;
	}
	return 0;
}

static void on_fault(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	char msg[160];
	const char *where = in_region(si->si_addr) ? "zone memory" : "program data (.data/.bss)";
	int n = snprintf(msg, sizeof(msg), "test_hotpath: the query path wrote to %p (%s)\n",
			 si->si_addr, where);
	if (n > 0)
		(void)!write(2, msg, (size_t)n);
	_exit(3);
}

/* The signal handlers saved by arm_protection(). */
typedef struct protection {
	struct sigaction old_segv, old_bus;
} protection_t;

/* Find the program's writable segments and catch a write to them (or to
 * the zones) once protect_all(PROT_READ) is in force. */
static void arm_protection(protection_t *saved)
{
	struct sigaction fault = { 0 };

	data_range_count = 0;
	dl_iterate_phdr(find_data_segments, NULL);
	assert_true(data_range_count > 0);
	fault.sa_sigaction = on_fault;
	fault.sa_flags = SA_SIGINFO;
	sigemptyset(&fault.sa_mask);
	assert_int_equal(sigaction(SIGSEGV, &fault, &saved->old_segv), 0);
	assert_int_equal(sigaction(SIGBUS, &fault, &saved->old_bus), 0);
}

static void disarm_protection(const protection_t *saved)
{
	sigaction(SIGSEGV, &saved->old_segv, NULL);
	sigaction(SIGBUS, &saved->old_bus, NULL);
}

/* ------------------------------------------------------------ answering */

typedef struct worker {
	apex_worker_t *worker; /* this thread's answer path (worker.h) */
	pthread_t thread;
	pthread_barrier_t *start;
	uint8_t *out; /* this thread's own buffer */
	unsigned long answered;
	unsigned long mismatches;
	uint64_t allocated, deallocated; /* jemalloc bytes in the window */
	int jemalloc_ok;
} worker_t;

/* One query as a worker answers it: apex_worker_answer(), which is the
 * engine with the client's address, the statistics and RRL. */
static size_t answer_one(apex_worker_t *w, const query_t *q, uint8_t *out)
{
	size_t capacity = q->transport == APEX_TRANSPORT_TCP ? APEX_MAX_MESSAGE : 1232;
	return apex_worker_answer(w, q->transport, &q->peer, q->wire, q->size, out, capacity, NULL);
}

/*
 * The n queries from first answered as a worker's UDP batch answers them
 * where its zoneset reads ahead (src/apexd/serve/udp.c): each read ahead
 * (query/answer_ahead.h) some queries before its answer, which reuses
 * what was read.  Each answer is compared with the reference; returns
 * the mismatches, the bytes answered added to *bytes.
 */
static unsigned long answer_read_ahead(apex_worker_t *w, apex_answer_ahead_t *ring, size_t first,
				       int n, uint8_t *out, size_t *bytes)
{
	unsigned long mismatches = 0;

	for (int i = -APEX_AHEAD_BEGIN; i < n; i++) {
		int j = i + APEX_AHEAD_BEGIN;
		const query_t *next = j >= 0 && j < n ? &queries[first + (size_t)j] : NULL;
		apex_answer_ahead_step(ring, w->zones, i, n, next != NULL ? next->wire : NULL,
				       next != NULL ? next->size : 0);
		if (i < 0)
			continue;
		const query_t *q = &queries[first + (size_t)i];
		size_t capacity = q->transport == APEX_TRANSPORT_TCP ? APEX_MAX_MESSAGE : 1232;
		size_t size = apex_worker_answer_ahead(w, q->transport, &q->peer,
						       &ring[i % APEX_AHEAD_RING], q->wire, q->size,
						       out, capacity, NULL);
		if (size != q->answer_size || fnv1a(out, size) != q->answer_hash)
			mismatches++;
		*bytes += size;
	}
	return mismatches;
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
#ifdef HAVE_JEMALLOC
	uint64_t *allocatedp = NULL, *deallocatedp = NULL;
	size_t len = sizeof(allocatedp);
	w->jemalloc_ok = mallctl("thread.allocatedp", &allocatedp, &len, NULL, 0) == 0 &&
			 mallctl("thread.deallocatedp", &deallocatedp, &len, NULL, 0) == 0;
	uint64_t a0 = w->jemalloc_ok ? *allocatedp : 0, d0 = w->jemalloc_ok ? *deallocatedp : 0;
#endif
	apex_answer_ahead_t ring[APEX_AHEAD_RING];
	size_t bytes = 0;

	pthread_barrier_wait(w->start);
	for (int round = 0; round < ROUNDS; round++) {
		begin_batch(w->worker);
		if (round % 2 == 1) { /* read ahead, in batches of 64 */
			for (size_t i = 0; i < QUERY_COUNT; i += 64) {
				int n = QUERY_COUNT - i < 64 ? (int)(QUERY_COUNT - i) : 64;
				w->mismatches +=
					answer_read_ahead(w->worker, ring, i, n, w->out, &bytes);
				w->answered += (unsigned long)n;
			}
			continue;
		}
		for (size_t i = 0; i < QUERY_COUNT; i++) {
			const query_t *q = &queries[i];
			size_t size = answer_one(w->worker, q, w->out);
			if (size != q->answer_size || fnv1a(w->out, size) != q->answer_hash)
				w->mismatches++;
			w->answered++;
		}
	}
#ifdef HAVE_JEMALLOC
	if (w->jemalloc_ok) {
		w->allocated = *allocatedp - a0;
		w->deallocated = *deallocatedp - d0;
	}
#endif
	return NULL;
}

/* The reference answers, one thread, outside any window. */
static void reference_answers(uint8_t *out)
{
	begin_batch(reference_worker);
	for (size_t i = 0; i < QUERY_COUNT; i++) {
		query_t *q = &queries[i];
		size_t size = answer_one(reference_worker, q, out);
		q->answer_size = (uint32_t)size;
		q->answer_hash = fnv1a(out, size);
	}
}

/* --------------------------------------------------------------- tests */

static void *volatile sink;

/* Control: a call made inside the window is counted, outside it is not. */
static void test_wrapping_counts(void **state)
{
	(void)state;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

	reset_calls();
	sink = malloc(32);
	free(sink);
	assert_int_equal(total_calls(), 0);

	/* (through the volatile sink, so the compiler cannot elide them) */
	counting = 1;
	sink = malloc(32);
	sink = realloc(sink, 64);
	free(sink);
	sink = calloc(2, 8);
	free(sink);
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	counting = 0;
	assert_int_equal(atomic_load(&calls[C_MALLOC]), 1);
	assert_int_equal(atomic_load(&calls[C_REALLOC]), 1);
	assert_int_equal(atomic_load(&calls[C_CALLOC]), 1);
	assert_int_equal(atomic_load(&calls[C_FREE]), 2);
	assert_int_equal(atomic_load(&calls[C_MUTEX_LOCK]), 1);
	assert_int_equal(atomic_load(&calls[C_RW_RDLOCK]), 1);
	assert_int_equal(atomic_load(&calls[C_RW_UNLOCK]), 1);

	/* And calls made from inside libapex are seen too: acquiring a
	 * zoneset takes the table's lock (the daemon does this between
	 * batches, never per query). */
	reset_calls();
	counting = 1;
	unsigned long long generation;
	apex_zoneset_t *set = apex_zonetable_acquire(&table, &generation);
	counting = 0;
	assert_non_null(set);
	apex_zoneset_release(set);
	assert_int_equal(atomic_load(&calls[C_ZONETABLE_ACQUIRE]), 1);
	assert_true(atomic_load(&calls[C_APEX_RDLOCK]) >= 1);
	reset_calls();
}

/* The zones really live in the region: the wrapping reached libapex. */
static void test_zones_in_region(void **state)
{
	(void)state;
	const apex_zone_t *listed[Z_COUNT];
	assert_true(in_region(zones));
	assert_int_equal(zones->count, Z_COUNT);
	apex_zoneset_list(zones, listed);
	for (size_t i = 0; i < zones->count; i++) {
		const apex_zone_t *z = listed[i];
		assert_true(in_region(
			zones->bags.bag[apex_zone_bags_bag(apex_zone_bags_spread(z->apex->hash))]));
		assert_true(in_region(z));
		assert_true(in_region(z->node_pages));
		assert_true(in_region(z->node_pages[0]));
		assert_true(in_region(z->rrset_pages));
		assert_true(in_region(z->rrset_pages[0]));
		assert_true(in_region(z->apex->name));
		assert_true(in_region(z->soa->rdata));
	}
	assert_int_equal(zones->count, Z_COUNT);
	print_message("zone memory: %zu KiB in the protected region\n", region_used / 1024);
}

/* The query mix reaches every kind of answer the test claims to cover. */
static void test_mix_covers_answer_kinds(void **state)
{
	(void)state;
	uint8_t *out = malloc(APEX_MAX_MESSAGE);
	assert_non_null(out);
	unsigned referrals = 0, nx_nsec = 0, nx_nsec3 = 0, truncated = 0, large = 0, answers = 0;
	unsigned servfail = 0, dropped = 0, feature_answers = 0;

	begin_batch(reference_worker);
	for (size_t i = 0; i < QUERY_COUNT; i++) {
		const query_t *q = &queries[i];
		size_t size = answer_one(reference_worker, q, out);
		if (size < APEX_HEADER_SIZE) {
			dropped++;
			continue;
		}
		uint16_t flags = apex_read_u16(out + APEX_HDR_FLAGS);
		unsigned rcode = flags & 0xf;
		bool aa = (flags & 0x0400) != 0, tc = (flags & 0x0200) != 0;
		unsigned an = apex_read_u16(out + APEX_HDR_ANCOUNT);
		unsigned ns = apex_read_u16(out + APEX_HDR_NSCOUNT);
		truncated += tc;
		large += size > 1232;
		servfail += rcode == 2;
		if (rcode == 0 && !aa && an == 0 && ns > 0)
			referrals++;
		if (rcode == 0 && an > 0)
			answers++;
		if (rcode == 0 && an > 0 && q->kind == K_FEATURE)
			feature_answers++; /* wildcard, CNAME, DNAME synthesis... */
		/* NXDOMAIN with SOA + NSEC/NSEC3 proofs and their RRSIGs */
		if (rcode == 3 && q->dnssec_ok && ns >= 4 && !tc) {
			if (q->zone == Z_ROOT)
				nx_nsec++;
			else
				nx_nsec3++;
		}
	}
	free(out);
	print_message("mix: %u referrals, %u answers, %u NXDOMAIN+NSEC, %u NXDOMAIN+NSEC3, "
		      "%u TC, %u over 1232 bytes, %u wildcard/CNAME/DNAME answers\n",
		      referrals, answers, nx_nsec, nx_nsec3, truncated, large, feature_answers);
	assert_int_equal(dropped, 0);
	assert_int_equal(servfail, 0);
	assert_true(referrals >= 500);
	assert_true(answers >= 500);
	assert_true(nx_nsec >= 100);
	assert_true(nx_nsec3 >= 100);
	assert_true(truncated >= 10);
	assert_true(large >= 10);
	assert_true(feature_answers >= 100);
}

/* No allocator or lock call, one thread, thousands of queries, answered
 * one by one and read ahead. */
static void test_no_malloc_no_lock(void **state)
{
	(void)state;
	uint8_t *out = malloc(APEX_MAX_MESSAGE);
	assert_non_null(out);
	reference_answers(out); /* also warms every code path up first */

	static apex_answer_ahead_t ring[APEX_AHEAD_RING];
	unsigned long mismatches = 0;
	reset_calls();
	counting = 1;
	size_t total = 0;
	for (int round = 0; round < ROUNDS; round++) {
		begin_batch(reference_worker);
		for (size_t i = 0; i < QUERY_COUNT; i++)
			total += answer_one(reference_worker, &queries[i], out);
		/* and read ahead, as a batch whose zoneset reads ahead */
		for (size_t i = 0; i < QUERY_COUNT; i += 64)
			mismatches += answer_read_ahead(
				reference_worker, ring, i,
				QUERY_COUNT - i < 64 ? (int)(QUERY_COUNT - i) : 64, out, &total);
	}
	counting = 0;
	assert_int_equal(mismatches, 0);
	free(out);
	assert_true(total > 0);
	for (int i = 0; i < C_COUNT; i++) {
		if (atomic_load(&calls[i]) != 0)
			print_error("%s called %lu times in the query path\n", counter_names[i],
				    atomic_load(&calls[i]));
		assert_int_equal(atomic_load(&calls[i]), 0);
	}
}

/*
 * With dnstap on (queries and responses), the hook encodes and pushes
 * every frame on the worker's thread without an allocator or lock call;
 * each frame is queued or, the ring full, dropped, both counted.
 */
static void test_dnstap_no_malloc_no_lock(void **state)
{
	(void)state;
	apex_config_t config;
	apex_dnstap_t *tap = NULL;
	apex_worker_stats_t *stats = &reference_worker->stats;
	char err[256];
	uint8_t *out = malloc(APEX_MAX_MESSAGE);

	assert_non_null(out);
	memset(&config, 0, sizeof(config));
	config.dnstap.enable = config.dnstap.log_queries = config.dnstap.log_responses = true;
	assert_int_equal(apex_dnstap_open(&tap, &config, 1, &stats, err, sizeof(err)), APEX_OK);
	reference_worker->tap = apex_dnstap_log;
	reference_worker->tap_ctx = apex_dnstap_worker(tap, 0);
	uint64_t frames = atomic_load(&stats->dnstap_frames);
	uint64_t dropped = atomic_load(&stats->dnstap_dropped);
	uint64_t sent = 0;

	reset_calls();
	counting = 1;
	for (int round = 0; round < 2; round++) {
		begin_batch(reference_worker);
		for (size_t i = 0; i < QUERY_COUNT; i++)
			sent += answer_one(reference_worker, &queries[i], out) > 0;
	}
	counting = 0;
	reference_worker->tap = NULL;
	apex_dnstap_stop(tap);
	free(out);
	for (int i = 0; i < C_COUNT; i++) {
		if (atomic_load(&calls[i]) != 0)
			print_error("%s called %lu times with dnstap on\n", counter_names[i],
				    atomic_load(&calls[i]));
		assert_int_equal(atomic_load(&calls[i]), 0);
	}
	/* a frame for each query and each response sent; the 1 MiB ring holds
	 * some thousands, the rest dropped (nothing takes them here) */
	frames = atomic_load(&stats->dnstap_frames) - frames;
	dropped = atomic_load(&stats->dnstap_dropped) - dropped;
	print_message("dnstap: %llu frames queued, %llu dropped\n", (unsigned long long)frames,
		      (unsigned long long)dropped);
	assert_int_equal(frames + dropped, 2 * QUERY_COUNT + sent);
	assert_true(frames > 1000 && dropped > 0);
}

/* ------------------------------------------------------------ AF_XDP */

#define FAKE_RING 2048 /* as APEX_XSK_RING_SIZE */

/* The four rings of an AF_XDP socket as the kernel shares them: indices,
 * flags and entries, here in the test's memory. */
typedef struct fake_rings {
	uint32_t producer[4], consumer[4], flags[4];
	struct xdp_desc rx[FAKE_RING], tx[FAKE_RING];
	uint64_t fill[FAKE_RING], completion[FAKE_RING];
} fake_rings_t;

#define SET_RING(r, i, entries, is_producer)                     \
	do {                                                     \
		(r).mask = FAKE_RING - 1;                        \
		(r).size = FAKE_RING;                            \
		(r).producer = &rings->producer[i];              \
		(r).consumer = &rings->consumer[i];              \
		(r).flags = &rings->flags[i];                    \
		(r).ring = (entries);                            \
		(r).cached_prod = 0;                             \
		(r).cached_cons = (is_producer) ? FAKE_RING : 0; \
	} while (0)

/* A worker's AF_XDP state on fake rings: the frame area allocated, the
 * answer frames on the free stack, nothing open. */
static void fake_xsk(apex_xdp_worker_t *xdp, apex_worker_t *worker, fake_rings_t *rings)
{
	memset(xdp, 0, sizeof(*xdp));
	memset(rings, 0, sizeof(*rings));
	xdp->worker = worker;
	xdp->mtu = 1500;
	xdp->answer_capacity = 1232; /* answer_one()'s UDP capacity */
	xdp->xsk.fd = -1;
	xdp->xsk.area = malloc((size_t)APEX_XSK_FRAMES * APEX_XSK_FRAME_SIZE);
	assert_non_null(xdp->xsk.area);
	SET_RING(xdp->xsk.rx, 0, rings->rx, false);
	SET_RING(xdp->xsk.tx, 1, rings->tx, true);
	SET_RING(xdp->xsk.fill, 2, rings->fill, true);
	SET_RING(xdp->xsk.completion, 3, rings->completion, false);
	for (uint32_t i = 0; i < APEX_XSK_RING_SIZE; i++)
		xdp->xsk.free[i] = (uint64_t)(APEX_XSK_RING_SIZE + i) * APEX_XSK_FRAME_SIZE;
	xdp->xsk.free_count = APEX_XSK_RING_SIZE;
}

/* q as the kernel hands it over: Ethernet, IPv4 or IPv6 as its peer,
 * UDP from port 40000 to 53.  Returns the frame's size. */
static size_t query_frame(const query_t *q, uint8_t *f)
{
	bool v6 = q->peer.ss_family == AF_INET6;
	size_t ip_header = v6 ? 40 : 20, udp_length = 8 + q->size;

	memset(f, 0, 14 + ip_header + 8);
	f[0] = 0x02, f[6] = 0x02, f[11] = 1;
	f[12] = v6 ? 0x86 : 0x08, f[13] = v6 ? 0xdd : 0x00;
	uint8_t *ip = f + 14, *udp = f + 14 + ip_header;
	if (v6) {
		ip[0] = 0x60, ip[4] = (uint8_t)(udp_length >> 8), ip[5] = (uint8_t)udp_length;
		ip[6] = 17, ip[7] = 64;
		memcpy(ip + 8, &((const struct sockaddr_in6 *)&q->peer)->sin6_addr, 16);
		ip[24] = 0x20, ip[25] = 0x01, ip[26] = 0x0d, ip[27] = 0xb8,
		ip[39] = 1; /* 2001:db8::1 */
	} else {
		size_t total = 20 + udp_length;
		ip[0] = 0x45, ip[2] = (uint8_t)(total >> 8), ip[3] = (uint8_t)total;
		ip[8] = 64, ip[9] = 17;
		memcpy(ip + 12, &((const struct sockaddr_in *)&q->peer)->sin_addr, 4);
		ip[16] = 192, ip[19] = 1;
		uint16_t check = (uint16_t)~apex_xdp_checksum(0, ip, 20);
		memcpy(ip + 10, &check, 2);
	}
	udp[0] = 40000 >> 8, udp[1] = 40000 & 0xff, udp[3] = 53;
	udp[4] = (uint8_t)(udp_length >> 8), udp[5] = (uint8_t)udp_length;
	memcpy(udp + 8, q->wire, q->size);
	return 14 + ip_header + udp_length;
}

/*
 * The UDP queries of the mix in batches through apex_xdp_worker_serve():
 * no allocator or lock call inside it, and each answer frame's message is
 * what apex_worker_answer() gives another worker at the same clock.
 */
static void xdp_no_malloc_no_lock(bool read_ahead)
{
	fake_rings_t *rings = malloc(sizeof(*rings)); /* not in .bss: that is protected */
	apex_xdp_worker_t *xdp = malloc(sizeof(*xdp));
	protection_t saved;
	apex_worker_t *w = new_worker(7), *sockets = new_worker(8);
	uint8_t *expect = malloc(APEX_MAX_MESSAGE);
	size_t served = 0, answered = 0, mismatches = 0;
	unsigned long calls_seen = 0;

	assert_non_null(xdp);
	assert_non_null(w);
	assert_non_null(sockets);
	assert_non_null(expect);
	assert_non_null(rings);
	fake_xsk(xdp, w, rings);
	apex_worker_batch(w, false);
	/* a set of small zones is not read ahead; told it is, the batch
	 * reads every frame and query ahead (the lookups' own steps skip
	 * small tables) */
	bool was = zones->read_ahead;
	zones->read_ahead = read_ahead;
	/* the zones and the program's data read-only while a batch is served */
	arm_protection(&saved);
	for (size_t i = 0; i < QUERY_COUNT;) {
		const query_t *batch[APEX_XDP_BATCH];
		uint32_t n = 0;

		/* the kernel: query frames into fill-ring buffers, on the rx ring */
		for (; i < QUERY_COUNT && n < APEX_XDP_BATCH; i++) {
			if (queries[i].transport != APEX_TRANSPORT_UDP)
				continue;
			uint64_t addr = (uint64_t)n * APEX_XSK_FRAME_SIZE + 256;
			struct xdp_desc *d = &rings->rx[rings->producer[0] & (FAKE_RING - 1)];
			d->addr = addr;
			d->len = (uint32_t)query_frame(&queries[i], xdp->xsk.area + addr);
			batch[n++] = &queries[i];
			rings->producer[0]++;
		}
		if (n == 0)
			break;
		uint32_t tx_before = rings->producer[1];
		reset_calls();
		counting = 1;
		assert_int_equal(protect_all(PROT_READ), 0);
		uint32_t taken = apex_xdp_worker_serve(xdp);
		assert_int_equal(protect_all(PROT_READ | PROT_WRITE), 0);
		counting = 0;
		served += taken;
		calls_seen += total_calls();

		/* the socket path, at the batch's clock, for the same queries */
		apex_worker_batch(sockets, false);
		sockets->now = w->now;
		sockets->now_ms = w->now_ms;
		uint32_t t = tx_before;
		for (uint32_t k = 0; k < n; k++) {
			const query_t *q = batch[k];
			size_t size = apex_worker_answer(sockets, APEX_TRANSPORT_UDP, &q->peer,
							 q->wire, q->size, expect, 1232, NULL);
			if (size == 0)
				continue;
			const struct xdp_desc *d = &rings->tx[t++ & (FAKE_RING - 1)];
			const uint8_t *frame = xdp->xsk.area + d->addr;
			size_t header = q->peer.ss_family == AF_INET6 ? 14 + 40 + 8 : 14 + 20 + 8;
			if (d->len != header + size || memcmp(frame + header, expect, size) != 0)
				mismatches++;
			answered++;
		}
		assert_int_equal(t, rings->producer[1]);
		/* the kernel: frames sent (completion ring), buffers taken back */
		for (; rings->consumer[1] != rings->producer[1]; rings->consumer[1]++)
			rings->completion[rings->producer[3]++ & (FAKE_RING - 1)] =
				rings->tx[rings->consumer[1] & (FAKE_RING - 1)].addr;
		rings->consumer[2] = rings->producer[2];
	}
	disarm_protection(&saved);
	zones->read_ahead = was;
	print_message("xdp%s: %zu frames served, %zu answers compared, the zones and the "
		      "program's data read-only\n",
		      read_ahead ? " (read ahead)" : "", served, answered);
	for (int i = 0; i < C_COUNT; i++) {
		if (atomic_load(&calls[i]) != 0)
			print_error("%s called %lu times in the XDP path\n", counter_names[i],
				    atomic_load(&calls[i]));
	}
	assert_int_equal(calls_seen, 0);
	assert_int_equal(mismatches, 0);
	assert_true(served > 3000 && answered > 3000);
	assert_int_equal(atomic_load(&w->stats.xdp_received), served);
	assert_int_equal(atomic_load(&w->stats.xdp_sent), answered);
	assert_int_equal(atomic_load(&w->stats.xdp_invalid), 0);
	free(xdp->xsk.area);
	free(xdp);
	free(rings);
	free(expect);
	apex_worker_free(w);
	apex_worker_free(sockets);
	free(w);
	free(sockets);
}

static void test_xdp_no_malloc_no_lock(void **state)
{
	(void)state;
	xdp_no_malloc_no_lock(false);
	xdp_no_malloc_no_lock(true);
}

/* The worker's own statistics saw every query, and the cookie paths ran. */
static void check_worker_stats(apex_worker_t *w, unsigned long answered)
{
	apex_worker_stats_t *s = &w->stats;
	uint64_t counted = atomic_load(&s->dropped);
	for (int i = 0; i < APEX_STATS_RCODES; i++)
		counted += atomic_load(&s->rcode[i]);
	assert_int_equal(counted, answered);
	/* RSSAC002's counters: every message received and every response
	 * sent by transport and family, each in one size bucket */
	uint64_t received = 0, sent = 0, request_sizes = 0, response_sizes = 0, by_zone = 0;
	for (int t = 0; t < APEX_STATS_TRANSPORTS; t++) {
		for (int f = 0; f < APEX_STATS_FAMILIES; f++) {
			received += atomic_load(&s->received[t][f]);
			sent += atomic_load(&s->sent[t][f]);
		}
		for (int i = 0; i < APEX_STATS_REQUEST_SIZES; i++)
			request_sizes += atomic_load(&s->request_size[t][i]);
		for (int i = 0; i < APEX_STATS_RESPONSE_SIZES; i++)
			response_sizes += atomic_load(&s->response_size[t][i]);
	}
	for (int i = 0; i < APEX_STATS_ZONES; i++)
		by_zone += atomic_load(&s->zone_queries[i]);
	assert_int_equal(received, answered);
	assert_int_equal(request_sizes, answered);
	assert_int_equal(sent, answered - atomic_load(&s->dropped));
	assert_int_equal(response_sizes, sent);
	assert_true(by_zone > 0 && by_zone <= sent);
	assert_true(atomic_load(&s->dnssec_ok) > 0);
	assert_true(atomic_load(&s->edns) > atomic_load(&s->dnssec_ok));
	assert_true(atomic_load(&s->cookie_client) > 0);
	assert_true(atomic_load(&s->cookie_invalid) > 0);
	assert_int_equal(atomic_load(&s->rrl_dropped), 0);
}

/*
 * Two threads answer at once with the zones and the program's data
 * read-only: no write to shared memory, no allocation, no lock, and
 * answers identical to the reference.
 */
static void test_concurrent_read_only(void **state)
{
	(void)state;
	enum { THREADS = 2 };
	worker_t workers[THREADS];
	pthread_barrier_t start;
	protection_t saved;

	uint8_t *ref = malloc(APEX_MAX_MESSAGE);
	assert_non_null(ref);
	reference_answers(ref);
	free(ref);

	memset(workers, 0, sizeof(workers));
	for (int t = 0; t < THREADS; t++) {
		workers[t].out = malloc(APEX_MAX_MESSAGE);
		assert_non_null(workers[t].out);
		workers[t].worker = new_worker((unsigned)t + 1);
		assert_non_null(workers[t].worker);
		workers[t].start = &start;
	}
	assert_int_equal(pthread_barrier_init(&start, NULL, THREADS), 0);
	arm_protection(&saved);

	reset_calls();
	counting = 1;
	assert_int_equal(protect_all(PROT_READ), 0);

	/* Control: the protection is in force (a write in a child faults). */
	pid_t child = fork();
	if (child == 0) {
		signal(SIGSEGV, SIG_DFL);
		const apex_zone_t *listed[Z_COUNT];
		apex_zoneset_list(zones, listed);
		*(volatile uint8_t *)listed[0]->node_pages[0] = 0;
		_exit(0);
	}
	pid_t child2 = fork();
	if (child2 == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile uint16_t *)&cfg.edns_payload = 0; /* the program's .bss */
		_exit(0);
	}

	for (int t = 0; t < THREADS; t++)
		pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]);
	for (int t = 0; t < THREADS; t++)
		pthread_join(workers[t].thread, NULL);

	int prot_rc = protect_all(PROT_READ | PROT_WRITE);
	counting = 0;
	disarm_protection(&saved);
	pthread_barrier_destroy(&start);
	assert_int_equal(prot_rc, 0);

	int status1 = 0, status2 = 0;
	assert_int_equal(waitpid(child, &status1, 0), child);
	assert_int_equal(waitpid(child2, &status2, 0), child2);
	assert_true(WIFSIGNALED(status1) && WTERMSIG(status1) == SIGSEGV);
	assert_true(WIFSIGNALED(status2) && WTERMSIG(status2) == SIGSEGV);

	for (int t = 0; t < THREADS; t++) {
		print_message("thread %d: %lu answers, %lu mismatches", t, workers[t].answered,
			      workers[t].mismatches);
		if (workers[t].jemalloc_ok)
			print_message(", jemalloc: %llu bytes allocated, %llu freed",
				      (unsigned long long)workers[t].allocated,
				      (unsigned long long)workers[t].deallocated);
		print_message("\n");
		assert_int_equal(workers[t].answered, (unsigned long)ROUNDS * QUERY_COUNT);
		assert_int_equal(workers[t].mismatches, 0);
		if (workers[t].jemalloc_ok) {
			assert_int_equal(workers[t].allocated, 0);
			assert_int_equal(workers[t].deallocated, 0);
		}
		check_worker_stats(workers[t].worker, workers[t].answered);
		apex_worker_free(workers[t].worker);
		free(workers[t].worker);
		free(workers[t].out);
	}
	for (int i = 0; i < C_COUNT; i++) {
		if (atomic_load(&calls[i]) != 0)
			print_error("%s called %lu times in the query path\n", counter_names[i],
				    atomic_load(&calls[i]));
		assert_int_equal(atomic_load(&calls[i]), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrapping_counts),
		cmocka_unit_test(test_zones_in_region),
		cmocka_unit_test(test_mix_covers_answer_kinds),
		cmocka_unit_test(test_no_malloc_no_lock),
		cmocka_unit_test(test_dnstap_no_malloc_no_lock),
		cmocka_unit_test(test_xdp_no_malloc_no_lock),
		cmocka_unit_test(test_concurrent_read_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
