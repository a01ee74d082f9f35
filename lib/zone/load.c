/*
 * Reading an RFC 1035 master file into a zone builder.
 *
 * The file is split into records here ((...) continuation lines,
 * comments, quoted strings, $ORIGIN, $TTL and $INCLUDE), so that every
 * record keeps the line it starts on; ldns parses each record's text
 * (relative names, RFC 3597 unknown types) and its RDATA is kept as
 * uncompressed wire data.  apex_zone_build() does the rest.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/build.h"
#include "zone/load.h"

#define INCLUDE_DEPTH_MAX 16
#define LDNS_DEFAULT_TTL_VALUE 3600

/* Everything shared by the files of one load. */
typedef struct loader {
	apex_zone_builder_t *b;
	size_t owner_cap;
	size_t rr_cap;
	size_t file_cap;
	uint32_t default_ttl;       /* $TTL, shared with included files */
	/* owner hash table: key -> owner index + 1 (0 = empty slot) */
	uint32_t *table;
	size_t table_size;          /* power of two */
	uint32_t last_owner;        /* fast path: records usually share owners */
	bool have_last;
} loader_t;

/* One open file. */
typedef struct reader {
	FILE *fp;
	const char *path;           /* as shown in messages */
	uint16_t file_index;
	int line;
	char *buf;                  /* getline() buffer */
	size_t buf_cap;
	char *rec;                  /* current record, one line of text */
	size_t rec_len;
	size_t rec_cap;
} reader_t;

static int load_file(loader_t *ld, const char *path, ldns_rdf *origin, int depth);

static int fail(loader_t *ld, const char *path, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Write "FILE:LINE: reason" (or "FILE: reason" when line is 0). */
static int fail(loader_t *ld, const char *path, int line, const char *fmt, ...)
{
	char reason[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(ld->b->err, ld->b->err_size, "%s:%d: %s", path, line, reason);
	else
		snprintf(ld->b->err, ld->b->err_size, "%s: %s", path, reason);
	return APEX_ELOAD;
}

static int rec_put(reader_t *r, char c)
{
	if (r->rec_len + 2 > r->rec_cap) {
		size_t cap = r->rec_cap ? r->rec_cap * 2 : 1024;
		char *p = realloc(r->rec, cap);
		if (p == NULL)
			return APEX_ENOMEM;
		r->rec = p;
		r->rec_cap = cap;
	}
	r->rec[r->rec_len++] = c;
	r->rec[r->rec_len] = '\0';
	return APEX_OK;
}

/*
 * Read the next record into r->rec as a single line: comments removed,
 * parentheses joined, leading white space kept (it means "same owner").
 * Returns 1 with *start_line set, 0 at end of file, or an error.
 */
static int read_record(loader_t *ld, reader_t *r, int *start_line)
{
	int depth = 0;
	int open_line = 0;
	bool content = false;
	r->rec_len = 0;
	if (rec_put(r, ' ') != APEX_OK)  /* ensure rec is allocated */
		return APEX_ENOMEM;
	r->rec_len = 0;
	r->rec[0] = '\0';
	*start_line = 0;
	for (;;) {
		ssize_t n = getline(&r->buf, &r->buf_cap, r->fp);
		if (n < 0) {
			if (ferror(r->fp))
				return fail(ld, r->path, r->line, "read error: %s", strerror(errno));
			if (depth > 0)
				return fail(ld, r->path, open_line, "unbalanced parenthesis");
			return content ? 1 : 0;
		}
		r->line++;
		bool in_quote = false;
		for (ssize_t i = 0; i < n; i++) {
			char c = r->buf[i];
			int rc = APEX_OK;
			if (in_quote) {
				rc = rec_put(r, c);
				if (c == '\\' && i + 1 < n)
					rc = rc ? rc : rec_put(r, r->buf[++i]);
				else if (c == '"')
					in_quote = false;
			} else if (c == ';') {
				break;
			} else if (c == '"') {
				in_quote = true;
				rc = rec_put(r, c);
			} else if (c == '\\') {
				rc = rec_put(r, c);
				if (i + 1 < n && r->buf[i + 1] != '\n')
					rc = rc ? rc : rec_put(r, r->buf[++i]);
			} else if (c == '(') {
				if (depth++ == 0)
					open_line = r->line;
				rc = rec_put(r, ' ');
			} else if (c == ')') {
				if (--depth < 0)
					return fail(ld, r->path, r->line, "unbalanced parenthesis");
				rc = rec_put(r, ' ');
			} else if (c == '\n' || c == '\r') {
				rc = rec_put(r, ' ');
			} else {
				rc = rec_put(r, c);
			}
			if (rc != APEX_OK)
				return rc;
			if (!content && c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '(' &&
			    c != ')') {
				content = true;
				*start_line = r->line;
			}
		}
		if (in_quote)
			return fail(ld, r->path, r->line, "unterminated quoted string");
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

/* A name for $ORIGIN / $INCLUDE: absolute, or relative to origin. */
static ldns_rdf *directive_name(const char *text, const ldns_rdf *origin)
{
	size_t len = strlen(text);
	bool absolute = len > 0 && text[len - 1] == '.' &&
			(len < 2 || text[len - 2] != '\\');
	if (absolute || origin == NULL)
		return ldns_dname_new_frm_str(text);
	char *origin_text = ldns_rdf2str(origin);
	if (origin_text == NULL)
		return NULL;
	size_t size = len + strlen(origin_text) + 2;
	char *full = malloc(size);
	ldns_rdf *name = NULL;
	if (full != NULL) {
		if (strcmp(origin_text, ".") == 0)
			snprintf(full, size, "%s.", text);
		else
			snprintf(full, size, "%s.%s", text, origin_text);
		name = ldns_dname_new_frm_str(full);
		free(full);
	}
	free(origin_text);
	return name;
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

/* Rebuild the owner table at twice the size (load factor <= 1/2). */
static int table_grow(loader_t *ld)
{
	size_t size = ld->table_size ? ld->table_size * 2 : 4096;
	uint32_t *table = calloc(size, sizeof(*table));
	if (table == NULL)
		return APEX_ENOMEM;
	const apex_zone_builder_t *b = ld->b;
	for (size_t i = 0; i < b->owner_count; i++) {
		size_t slot = key_hash(b->owners[i].key, b->owners[i].key_size) & (size - 1);
		while (table[slot] != 0)
			slot = (slot + 1) & (size - 1);
		table[slot] = (uint32_t)i + 1;
	}
	free(ld->table);
	ld->table = table;
	ld->table_size = size;
	return APEX_OK;
}

static bool owner_is(const apex_build_owner_t *o, const uint8_t *key, size_t key_size)
{
	return o->key_size == key_size && memcmp(o->key, key, key_size) == 0;
}

/* Index of the owner name (added if new) in *index. */
static int owner_intern(loader_t *ld, const uint8_t *name, uint32_t *index)
{
	apex_zone_builder_t *b = ld->b;
	uint8_t key[APEX_KEY_MAX];
	size_t key_size = apex_name_key(name, key, NULL);

	if (ld->have_last && owner_is(&b->owners[ld->last_owner], key, key_size)) {
		*index = ld->last_owner;
		return APEX_OK;
	}
	if ((b->owner_count + 1) * 2 > ld->table_size && table_grow(ld) != APEX_OK)
		return APEX_ENOMEM;
	size_t mask = ld->table_size - 1;
	size_t slot = key_hash(key, key_size) & mask;
	while (ld->table[slot] != 0) {
		uint32_t i = ld->table[slot] - 1;
		if (owner_is(&b->owners[i], key, key_size)) {
			*index = ld->last_owner = i;
			ld->have_last = true;
			return APEX_OK;
		}
		slot = (slot + 1) & mask;
	}
	if (b->owner_count == ld->owner_cap) {
		size_t cap = ld->owner_cap ? ld->owner_cap * 2 : 1024;
		apex_build_owner_t *p = realloc(b->owners, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		b->owners = p;
		ld->owner_cap = cap;
	}
	size_t name_size = apex_name_size(name);
	apex_build_owner_t *o = &b->owners[b->owner_count];
	o->name = apex_arena_memdup(b->tmp, name, name_size);
	o->key = apex_arena_memdup(b->tmp, key, key_size);
	if (o->name == NULL || o->key == NULL)
		return APEX_ENOMEM;
	o->name_size = (uint8_t)name_size;
	o->key_size = (uint16_t)key_size;
	o->labels = (uint8_t)apex_name_labels(name);
	ld->table[slot] = (uint32_t)b->owner_count + 1;
	*index = ld->last_owner = (uint32_t)b->owner_count;
	ld->have_last = true;
	b->owner_count++;
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

/* Store one parsed record in the builder. */
static int add_rr(loader_t *ld, reader_t *r, int line, const ldns_rr *rr)
{
	apex_zone_builder_t *b = ld->b;
	const apex_zone_t *zone = b->zone;
	char text[APEX_NAME_MAX * 4 + 1];

	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN)
		return fail(ld, r->path, line, "class %u is not IN", (unsigned)ldns_rr_get_class(rr));
	uint16_t type = (uint16_t)ldns_rr_get_type(rr);
	/* 0, OPT and the meta and question types (RFC 6895 section 3.1). */
	if (type == 0 || type == APEX_TYPE_OPT || (type >= 128 && type <= 255))
		return fail(ld, r->path, line, "type %u may not appear in a zone", type);

	if (ldns_rr_ttl(rr) > INT32_MAX)
		return fail(ld, r->path, line, "TTL %u out of range (RFC 2181 section 8)",
			    ldns_rr_ttl(rr));

	const ldns_rdf *owner_rdf = ldns_rr_owner(rr);
	const uint8_t *owner = ldns_rdf_data(owner_rdf);
	size_t owner_size = ldns_rdf_size(owner_rdf);
	if (owner_size == 0 || owner_size > APEX_NAME_MAX || owner[owner_size - 1] != 0)
		return fail(ld, r->path, line, "bad owner name");
	if (!apex_name_is_subdomain(owner, zone->origin))
		return fail(ld, r->path, line, "%s is outside the zone %s",
			    apex_name_to_str(owner, text, sizeof(text)),
			    apex_name_to_str(zone->origin, text + sizeof(text) / 2, sizeof(text) / 2));

	/* RDATA in wire form: the rdfs one after the other, uncompressed. */
	size_t rdlength = 0;
	bool lower = false;
	bool canonical_names = type_has_canonical_names(type);
	for (size_t i = 0; i < ldns_rr_rd_count(rr); i++) {
		const ldns_rdf *rdf = ldns_rr_rdf(rr, i);
		if (!rdf_length_consistent(rdf))
			return fail(ld, r->path, line, "bad rdata: field %zu is not valid", i + 1);
		rdlength += ldns_rdf_size(rdf);
		if (canonical_names && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME) {
			const uint8_t *d = ldns_rdf_data(rdf);
			for (size_t j = 0; j < ldns_rdf_size(rdf); j++)
				if (d[j] >= 'A' && d[j] <= 'Z')
					lower = true;
		}
	}
	if (rdlength > 65535)
		return fail(ld, r->path, line, "rdata longer than 65535 bytes");
	uint8_t *rdata = apex_arena_alloc(b->tmp, rdlength);
	uint8_t *canonical = lower ? apex_arena_alloc(b->tmp, rdlength) : rdata;
	if (rdata == NULL || canonical == NULL)
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

	uint32_t owner_index;
	int rc = owner_intern(ld, owner, &owner_index);
	if (rc != APEX_OK)
		return rc;
	if (b->rr_count == ld->rr_cap) {
		size_t cap = ld->rr_cap ? ld->rr_cap * 2 : 4096;
		apex_build_rr_t *p = realloc(b->rrs, cap * sizeof(*p));
		if (p == NULL)
			return APEX_ENOMEM;
		b->rrs = p;
		ld->rr_cap = cap;
	}
	if (b->rr_count >= UINT32_MAX)
		return fail(ld, r->path, line, "too many records");
	apex_build_rr_t *out = &b->rrs[b->rr_count];
	out->owner = owner_index;
	out->seq = (uint32_t)b->rr_count;
	out->ttl = ldns_rr_ttl(rr);
	out->line = (uint32_t)line;
	out->type = type;
	out->rdlength = (uint16_t)rdlength;
	out->file = r->file_index;
	out->rdata = rdata;
	out->canonical = canonical;
	b->rr_count++;
	return APEX_OK;
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

/* $ORIGIN, $TTL or $INCLUDE in r->rec. */
static int directive(loader_t *ld, reader_t *r, int line, ldns_rdf **origin, int depth)
{
	char *p = r->rec;
	char *word = next_token(&p);
	char *arg = next_token(&p);
	if (strcasecmp(word, "$TTL") == 0) {
		const char *end = NULL;
		if (arg == NULL)
			return fail(ld, r->path, line, "$TTL without a value");
		uint32_t ttl = ldns_str2period(arg, &end);
		if (end == arg || *end != '\0' || ttl > INT32_MAX)
			return fail(ld, r->path, line, "bad TTL '%s'", arg);
		ld->default_ttl = ttl;
		return APEX_OK;
	}
	if (strcasecmp(word, "$ORIGIN") == 0) {
		if (arg == NULL)
			return fail(ld, r->path, line, "$ORIGIN without a name");
		ldns_rdf *name = directive_name(arg, *origin);
		if (name == NULL)
			return fail(ld, r->path, line, "bad $ORIGIN name '%s'", arg);
		ldns_rdf_deep_free(*origin);
		*origin = name;
		return APEX_OK;
	}
	if (strcasecmp(word, "$INCLUDE") == 0) {
		if (arg == NULL)
			return fail(ld, r->path, line, "$INCLUDE without a file name");
		char *origin_arg = next_token(&p);
		ldns_rdf *include_origin = NULL;
		if (origin_arg != NULL) {
			include_origin = directive_name(origin_arg, *origin);
			if (include_origin == NULL)
				return fail(ld, r->path, line, "bad $INCLUDE origin '%s'", origin_arg);
		} else {
			include_origin = ldns_rdf_clone(*origin);
			if (include_origin == NULL)
				return APEX_ENOMEM;
		}
		if (depth + 1 >= INCLUDE_DEPTH_MAX) {
			ldns_rdf_deep_free(include_origin);
			return fail(ld, r->path, line, "$INCLUDE nested too deeply");
		}
		char *path = include_path(r->path, arg);
		if (path == NULL) {
			ldns_rdf_deep_free(include_origin);
			return APEX_ENOMEM;
		}
		FILE *fp = fopen(path, "r");
		if (fp == NULL) {
			int e = errno;
			int rc = fail(ld, r->path, line, "cannot open $INCLUDE file %s: %s", path,
				      strerror(e));
			free(path);
			ldns_rdf_deep_free(include_origin);
			return rc;
		}
		fclose(fp);
		/* The included file starts with the given origin; ours is
		 * unchanged afterwards (RFC 1035 section 5.1). */
		int rc = load_file(ld, path, include_origin, depth + 1);
		free(path);
		ldns_rdf_deep_free(include_origin);
		return rc;
	}
	return fail(ld, r->path, line, "unknown directive %s", word);
}

/* Read one file (the zone file or an $INCLUDE).  Takes no ownership of origin. */
static int load_file(loader_t *ld, const char *path, ldns_rdf *origin_in, int depth)
{
	reader_t r = { .path = NULL, .line = 0 };
	uint16_t file_index;
	int rc = add_file_name(ld, path, &file_index);
	if (rc != APEX_OK)
		return rc;
	r.path = ld->b->files[file_index];
	r.file_index = file_index;
	r.fp = fopen(path, "r");
	if (r.fp == NULL)
		return fail(ld, path, 0, "cannot open: %s", strerror(errno));

	ldns_rdf *origin = ldns_rdf_clone(origin_in);
	ldns_rdf *prev = NULL;
	if (origin == NULL) {
		fclose(r.fp);
		return APEX_ENOMEM;
	}
	int line;
	while ((rc = read_record(ld, &r, &line)) == 1) {
		if (r.rec[0] == '$') {
			rc = directive(ld, &r, line, &origin, depth);
			if (rc != APEX_OK)
				break;
			continue;
		}
		/* ldns rejects blanks after a final quoted string of some
		 * types (CAA, HINFO), and line ends became blanks above. */
		while (r.rec_len > 1 && (r.rec[r.rec_len - 1] == ' ' || r.rec[r.rec_len - 1] == '\t') &&
		       r.rec[r.rec_len - 2] != '\\')
			r.rec[--r.rec_len] = '\0';
		ldns_rr *rr = NULL;
		ldns_status status = ldns_rr_new_frm_str(&rr, r.rec, ld->default_ttl, origin, &prev);
		if (status != LDNS_STATUS_OK) {
			if (status == LDNS_STATUS_MEM_ERR) {
				rc = APEX_ENOMEM;
			} else {
				rc = fail(ld, r.path, line, "%s", ldns_reason(status));
			}
			ldns_rr_free(rr);
			break;
		}
		rc = add_rr(ld, &r, line, rr);
		ldns_rr_free(rr);
		if (rc != APEX_OK)
			break;
	}
	if (rc == 0)
		rc = APEX_OK;
	ldns_rdf_deep_free(origin);
	ldns_rdf_deep_free(prev);
	free(r.buf);
	free(r.rec);
	fclose(r.fp);
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
	loader_t ld = { .b = &b, .default_ttl = LDNS_DEFAULT_TTL_VALUE };
	ldns_rdf *origin_rdf = NULL;
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
	origin_rdf = ldns_rdf_new_frm_data(LDNS_RDF_TYPE_DNAME, origin_size, origin);
	if (zone->origin == NULL || zone->origin_key == NULL || zone->file == NULL ||
	    origin_rdf == NULL)
		goto done;

	rc = load_file(&ld, file, origin_rdf, 0);
	if (rc == APEX_OK)
		rc = apex_zone_build(&b);
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
	ldns_rdf_deep_free(origin_rdf);
	apex_arena_destroy(tmp);
	free(ld.table);
	free(b.owners);
	free(b.rrs);
	free(b.files);
	return rc;
}
