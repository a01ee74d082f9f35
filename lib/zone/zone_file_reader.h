/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading zone file text (RFC 1035 section 5): the state of one load
 * (apex_loader_t) and of one range of text being read (apex_reader_t),
 * and the functions that work on them, each concept in its own file:
 *   zone_file_reader.c  the tokenizer: records as single lines
 *   record_store.c      a parsed record's checks, into the sink
 *   record_fast.c       the common types parsed without ldns
 *   record_ldns.c       every other record, parsed by ldns
 *   record_numbers.c    its number fields against their width, which
 *                       ldns does not check
 *   directives.c        $ORIGIN, $TTL and $INCLUDE
 *   file_map.c          the files of a load, mapped
 *   load.c              a file's records in order, and apex_zone_load()
 * Errors are written to the reader's buffer as "FILE:LINE: reason".
 */
#ifndef APEX_ZONE_ZONE_FILE_READER_H
#define APEX_ZONE_ZONE_FILE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ldns/ldns.h>

#include "dns/name.h"
#include "zone/build.h"
#include "zone/zone_sink.h"

#define INCLUDE_DEPTH_MAX 16
#define LDNS_DEFAULT_TTL_VALUE 3600
/* Parsed parts of the mapped file are dropped from memory every so often. */
#define DROP_BEHIND (256u << 10)

/* Everything shared by the files of one load. */
typedef struct apex_loader {
	apex_zone_builder_t *b;
	size_t file_cap;
	apex_sink_t **sinks; /* all sinks whose memory the builder uses */
	size_t sink_count;
	/* asked before each record is stored (zone/load.h); NULL: none */
	const struct apex_load_filter *filter;
	/* the SHA-256 of the zone file (not of an $INCLUDE's), taken as it
	 * is mapped (zone/file_digest.h); NULL: not wanted */
	struct apex_file_digest *digest;
} apex_loader_t;

/* One range of a mapped file being read. */
typedef struct apex_reader {
	apex_loader_t *ld;
	apex_sink_t *sink;
	const char *path; /* as shown in messages */
	uint16_t file_index;
	const char *p, *end; /* the text left to read */
	const char *dropped; /* mapped pages before this were released */
	int line;
	char *rec; /* current record, one line of text */
	size_t rec_len, rec_cap;
	char *err; /* message buffer (the builder's, or the chunk's) */
	size_t err_size;
	uint8_t origin[APEX_NAME_MAX];
	ldns_rdf *origin_rdf;        /* origin for ldns, made when needed */
	uint8_t prev[APEX_NAME_MAX]; /* owner of the previous record */
	bool have_prev;
} apex_reader_t;

/* The next blank-separated field of a record line from *p (a backslash
 * escapes the character after it, a blank among them: "a\\ b." is one
 * name), or NULL at the line's end; *p moves past it. */
static inline const char *apex_record_field(const char **p, size_t *len)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	const char *start = s;
	while (*s != '\0' && *s != ' ' && *s != '\t')
		s += s[0] == '\\' && s[1] != '\0' ? 2 : 1;
	*p = s;
	*len = (size_t)(s - start);
	return *len > 0 ? start : NULL;
}

/* Write "FILE:LINE: reason" (or "FILE: reason" when line is 0) to r's
 * error buffer; returns APEX_ELOAD. */
int apex_reader_fail(apex_reader_t *r, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read the next record into r->rec as a single line: comments removed,
 * parentheses joined, leading white space kept (it means "same owner").
 * Returns 1 with *start_line set, 0 at end of text, or an error.
 */
int apex_read_record(apex_reader_t *r, int *start_line);

/* Next white-space separated token of *s (quotes stripped, the token
 * NUL-terminated in place); NULL at end. */
char *apex_next_token(char **s);

/* Free what r owns (not r itself). */
void apex_reader_free(apex_reader_t *r);

/* record_store.c: store one parsed record in r's sink, after the checks
 * common to both parsers (see apex_sink_add_rr()). */
int apex_record_store(apex_reader_t *r, int line, const uint8_t *owner, uint16_t type, uint32_t ttl,
		      const uint8_t *rdata, size_t rdlength, const uint8_t *canonical_in);

/* RFC 4034 section 6.2: types whose embedded names are lowercased in the
 * canonical form (NSEC excluded, RFC 6840 section 5.1). */
bool apex_type_has_canonical_names(uint16_t type);

/* Any ASCII capital in p[0..size)? */
bool apex_has_upper(const uint8_t *p, size_t size);

/* record_fast.c: r->rec of the form "[owner] [TTL] [IN] TYPE RDATA" with
 * a type of rdata_text.c.  APEX_OK when stored, APEX_EINVAL when it is
 * not of that form (nothing stored: ldns parses it), or an error. */
int apex_record_parse_fast(apex_reader_t *r, int line);

/* record_ldns.c: r->rec parsed by ldns (any type, RFC 3597 forms). */
int apex_record_parse_ldns(apex_reader_t *r, int line);

/* record_ldns.c: one record ldns holds (from text, or from wire form:
 * zone_from_wire.c), checked and stored in r's sink with its canonical
 * form. */
int apex_record_store_ldns(apex_reader_t *r, int line, const ldns_rr *rr);

/* record_wire.c: one record in wire form (uncompressed RDATA, class IN) of
 * a common type, checked and stored in r's sink with its canonical form.
 * APEX_OK when stored, APEX_EINVAL when the type is not one of them or
 * its RDATA is not of the type's shape (nothing stored: ldns reads it and
 * says what is wrong), or an error. */
int apex_record_store_wire(apex_reader_t *r, int line, const uint8_t *owner, uint16_t type,
			   uint32_t ttl, const uint8_t *rdata, size_t rdlength);

/* directives.c: $ORIGIN, $TTL or $INCLUDE in r->rec (depth < 0: $INCLUDE
 * not allowed, as in a chunk parsed on its own thread). */
int apex_directive(apex_reader_t *r, int line, int depth);

/* load.c: the records of r's text into r's sink, in order; depth as for
 * apex_directive(). */
int apex_read_records(apex_reader_t *r, int depth);

/* load.c: one file (the zone file or an $INCLUDE) into sink, on this
 * thread, with origin in force at its start. */
int apex_load_file(apex_loader_t *ld, apex_sink_t *sink, const char *path, const uint8_t *origin,
		   int depth);

#endif
