/*
 * Reading an RFC 1035 master file into a zone builder.
 *
 * The file is mapped and split into records here ((...) continuation
 * lines, comments, quoted strings, $ORIGIN, $TTL and $INCLUDE), so that
 * every record keeps the line it starts on.  Records of the types that
 * make up large zones are turned into wire format by rdata_text.c
 * straight into the loader's memory; every other record (other types,
 * RFC 3597 "\#" forms, anything the fast path does not take) is parsed
 * by ldns as before.  apex_zone_build() does the rest.
 *
 * A large file is cut into chunks at line starts that begin a record
 * with an owner name, and the chunks are parsed on one thread per CPU
 * (each into its own records, owners and memory), then merged in file
 * order, so that line numbers, duplicate removal and "first TTL wins"
 * do not depend on the threads.  Each chunk starts with the $ORIGIN and
 * $TTL in force where it starts, found by a quick scan for lines that
 * begin with '$'.  If the guess could be wrong (a file with $INCLUDE,
 * a '$' line that was not a directive, a chunk that ends inside
 * parentheses) or any chunk fails, the file is parsed again on one
 * thread, which also gives the first error in file order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* CPU_COUNT */
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/build.h"
#include "zone/load.h"
#include "zone/load_tuning.h"
#include "zone/rdata_text.h"

#define INCLUDE_DEPTH_MAX 16
#define LDNS_DEFAULT_TTL_VALUE 3600
#define THREADS_MAX 64
/* Parsed parts of the mapped file are dropped from memory every so often. */
#define DROP_BEHIND (8u << 20)

_Atomic bool apex_load_fast_rdata = true;
_Atomic size_t apex_load_chunk_min = 8u << 20;
_Atomic unsigned apex_load_threads = 0;

/* ------------------------------------------------------------ memory */

/* Where the records of one thread go.  Names, keys and RDATA are packed
 * (no alignment, no per-object header: a record's RDATA is often 4 to 20
 * bytes) into keep, whose memory the version adopts before it is built:
 * the version uses them where the loader wrote them (build.h). */
typedef struct sink {
	apex_arena_t *keep;
	apex_arena_t *scratch;     /* canonical forms that differ, freed after the build */
	apex_build_owner_t *owners;
	size_t owner_count, owner_cap;
	uint32_t *table;           /* owner hash table: index + 1, 0 = empty */
	size_t table_size;         /* power of two */
	uint32_t last_owner;       /* records usually share owners */
	bool have_last;
	apex_build_rr_t *rrs;
	size_t rr_count, rr_cap;
	uint32_t default_ttl;      /* $TTL, shared with included files */
	size_t directives;         /* $ORIGIN and $TTL lines executed */
	uint8_t rdata[APEX_RDATA_MAX];      /* the record being parsed */
	uint8_t canonical[APEX_RDATA_MAX];  /* its canonical form */
} sink_t;

/* A new empty sink, or NULL.  Freed by sink_free(). */
static sink_t *sink_new(void)
{
	sink_t *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->keep = apex_arena_create();
	s->scratch = apex_arena_create();
	if (s->keep == NULL || s->scratch == NULL) {
		apex_arena_destroy(s->keep);
		apex_arena_destroy(s->scratch);
		free(s);
		return NULL;
	}
	return s;
}

/* Copy of data in arena a, packed; NULL on failure. */
static void *packed_dup(apex_arena_t *a, const void *data, size_t size)
{
	void *p = apex_arena_alloc_packed(a, size);
	if (p != NULL)
		memcpy(p, data, size);
	return p;
}

static void sink_free(sink_t *s)
{
	apex_arena_destroy(s->keep);  /* NULL once the version adopted it */
	apex_arena_destroy(s->scratch);
	free(s->owners);
	free(s->table);
	free(s->rrs);
	free(s);
}

/* ------------------------------------------------------------ loader */

/* Everything shared by the files of one load. */
typedef struct loader {
	apex_zone_builder_t *b;
	size_t file_cap;
	sink_t **sinks;             /* all sinks whose memory the builder uses */
	size_t sink_count;
} loader_t;

/* One range of a mapped file being read. */
typedef struct reader {
	loader_t *ld;
	sink_t *sink;
	const char *path;           /* as shown in messages */
	uint16_t file_index;
	const char *p, *end;        /* the text left to read */
	const char *dropped;        /* mapped pages before this were released */
	int line;
	char *rec;                  /* current record, one line of text */
	size_t rec_len, rec_cap;
	char *err;                  /* message buffer (the builder's, or the chunk's) */
	size_t err_size;
	uint8_t origin[APEX_NAME_MAX];
	ldns_rdf *origin_rdf;       /* origin for ldns, made when needed */
	uint8_t prev[APEX_NAME_MAX];/* owner of the previous record */
	bool have_prev;
} reader_t;

static int load_file(loader_t *ld, sink_t *sink, const char *path, const uint8_t *origin,
		     int depth);

static int fail(reader_t *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Write "FILE:LINE: reason" (or "FILE: reason" when line is 0). */
static int fail(reader_t *r, int line, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(r->err, r->err_size, "%s:%d: %s", r->path, line, reason);
	else
		snprintf(r->err, r->err_size, "%s: %s", r->path, reason);
	return APEX_ELOAD;
}

static int rec_reserve(reader_t *r, size_t more)
{
	if (r->rec_len + more + 2 <= r->rec_cap)
		return APEX_OK;
	size_t cap = r->rec_cap ? r->rec_cap : 1024;
	while (cap < r->rec_len + more + 2)
		cap *= 2;
	char *p = realloc(r->rec, cap);
	if (p == NULL)
		return APEX_ENOMEM;
	r->rec = p;
	r->rec_cap = cap;
	return APEX_OK;
}

/* Release the mapped pages already read (they count as resident memory). */
static void drop_behind(reader_t *r)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)r->dropped + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t to = (uintptr_t)r->p & ~((uintptr_t)page - 1);
	if (to > from + DROP_BEHIND) {
		madvise((void *)from, to - from, MADV_DONTNEED);
		r->dropped = (const char *)to;
	}
}

/* Characters that read_record() treats one by one; every other one is
 * copied as it is. */
static const bool special_char[256] = {
	[';'] = true, ['"'] = true, ['\\'] = true, ['('] = true, [')'] = true,
	['\n'] = true, ['\r'] = true,
};

/*
 * Read the next record into r->rec as a single line: comments removed,
 * parentheses joined, leading white space kept (it means "same owner").
 * Returns 1 with *start_line set, 0 at end of text, or an error.
 */
static int read_record(reader_t *r, int *start_line)
{
	int depth = 0;
	int open_line = 0;
	bool content = false;
	if (rec_reserve(r, 0) != APEX_OK)
		return APEX_ENOMEM;
	r->rec_len = 0;
	r->rec[0] = '\0';
	*start_line = 0;
	if (r->p - r->dropped > (ptrdiff_t)(2 * DROP_BEHIND))
		drop_behind(r);
	for (;;) {
		if (r->p >= r->end) {
			if (depth > 0)
				return fail(r, open_line, "unbalanced parenthesis");
			return content ? 1 : 0;
		}
		const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
		const char *line = r->p;
		size_t n = nl ? (size_t)(nl - r->p) + 1 : (size_t)(r->end - r->p);
		r->p += n;
		r->line++;
		if (rec_reserve(r, n) != APEX_OK)
			return APEX_ENOMEM;
		char *out = r->rec + r->rec_len;
		bool in_quote = false;
		for (size_t i = 0; i < n; i++) {
			char c = line[i];
			if (!in_quote && !special_char[(uint8_t)c]) {
				/* A run of characters copied as they are (most of
				 * a record); only the first non-blank one matters
				 * for `content`. */
				size_t j = i + 1;
				while (j < n && !special_char[(uint8_t)line[j]])
					j++;
				if (!content) {
					for (size_t k = i; k < j; k++) {
						if (line[k] != ' ' && line[k] != '\t') {
							content = true;
							*start_line = r->line;
							break;
						}
					}
				}
				memcpy(out, line + i, j - i);
				out += j - i;
				i = j - 1;
				continue;
			}
			if (in_quote) {
				*out++ = c;
				if (c == '\\' && i + 1 < n)
					*out++ = line[++i];
				else if (c == '"')
					in_quote = false;
			} else if (c == ';') {
				break;
			} else if (c == '"') {
				in_quote = true;
				*out++ = c;
			} else if (c == '\\') {
				*out++ = c;
				if (i + 1 < n && line[i + 1] != '\n')
					*out++ = line[++i];
			} else if (c == '(') {
				if (depth++ == 0)
					open_line = r->line;
				*out++ = ' ';
			} else if (c == ')') {
				if (--depth < 0)
					return fail(r, r->line, "unbalanced parenthesis");
				*out++ = ' ';
			} else if (c == '\n' || c == '\r') {
				*out++ = ' ';
			} else {
				*out++ = c;
			}
			if (!content && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '(' &&
			    c != ')') {
				content = true;
				*start_line = r->line;
			}
		}
		r->rec_len = (size_t)(out - r->rec);
		r->rec[r->rec_len] = '\0';
		if (in_quote)
			return fail(r, r->line, "unterminated quoted string");
		if (depth == 0) {
			if (content)
				return 1;
			r->rec_len = 0;  /* blank or comment-only line */
			r->rec[0] = '\0';
		}
	}
}

/* Next white-space separated token of s (quotes stripped); NULL at end. */
static char *next_token(char **s)
{
	char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\0')
		return NULL;
	char *tok = p;
	if (*p == '"') {
		tok = ++p;
		while (*p != '\0' && *p != '"')
			p++;
	} else {
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
	}
	if (*p != '\0')
		*p++ = '\0';
	*s = p;
	return tok;
}

/* A name for $ORIGIN / $INCLUDE: absolute, or relative to origin.
 * Parsed by ldns as before; returns the wire size or 0. */
static size_t directive_name(const char *text, const uint8_t *origin, uint8_t *out)
{
	ldns_rdf *origin_rdf = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, apex_name_size(origin),
						     origin);
	if (origin_rdf == NULL)
		return 0;
	size_t len = strlen(text);
	bool absolute = len > 0 && text[len - 1] == '.' && (len < 2 || text[len - 2] != '\\');
	ldns_rdf *name = NULL;
	if (absolute) {
		name = ldns_dname_new_frm_str(text);
	} else {
		char *origin_text = ldns_rdf2str(origin_rdf);
		size_t size = origin_text ? len + strlen(origin_text) + 2 : 0;
		char *full = origin_text ? malloc(size) : NULL;
		if (full != NULL) {
			if (strcmp(origin_text, ".") == 0)
				snprintf(full, size, "%s.", text);
			else
				snprintf(full, size, "%s.%s", text, origin_text);
			name = ldns_dname_new_frm_str(full);
		}
		free(full);
		free(origin_text);
	}
	ldns_rdf_deep_free(origin_rdf);
	size_t size = 0;
	if (name != NULL && ldns_rdf_size(name) <= APEX_NAME_MAX && ldns_rdf_size(name) > 0 &&
	    ldns_rdf_data(name)[ldns_rdf_size(name) - 1] == 0) {
		size = ldns_rdf_size(name);
		memcpy(out, ldns_rdf_data(name), size);
	}
	ldns_rdf_deep_free(name);
	return size;
}

static uint64_t key_hash(const uint8_t *key, size_t size)
{
	uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
	for (size_t i = 0; i < size; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

/* Rebuild the owner table with room for `owners` owners at a load
 * factor of at most 1/2 (at least twice its size). */
static int table_resize(sink_t *s, size_t owners)
{
	size_t size = s->table_size ? s->table_size * 2 : 4096;
	while (size / 2 < owners)
		size *= 2;
	uint32_t *table = calloc(size, sizeof(*table));
	if (table == NULL)
		return APEX_ENOMEM;
	for (size_t i = 0; i < s->owner_count; i++) {
		size_t slot = key_hash(s->owners[i].key, s->owners[i].key_size) & (size - 1);
		while (table[slot] != 0)
			slot = (slot + 1) & (size - 1);
		table[slot] = (uint32_t)i + 1;
	}
	free(s->table);
	s->table = table;
	s->table_size = size;
	return APEX_OK;
}

static bool owner_is(const apex_build_owner_t *o, const uint8_t *key, size_t key_size)
{
	return o->key_size == key_size && memcmp(o->key, key, key_size) == 0;
}

/* Index of the owner with this key in s (added if new, its name and
 * key copied into s's memory) in *index. */
static int owner_intern(sink_t *s, const apex_build_owner_t *like, uint32_t *index)
{
	if (s->have_last && owner_is(&s->owners[s->last_owner], like->key, like->key_size)) {
		*index = s->last_owner;
		return APEX_OK;
	}
	if ((s->owner_count + 1) * 2 > s->table_size && table_resize(s, s->owner_count + 1) != APEX_OK)
		return APEX_ENOMEM;
	size_t mask = s->table_size - 1;
	size_t slot = key_hash(like->key, like->key_size) & mask;
	while (s->table[slot] != 0) {
		uint32_t i = s->table[slot] - 1;
		if (owner_is(&s->owners[i], like->key, like->key_size)) {
			*index = s->last_owner = i;
			s->have_last = true;
			return APEX_OK;
		}
		slot = (slot + 1) & mask;
	}
	if (s->owner_count == s->owner_cap) {
		size_t cap = s->owner_cap ? s->owner_cap * 2 : 1024;
		apex_build_owner_t *p = realloc(s->owners, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		s->owners = p;
		s->owner_cap = cap;
	}
	if (s->owner_count >= UINT32_MAX - 1)
		return APEX_ENOMEM;
	apex_build_owner_t *o = &s->owners[s->owner_count];
	*o = *like;
	o->name = packed_dup(s->keep, like->name, like->name_size);
	o->key = packed_dup(s->keep, like->key, like->key_size);
	if (o->name == NULL || o->key == NULL)
		return APEX_ENOMEM;
	s->table[slot] = (uint32_t)s->owner_count + 1;
	*index = s->last_owner = (uint32_t)s->owner_count;
	s->have_last = true;
	s->owner_count++;
	return APEX_OK;
}

/* RFC 4034 section 6.2: types whose embedded names are lowercased in the
 * canonical form (NSEC excluded, RFC 6840 section 5.1). */
static bool type_has_canonical_names(uint16_t type)
{
	switch (type) {
	case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9:  /* NS..MR */
	case 12: case 14: case 15: case 17: case 18: case 21: case 24:   /* PTR MINFO MX RP AFSDB RT SIG */
	case 26: case 30: case 33: case 35: case 36: case 38: case 39:   /* PX NXT SRV NAPTR KX A6 DNAME */
	case 46:                                                         /* RRSIG */
		return true;
	default:
		return false;
	}
}

/* Where the one embedded name of a fast-path type starts in its RDATA
 * (the canonical form lowercases it), or -1 for none. */
static int fast_name_offset(uint16_t type)
{
	switch (type) {
	case APEX_TYPE_NS: case APEX_TYPE_CNAME: case APEX_TYPE_DNAME: case APEX_TYPE_PTR:
		return 0;
	case APEX_TYPE_MX:
		return 2;
	case APEX_TYPE_SRV:
		return 6;
	case APEX_TYPE_RRSIG:
		return 18;
	default:
		return -1;
	}
}

static bool has_upper(const uint8_t *p, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] >= 'A' && p[i] <= 'Z')
			return true;
	return false;
}

/*
 * Store one record: the checks common to both parsers, then the owner,
 * and the RDATA (behind its length, as build.h wants it) and its
 * canonical form (RFC 4034 section 6.2) copied into the sink's memory;
 * the canonical form shares the RDATA's memory when canonical_in is
 * rdata (no embedded name with capitals).
 */
static int store_rr(reader_t *r, int line, const uint8_t *owner, uint16_t type, uint32_t ttl,
		    const uint8_t *rdata, size_t rdlength, const uint8_t *canonical_in)
{
	sink_t *s = r->sink;
	const apex_zone_t *zone = r->ld->b->zone;
	char text[APEX_NAME_MAX * 4 + 1];

	if (ttl > INT32_MAX)
		return fail(r, line, "TTL %u out of range (RFC 2181 section 8)", ttl);
	if (!apex_name_is_subdomain(owner, zone->origin))
		return fail(r, line, "%s is outside the zone %s",
			    apex_name_to_str(owner, text, sizeof(text)),
			    apex_name_to_str(zone->origin, text + sizeof(text) / 2, sizeof(text) / 2));
	if (rdlength > 65535)
		return fail(r, line, "rdata longer than 65535 bytes");

	apex_build_owner_t like;
	uint8_t key[APEX_KEY_MAX];
	like.name = owner;
	like.name_size = (uint8_t)apex_name_size(owner);
	uint32_t owner_index;
	if (s->have_last && s->owners[s->last_owner].name_size == like.name_size &&
	    memcmp(s->owners[s->last_owner].name, owner, like.name_size) == 0) {
		/* The owner of the last record, spelled the same (most records). */
		owner_index = s->last_owner;
	} else {
		like.key = key;
		like.key_size = (uint16_t)apex_name_key(owner, key, NULL);
		like.labels = (uint8_t)apex_name_labels(owner);
		int rc = owner_intern(s, &like, &owner_index);
		if (rc != APEX_OK)
			return rc;
	}
	/* After the owner (whose name and key may be new in s->keep), so
	 * that the records of an RRset written together are back to back. */
	uint8_t *stored = apex_arena_alloc_packed(s->keep, 2 + rdlength);
	if (stored == NULL)
		return APEX_ENOMEM;
	stored[0] = (uint8_t)(rdlength >> 8);
	stored[1] = (uint8_t)rdlength;
	stored += 2;
	if (rdlength > 0)
		memcpy(stored, rdata, rdlength);
	const uint8_t *canonical = stored;
	if (canonical_in != NULL && canonical_in != rdata) {
		canonical = packed_dup(s->scratch, canonical_in, rdlength);
		if (canonical == NULL)
			return APEX_ENOMEM;
	}
	if (s->rr_count == s->rr_cap) {
		size_t cap = s->rr_cap ? s->rr_cap * 2 : 4096;
		apex_build_rr_t *p = realloc(s->rrs, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		s->rrs = p;
		s->rr_cap = cap;
	}
	if (s->rr_count >= UINT32_MAX)
		return fail(r, line, "too many records");
	apex_build_rr_t *out = &s->rrs[s->rr_count];
	out->owner = owner_index;
	out->seq = (uint32_t)s->rr_count;
	out->ttl = ttl;
	out->line = (uint32_t)line;
	out->type = type;
	out->rdlength = (uint16_t)rdlength;
	out->file = r->file_index;
	out->rdata = stored;
	out->canonical = canonical;
	s->rr_count++;
	memcpy(r->prev, owner, like.name_size);
	r->have_prev = true;
	return APEX_OK;
}

static const char *ldns_reason(ldns_status status)
{
	switch (status) {
	case LDNS_STATUS_SYNTAX_RDATA_ERR:
		return "bad rdata";
	case LDNS_STATUS_SYNTAX_TYPE_ERR:
		return "unknown type";
	case LDNS_STATUS_SYNTAX_CLASS_ERR:
		return "unknown class";
	case LDNS_STATUS_SYNTAX_TTL_ERR:
		return "bad TTL";
	case LDNS_STATUS_DOMAINNAME_OVERFLOW:
		return "domain name too long";
	case LDNS_STATUS_LABEL_OVERFLOW:
		return "label too long";
	case LDNS_STATUS_SYNTAX_DNAME_ERR:
		return "bad domain name";
	case LDNS_STATUS_SYNTAX_MISSING_VALUE_ERR:
		return "missing rdata";
	default:
		return ldns_get_errorstr_by_id(status);
	}
}

/*
 * True if an rdf that starts with its own length byte says the truth.
 * ldns's text parser can return one that does not: an NSEC3 next hashed
 * owner of "=9" comes back as a length of 1 with no hash byte, which no
 * resolver could decode once served.
 */
static bool rdf_length_consistent(const ldns_rdf *rdf)
{
	switch (ldns_rdf_get_type(rdf)) {
	case LDNS_RDF_TYPE_NSEC3_SALT:
	case LDNS_RDF_TYPE_NSEC3_NEXT_OWNER:
	case LDNS_RDF_TYPE_B32_EXT:
	case LDNS_RDF_TYPE_STR:
		return ldns_rdf_size(rdf) >= 1 &&
		       (size_t)ldns_rdf_data(rdf)[0] == ldns_rdf_size(rdf) - 1;
	default:
		return true;
	}
}

/* Store one record parsed by ldns. */
static int add_ldns_rr(reader_t *r, int line, const ldns_rr *rr)
{
	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN)
		return fail(r, line, "class %u is not IN", (unsigned)ldns_rr_get_class(rr));
	uint16_t type = (uint16_t)ldns_rr_get_type(rr);
	/* 0, OPT and the meta and question types (RFC 6895 section 3.1). */
	if (type == 0 || type == APEX_TYPE_OPT || (type >= 128 && type <= 255))
		return fail(r, line, "type %u may not appear in a zone", type);
	if (ldns_rr_ttl(rr) > INT32_MAX)
		return fail(r, line, "TTL %u out of range (RFC 2181 section 8)", ldns_rr_ttl(rr));

	const ldns_rdf *owner_rdf = ldns_rr_owner(rr);
	const uint8_t *owner = ldns_rdf_data(owner_rdf);
	size_t owner_size = ldns_rdf_size(owner_rdf);
	if (owner_size == 0 || owner_size > APEX_NAME_MAX || owner[owner_size - 1] != 0)
		return fail(r, line, "bad owner name");

	/* RDATA in wire form: the rdfs one after the other, uncompressed. */
	size_t rdlength = 0;
	bool lower = false;
	bool canonical_names = type_has_canonical_names(type);
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
		if (!rdf_length_consistent(rdf))
			return fail(r, line, "bad rdata: field %zu is not valid", i + 1);
		rdlength += ldns_rdf_size(rdf);
		if (canonical_names && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME &&
		    has_upper(ldns_rdf_data(rdf), ldns_rdf_size(rdf)))
			lower = true;
	}
	if (rdlength > 65535)
		return fail(r, line, "rdata longer than 65535 bytes");
	uint8_t *rdata = r->sink->rdata;
	uint8_t *canonical = lower ? malloc(rdlength ? rdlength : 1) : rdata;
	if (canonical == NULL)
		return APEX_ENOMEM;
	size_t pos = 0;
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
		size_t size = ldns_rdf_size(rdf);
		memcpy(rdata + pos, ldns_rdf_data(rdf), size);
		if (lower) {
			memcpy(canonical + pos, ldns_rdf_data(rdf), size);
			/* A wire name: lowercasing every byte of the labels is
			 * safe because length bytes are < 64 ('A' is 65). */
			if (ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME)
				apex_name_lower(canonical + pos);
		}
		pos += size;
	}
	int rc = store_rr(r, line, owner, type, ldns_rr_ttl(rr), rdata, rdlength, canonical);
	if (lower)
		free(canonical);
	return rc;
}

/* Parse r->rec with ldns, as every record was parsed before the fast path. */
static int parse_with_ldns(reader_t *r, int line)
{
	if (r->origin_rdf == NULL) {
		r->origin_rdf = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, apex_name_size(r->origin),
						      r->origin);
		if (r->origin_rdf == NULL)
			return APEX_ENOMEM;
	}
	/* ldns uses prev for a record without an owner (leading blank),
	 * and the origin when there is none yet. */
	ldns_rdf *prev = NULL;
	if (r->have_prev) {
		prev = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, apex_name_size(r->prev), r->prev);
		if (prev == NULL)
			return APEX_ENOMEM;
	}
	/* ldns rejects blanks after a final quoted string of some
	 * types (CAA, HINFO), and line ends became blanks above. */
	while (r->rec_len > 1 && (r->rec[r->rec_len - 1] == ' ' || r->rec[r->rec_len - 1] == '\t') &&
	       r->rec[r->rec_len - 2] != '\\')
		r->rec[--r->rec_len] = '\0';
	ldns_rr *rr = NULL;
	ldns_status status =
		ldns_rr_new_frm_str(&rr, r->rec, r->sink->default_ttl, r->origin_rdf, &prev);
	int rc;
	if (status != LDNS_STATUS_OK)
		rc = status == LDNS_STATUS_MEM_ERR ? APEX_ENOMEM
						   : fail(r, line, "%s", ldns_reason(status));
	else
		rc = add_ldns_rr(r, line, rr);
	ldns_rr_free(rr);
	ldns_rdf_deep_free(prev);
	return rc;
}

/*
 * The fast path: "[owner] [TTL] [IN] TYPE RDATA" with a type of
 * rdata_text.c.  Returns APEX_OK when the record was stored, APEX_EINVAL
 * when it is not of that form (nothing stored: ldns parses it), or an
 * error of store_rr().
 */
static int parse_fast(reader_t *r, int line)
{
	const char *p = r->rec;
	uint8_t owner[APEX_NAME_MAX];
	const char *tok;
	size_t len;

	if (*p == ' ' || *p == '\t') {
		if (!r->have_prev)
			return APEX_EINVAL;
		memcpy(owner, r->prev, apex_name_size(r->prev));
	} else {
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (apex_name_from_text(tok, (size_t)(p - tok), r->origin, owner) <= 0)
			return APEX_EINVAL;
	}
	uint32_t ttl = r->sink->default_ttl;
	int type = -1;
	bool have_ttl = false, have_class = false;
	while (type < 0) {
		while (*p == ' ' || *p == '\t')
			p++;
		tok = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - tok);
		if (len == 0)
			return APEX_EINVAL;
		if (tok[0] >= '0' && tok[0] <= '9') {
			/* TTL, only before the class (ldns's order) */
			if (have_ttl || have_class || len > 15)
				return APEX_EINVAL;
			char buf[16];
			const char *end;
			memcpy(buf, tok, len);
			buf[len] = '\0';
			ttl = ldns_str2period(buf, &end);
			if (*end != '\0' || ttl > INT32_MAX)
				return APEX_EINVAL;
			have_ttl = true;
		} else if (len == 2 && strncasecmp(tok, "IN", 2) == 0) {
			if (have_class)
				return APEX_EINVAL;
			have_class = true;
		} else {
			type = apex_rrtype_from_text(tok, len);
			if (type < 0 || !apex_rdata_text_supported((uint16_t)type))
				return APEX_EINVAL;
		}
	}
	uint8_t *rdata = r->sink->rdata;
	int rdlength = apex_rdata_from_text((uint16_t)type, p, r->origin, rdata);
	if (rdlength < 0)
		return APEX_EINVAL;
	/* The canonical form lowercases the one embedded name (the RRSIG's
	 * signer, the target of NS, MX, ...); a copy only when it differs. */
	const uint8_t *canonical = rdata;
	int at = fast_name_offset((uint16_t)type);
	if (at >= 0 && at < rdlength) {
		size_t name_size = apex_name_size(rdata + at);
		if (has_upper(rdata + at, name_size)) {
			memcpy(r->sink->canonical, rdata, (size_t)rdlength);
			apex_name_lower(r->sink->canonical + at);
			canonical = r->sink->canonical;
		}
	}
	return store_rr(r, line, owner, (uint16_t)type, ttl, rdata, (size_t)rdlength, canonical);
}

/* The path of an $INCLUDE: relative to the directory of the including file. */
static char *include_path(const char *including, const char *name)
{
	if (name[0] == '/')
		return strdup(name);
	const char *slash = strrchr(including, '/');
	size_t dir_len = slash ? (size_t)(slash - including) + 1 : 0;
	size_t size = dir_len + strlen(name) + 1;
	char *path = malloc(size);
	if (path != NULL) {
		memcpy(path, including, dir_len);
		strcpy(path + dir_len, name);
	}
	return path;
}

static int add_file_name(loader_t *ld, const char *path, uint16_t *index)
{
	apex_zone_builder_t *b = ld->b;
	if (b->file_count >= UINT16_MAX)
		return APEX_ENOMEM;
	if (b->file_count == ld->file_cap) {
		size_t cap = ld->file_cap ? ld->file_cap * 2 : 8;
		const char **p = realloc(b->files, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		b->files = p;
		ld->file_cap = cap;
	}
	const char *copy = apex_arena_strdup(b->tmp, path);
	if (copy == NULL)
		return APEX_ENOMEM;
	b->files[b->file_count] = copy;
	*index = (uint16_t)b->file_count++;
	return APEX_OK;
}

static void set_origin(reader_t *r, const uint8_t *origin)
{
	memcpy(r->origin, origin, apex_name_size(origin));
	ldns_rdf_deep_free(r->origin_rdf);
	r->origin_rdf = NULL;
}

/* $ORIGIN, $TTL or $INCLUDE in r->rec (depth < 0: $INCLUDE not allowed). */
static int directive(reader_t *r, int line, int depth)
{
	char *p = r->rec;
	char *word = next_token(&p);
	char *arg = next_token(&p);
	uint8_t name[APEX_NAME_MAX];
	if (strcasecmp(word, "$TTL") == 0) {
		const char *end = NULL;
		if (arg == NULL)
			return fail(r, line, "$TTL without a value");
		uint32_t ttl = ldns_str2period(arg, &end);
		if (end == arg || *end != '\0' || ttl > INT32_MAX)
			return fail(r, line, "bad TTL '%s'", arg);
		r->sink->default_ttl = ttl;
		r->sink->directives++;
		return APEX_OK;
	}
	if (strcasecmp(word, "$ORIGIN") == 0) {
		if (arg == NULL)
			return fail(r, line, "$ORIGIN without a name");
		if (directive_name(arg, r->origin, name) == 0)
			return fail(r, line, "bad $ORIGIN name '%s'", arg);
		set_origin(r, name);
		r->sink->directives++;
		return APEX_OK;
	}
	if (strcasecmp(word, "$INCLUDE") == 0 && depth >= 0) {
		if (arg == NULL)
			return fail(r, line, "$INCLUDE without a file name");
		char *origin_arg = next_token(&p);
		if (origin_arg != NULL) {
			if (directive_name(origin_arg, r->origin, name) == 0)
				return fail(r, line, "bad $INCLUDE origin '%s'", origin_arg);
		} else {
			memcpy(name, r->origin, apex_name_size(r->origin));
		}
		if (depth + 1 >= INCLUDE_DEPTH_MAX)
			return fail(r, line, "$INCLUDE nested too deeply");
		char *path = include_path(r->path, arg);
		if (path == NULL)
			return APEX_ENOMEM;
		FILE *fp = fopen(path, "r");
		if (fp == NULL) {
			int e = errno;
			int rc = fail(r, line, "cannot open $INCLUDE file %s: %s", path, strerror(e));
			free(path);
			return rc;
		}
		fclose(fp);
		/* The included file starts with the given origin; ours is
		 * unchanged afterwards (RFC 1035 section 5.1). */
		int rc = load_file(r->ld, r->sink, path, name, depth + 1);
		free(path);
		return rc;
	}
	return fail(r, line, "unknown directive %s", word);
}

/* Read the records of r's text into r's sink.  depth < 0: a chunk of a
 * file parsed in parallel (no $INCLUDE). */
static int read_records(reader_t *r, int depth)
{
	int rc, line;
	bool fast = atomic_load_explicit(&apex_load_fast_rdata, memory_order_relaxed);
	while ((rc = read_record(r, &line)) == 1) {
		if (r->rec[0] == '$') {
			rc = directive(r, line, depth);
		} else {
			rc = fast ? parse_fast(r, line) : APEX_EINVAL;
			if (rc == APEX_EINVAL)
				rc = parse_with_ldns(r, line);
		}
		if (rc != APEX_OK)
			break;
	}
	return rc == 0 ? APEX_OK : rc;
}

static void reader_free(reader_t *r)
{
	ldns_rdf_deep_free(r->origin_rdf);
	free(r->rec);
}

/* A file mapped for reading (an empty file maps to nothing). */
typedef struct mapping {
	const char *data;
	size_t size;
} mapping_t;

static int map_file(const char *path, mapping_t *m, char *err, size_t err_size)
{
	m->data = "";  /* an empty file: no mapping, but a valid pointer */
	m->size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return APEX_ELOAD;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: cannot open: not a regular file", path);
		close(fd);
		return APEX_ELOAD;
	}
	if (st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			snprintf(err, err_size, "%s: cannot read: %s", path, strerror(errno));
			close(fd);
			return APEX_ELOAD;
		}
		madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
		m->data = p;
		m->size = (size_t)st.st_size;
	}
	close(fd);
	return APEX_OK;
}

static void unmap_file(mapping_t *m)
{
	if (m->size > 0)
		munmap((void *)m->data, m->size);
}

/* Name path among the loader's files (*file_index) and map it (*m, for
 * unmap_file()); "FILE: reason" in the loader's error buffer on failure. */
static int open_file(loader_t *ld, const char *path, uint16_t *file_index, mapping_t *m)
{
	int rc = add_file_name(ld, path, file_index);
	if (rc != APEX_OK)
		return rc;
	return map_file(path, m, ld->b->err, ld->b->err_size);
}

/* Read one file (the zone file or an $INCLUDE) into sink, on this thread. */
static int load_file(loader_t *ld, sink_t *sink, const char *path, const uint8_t *origin,
		     int depth)
{
	uint16_t file_index;
	mapping_t m;
	int rc = open_file(ld, path, &file_index, &m);
	if (rc != APEX_OK)
		return rc;
	reader_t r = { .ld = ld, .sink = sink, .path = ld->b->files[file_index],
		       .file_index = file_index, .p = m.data, .end = m.data + m.size,
		       .dropped = m.data, .err = ld->b->err, .err_size = ld->b->err_size };
	memcpy(r.origin, origin, apex_name_size(origin));
	rc = read_records(&r, depth);
	reader_free(&r);
	unmap_file(&m);
	return rc;
}

/* ------------------------------------------------------------ in parallel */

/* One chunk of the zone file parsed on its own thread. */
typedef struct chunk {
	loader_t *ld;
	const char *start, *end;
	uint8_t origin[APEX_NAME_MAX];  /* $ORIGIN in force at start */
	uint32_t default_ttl;           /* $TTL in force at start */
	size_t directives_expected;     /* '$' lines found in [start, end) */
	sink_t *sink;
	int lines;                      /* lines in [start, end) */
	int rc;
	char err[512];
	pthread_t thread;
	bool started;
} chunk_t;

static void *chunk_main(void *arg)
{
	chunk_t *c = arg;
	reader_t r = { .ld = c->ld, .sink = c->sink, .path = c->ld->b->files[0], .file_index = 0,
		       .p = c->start, .end = c->end, .dropped = c->start, .err = c->err,
		       .err_size = sizeof(c->err) };
	memcpy(r.origin, c->origin, apex_name_size(c->origin));
	c->sink->default_ttl = c->default_ttl;
	c->rc = read_records(&r, -1);
	c->lines = r.line;
	reader_free(&r);
	return NULL;
}

static unsigned cpu_count(void)
{
	unsigned n = atomic_load(&apex_load_threads);
	if (n > 0)
		return n < THREADS_MAX ? n : THREADS_MAX;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = (unsigned)CPU_COUNT(&set);
	if (n == 0)
		n = 1;
	return n < THREADS_MAX ? n : THREADS_MAX;
}

static bool starts_directive(const char *p, const char *end, const char *word)
{
	size_t len = strlen(word);
	return (size_t)(end - p) > len && strncasecmp(p, word, len) == 0 &&
	       (p[len] == ' ' || p[len] == '\t');
}

/* A line start after pos at which a record with an owner name begins
 * (the first character is not blank, '$', ';', a quote or a
 * parenthesis), or NULL. */
static const char *record_start_after(const char *pos, const char *end)
{
	for (int tries = 0; tries < 100000 && pos < end; tries++) {
		const char *nl = memchr(pos, '\n', (size_t)(end - pos));
		if (nl == NULL || nl + 1 >= end)
			return NULL;
		char c = nl[1];
		if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '$' && c != ';' &&
		    c != '"' && c != '(' && c != ')')
			return nl + 1;
		pos = nl + 1;
	}
	return NULL;
}

/* The first "\n$" in [p, end), or NULL.  '$' is rare in zone files, so
 * looking for it with memchr is much faster than for the pair. */
static const char *line_with_dollar(const char *p, const char *end)
{
	for (const char *from = p + 1; from < end;) {
		const char *d = memchr(from, '$', (size_t)(end - from));
		if (d == NULL)
			return NULL;
		if (d[-1] == '\n')
			return d - 1;
		from = d + 1;
	}
	return NULL;
}

/*
 * Try to parse the mapped zone file m on several threads into ld's
 * sinks.  Returns APEX_OK (records in ld->sinks[0], merged), 1 when the
 * file must be parsed on one thread instead, or APEX_ENOMEM.
 */
static int load_parallel(loader_t *ld, const mapping_t *m, const uint8_t *origin)
{
	size_t min = atomic_load(&apex_load_chunk_min);
	unsigned n = cpu_count();
	if (min == 0)
		min = 1;
	if (m->size / min < n)
		n = (unsigned)(m->size / min);
	if (n < 2)
		return 1;

	/* Chunk boundaries. */
	const char *bounds[THREADS_MAX + 1];
	unsigned count = 0;
	bounds[count++] = m->data;
	for (unsigned k = 1; k < n; k++) {
		const char *want = m->data + m->size / n * k;
		if (want <= bounds[count - 1])
			continue;
		const char *at = record_start_after(want - 1, m->data + m->size);
		if (at == NULL)
			break;
		if (at > bounds[count - 1])
			bounds[count++] = at;
	}
	if (count < 2)
		return 1;
	bounds[count] = m->data + m->size;

	/* The '$' lines and the state each chunk starts with. */
	chunk_t *chunks = calloc(count, sizeof(*chunks));
	if (chunks == NULL)
		return APEX_ENOMEM;
	int rc = 1;
	reader_t state = { .ld = ld, .path = ld->b->files[0], .err = chunks[0].err,
			   .err_size = sizeof(chunks[0].err) };
	sink_t *scratch = sink_new();
	if (scratch == NULL) {
		free(chunks);
		return APEX_ENOMEM;
	}
	scratch->default_ttl = LDNS_DEFAULT_TTL_VALUE;
	state.sink = scratch;
	memcpy(state.origin, origin, apex_name_size(origin));
	unsigned k = 0;
	const char *p = m->data, *end = m->data + m->size;
	for (;;) {
		const char *dollar = NULL;
		if (p == m->data && p < end && *p == '$')
			dollar = p;
		else if (p < end)
			dollar = line_with_dollar(p, end);
		if (dollar != NULL && *dollar == '\n')
			dollar++;
		const char *next = dollar ? dollar : end;
		while (k < count && bounds[k] <= next) {
			/* chunk k starts here: the state before it */
			memcpy(chunks[k].origin, state.origin, apex_name_size(state.origin));
			chunks[k].default_ttl = scratch->default_ttl;
			k++;
		}
		if (dollar == NULL)
			break;
		if (starts_directive(dollar, end, "$INCLUDE"))
			goto out;  /* the included file's records would sit between chunks */
		chunks[k - 1].directives_expected++;
		/* Apply the directive to the running state, as its line says. */
		state.p = dollar;
		state.end = end;
		state.dropped = dollar;
		int line;
		if (read_record(&state, &line) != 1 || directive(&state, line, -1) != APEX_OK)
			goto out;  /* not a directive after all, or a bad one */
		p = dollar + 1;
	}

	for (unsigned i = 0; i < count; i++) {
		chunks[i].ld = ld;
		chunks[i].start = bounds[i];
		chunks[i].end = bounds[i + 1];
		chunks[i].sink = sink_new();
		/* Sized for an owner every 256 bytes (about what large
		 * signed zones have), so that the table rarely grows. */
		size_t bytes = (size_t)(bounds[i + 1] - bounds[i]);
		if (chunks[i].sink == NULL || table_resize(chunks[i].sink, bytes / 256) != APEX_OK) {
			rc = APEX_ENOMEM;
			goto out;
		}
	}
	for (unsigned i = 1; i < count; i++)
		chunks[i].started = pthread_create(&chunks[i].thread, NULL, chunk_main, &chunks[i]) == 0;
	chunk_main(&chunks[0]);
	for (unsigned i = 1; i < count; i++) {
		if (chunks[i].started)
			pthread_join(chunks[i].thread, NULL);
		else
			chunk_main(&chunks[i]);  /* no thread: parse it here */
	}
	for (unsigned i = 0; i < count; i++) {
		if (chunks[i].rc == APEX_ENOMEM) {
			rc = APEX_ENOMEM;
			goto out;
		}
		/* Any error, or a '$' line that was not a directive: the
		 * whole file again on one thread (exact first error). */
		if (chunks[i].rc != APEX_OK ||
		    chunks[i].sink->directives != chunks[i].directives_expected)
			goto out;
	}

	/* Merge in file order into chunk 0's sink. */
	sink_t *s0 = chunks[0].sink;
	size_t total = 0;
	for (unsigned i = 0; i < count; i++)
		total += chunks[i].sink->rr_count;
	if (total > UINT32_MAX) {
		rc = 1;
		goto out;
	}
	apex_build_rr_t *rrs = realloc(s0->rrs, (total ? total : 1) * sizeof(*rrs));
	if (rrs == NULL) {
		rc = APEX_ENOMEM;
		goto out;
	}
	s0->rrs = rrs;
	s0->rr_cap = total;
	/* Owners are appended, not looked up: an owner that two chunks
	 * share is listed twice, and apex_zone_build() merges the two
	 * (keeping the first, as build.h asks). */
	size_t total_owners = 0;
	for (unsigned i = 0; i < count; i++)
		total_owners += chunks[i].sink->owner_count;
	if (total_owners > UINT32_MAX - 1) {
		rc = 1;
		goto out;
	}
	apex_build_owner_t *owners = realloc(s0->owners, (total_owners ? total_owners : 1) *
							      sizeof(*owners));
	if (owners == NULL) {
		rc = APEX_ENOMEM;
		goto out;
	}
	s0->owners = owners;
	s0->owner_cap = total_owners;
	int line_offset = chunks[0].lines;
	for (unsigned i = 1; i < count; i++) {
		sink_t *s = chunks[i].sink;
		uint32_t owner_offset = (uint32_t)s0->owner_count;
		memcpy(&s0->owners[s0->owner_count], s->owners, s->owner_count * sizeof(*s->owners));
		s0->owner_count += s->owner_count;
		for (size_t j = 0; j < s->rr_count; j++) {
			apex_build_rr_t *out = &s0->rrs[s0->rr_count];
			*out = s->rrs[j];
			out->owner += owner_offset;
			out->seq = (uint32_t)s0->rr_count;
			out->line += (uint32_t)line_offset;
			s0->rr_count++;
		}
		line_offset += chunks[i].lines;
		/* Its records are copied; its memory (names, RDATA) stays. */
		free(s->rrs);
		s->rrs = NULL;
		free(s->owners);
		s->owners = NULL;
		free(s->table);
		s->table = NULL;
	}
	/* Hand every sink's memory to the loader. */
	for (unsigned i = 0; i < count; i++) {
		ld->sinks[ld->sink_count++] = chunks[i].sink;
		chunks[i].sink = NULL;
	}
	rc = APEX_OK;
out:
	for (unsigned i = 0; i < count; i++)
		if (chunks[i].sink != NULL)
			sink_free(chunks[i].sink);
	reader_free(&state);
	sink_free(scratch);
	free(chunks);
	return rc;
}

/* Read the zone file: in parallel if it is large enough and that is
 * safe, else on this thread.  The records end up in ld->sinks[0]. */
static int load_zone_file(loader_t *ld, const char *path, const uint8_t *origin)
{
	uint16_t file_index;
	mapping_t m;
	int rc = open_file(ld, path, &file_index, &m);
	if (rc != APEX_OK)
		return rc;
	rc = load_parallel(ld, &m, origin);
	if (rc == 1) {
		sink_t *s = sink_new();
		if (s == NULL) {
			unmap_file(&m);
			return APEX_ENOMEM;
		}
		s->default_ttl = LDNS_DEFAULT_TTL_VALUE;
		ld->sinks[ld->sink_count++] = s;
		reader_t r = { .ld = ld, .sink = s, .path = ld->b->files[file_index],
			       .file_index = file_index, .p = m.data, .end = m.data + m.size,
			       .dropped = m.data, .err = ld->b->err, .err_size = ld->b->err_size };
		memcpy(r.origin, origin, apex_name_size(origin));
		rc = read_records(&r, 0);
		reader_free(&r);
	}
	unmap_file(&m);
	return rc;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

int apex_zone_load(const char *file, const uint8_t *origin, apex_zone_t **out, char *err,
		   size_t err_size)
{
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	*out = NULL;
	if (err_size > 0)
		err[0] = '\0';

	apex_arena_t *arena = apex_arena_create();
	apex_arena_t *tmp = apex_arena_create();
	apex_zone_t *zone = arena ? apex_arena_calloc(arena, 1, sizeof(*zone)) : NULL;
	apex_zone_builder_t b = { .zone = zone, .tmp = tmp, .err = err, .err_size = err_size };
	sink_t *sinks[THREADS_MAX + 1];
	loader_t ld = { .b = &b, .sinks = sinks };
	int rc = APEX_ENOMEM;
	if (zone == NULL || tmp == NULL)
		goto done;

	atomic_init(&zone->refcount, 1);
	zone->arena = arena;
	size_t origin_size = apex_name_size(origin);
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(origin, key, NULL);
	zone->origin = apex_arena_memdup(arena, origin, origin_size);
	zone->origin_key = apex_arena_memdup(arena, key, key_size);
	zone->origin_key_size = (uint16_t)key_size;
	zone->origin_labels = (uint8_t)apex_name_labels(origin);
	zone->file = apex_arena_strdup(arena, file);
	if (zone->origin == NULL || zone->origin_key == NULL || zone->file == NULL)
		goto done;

	rc = load_zone_file(&ld, file, origin);
	if (rc == APEX_OK) {
		/* The builder takes the records of sinks[0]; the hash table
		 * of owners is not needed any more. */
		sink_t *s0 = ld.sinks[0];
		free(s0->table);
		s0->table = NULL;
		b.owners = s0->owners;
		b.owner_count = s0->owner_count;
		b.rrs = s0->rrs;
		b.rr_count = s0->rr_count;
		s0->owners = NULL;
		s0->rrs = NULL;
		double parsed = seconds_since(&start);
		size_t memory = b.rr_count * sizeof(*b.rrs) + b.owner_count * sizeof(*b.owners);
		/* Names, keys and RDATA become the version's (build.h). */
		for (size_t i = 0; i < ld.sink_count; i++) {
			sink_t *s = ld.sinks[i];
			memory += apex_arena_footprint(s->keep) + apex_arena_footprint(s->scratch);
			apex_arena_adopt(arena, s->keep);
			s->keep = NULL;
		}
		b.threads = cpu_count();
		rc = apex_zone_build(&b);
		apex_debug("%s: %zu records parsed in %.3f s (%zu thread(s), %zu MB), built in %.3f s",
			   file, b.rr_count, parsed, ld.sink_count, memory >> 20,
			   seconds_since(&start) - parsed);
	}
	if (rc == APEX_OK) {
		clock_gettime(CLOCK_REALTIME, &zone->loaded_at);
		zone->load_seconds = seconds_since(&start);
		zone->memory = apex_arena_footprint(arena);
		*out = zone;
	}
done:
	if (rc == APEX_ENOMEM && err_size > 0 && err[0] == '\0')
		snprintf(err, err_size, "%s: out of memory", file);
	if (rc != APEX_OK)
		apex_arena_destroy(arena);
	apex_arena_destroy(tmp);
	for (size_t i = 0; i < ld.sink_count; i++)
		sink_free(ld.sinks[i]);
	free(b.owners);
	free(b.rrs);
	free(b.files);
	return rc;
}
