/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The tokenizer of zone file text: records as single lines, comments
 * removed, parentheses joined, quoted strings kept, each record with the
 * line it starts on (zone_file_reader.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/error.h"
#include "zone/zone_file_reader.h"

int apex_reader_fail(apex_reader_t *r, int line, const char *fmt, ...)
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

static int rec_reserve(apex_reader_t *r, size_t more)
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
static void drop_behind(apex_reader_t *r)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)r->dropped + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
	uintptr_t to = (uintptr_t)r->p & ~((uintptr_t)page - 1);
	if (to > from + DROP_BEHIND) {
		madvise((void *)from, to - from, MADV_DONTNEED);
		r->dropped = (const char *)to;
	}
}

/* Characters that apex_read_record() treats one by one; every other one is
 * copied as it is. */
static const bool special_char[256] = {
	[';'] = true, ['"'] = true,  ['\\'] = true, ['('] = true,
	[')'] = true, ['\n'] = true, ['\r'] = true,
};

int apex_read_record(apex_reader_t *r, int *start_line)
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
				return apex_reader_fail(r, open_line, "unbalanced parenthesis");
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
					return apex_reader_fail(r, r->line,
								"unbalanced parenthesis");
				*out++ = ' ';
			} else if (c == '\n' || c == '\r') {
				*out++ = ' ';
			} else {
				*out++ = c;
			}
			if (!content && c != ' ' && c != '\t' && c != '\n' && c != '\r' &&
			    c != '(' && c != ')') {
				content = true;
				*start_line = r->line;
			}
		}
		r->rec_len = (size_t)(out - r->rec);
		r->rec[r->rec_len] = '\0';
		if (in_quote)
			return apex_reader_fail(r, r->line, "unterminated quoted string");
		if (depth == 0) {
			if (content)
				return 1;
			r->rec_len = 0; /* blank or comment-only line */
			r->rec[0] = '\0';
		}
	}
}

char *apex_next_token(char **s)
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

void apex_reader_free(apex_reader_t *r)
{
	ldns_rdf_deep_free(r->origin_rdf);
	free(r->rec);
}
