/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "dns/ascii.h"
#include "dns/name.h"
#include "util/error.h"

int apex_name_unpack(const uint8_t *pkt, size_t pkt_len, size_t *pos, uint8_t *out)
{
	size_t p = *pos;
	size_t limit = p;  /* a pointer must go strictly below this */
	size_t resume = 0; /* where the name ends in the message, once a pointer was taken */
	size_t size = 0;

	for (;;) {
		/* A run of labels up to the root label or a pointer is checked,
		 * then copied in one piece. */
		size_t run = p;
		uint8_t len;
		for (;;) {
			if (p >= pkt_len)
				return APEX_EMALFORMED;
			len = pkt[p];
			if (len > APEX_LABEL_MAX)
				break; /* a pointer, or the 0x40 and 0x80 label types */
			if (size + (p - run) + 1 + len > APEX_NAME_MAX || p + 1 + len > pkt_len)
				return APEX_EMALFORMED;
			p += 1 + (size_t)len;
			if (len == 0)
				break;
		}
		memcpy(out + size, pkt + run, p - run);
		size += p - run;
		if (len == 0)
			break;
		if ((len & 0xC0) != 0xC0 || p + 1 >= pkt_len)
			return APEX_EMALFORMED;
		size_t target = ((size_t)(len & 0x3F) << 8) | pkt[p + 1];
		if (target >= limit)
			return APEX_EMALFORMED; /* loop or forward pointer */
		if (resume == 0)
			resume = p + 2;
		p = limit = target;
	}
	*pos = resume != 0 ? resume : p;
	return (int)size;
}

size_t apex_name_size(const uint8_t *name)
{
	const uint8_t *p = name;
	while (*p != 0)
		p += 1 + *p;
	return (size_t)(p - name) + 1;
}

size_t apex_name_checked_size(const uint8_t *p, const uint8_t *end)
{
	size_t avail = p < end ? (size_t)(end - p) : 0, pos = 0;

	while (pos < avail) {
		uint8_t len = p[pos];
		if (len > 63)
			return 0;
		pos += 1u + len;
		if (pos > APEX_NAME_MAX)
			return 0;
		if (len == 0)
			return pos;
	}
	return 0;
}

int apex_name_labels(const uint8_t *name)
{
	int n = 0;
	while (*name != 0) {
		name += 1 + *name;
		n++;
	}
	return n;
}

bool apex_name_equal(const uint8_t *a, const uint8_t *b)
{
	for (;;) {
		if (*a != *b)
			return false;
		uint8_t len = *a;
		if (len == 0)
			return true;
		for (uint8_t i = 1; i <= len; i++) {
			if (apex_ascii_lower(a[i]) != apex_ascii_lower(b[i]))
				return false;
		}
		a += 1 + len;
		b += 1 + len;
	}
}

bool apex_name_is_subdomain(const uint8_t *name, const uint8_t *parent)
{
	int skip = apex_name_labels(name) - apex_name_labels(parent);
	if (skip < 0)
		return false;
	while (skip-- > 0)
		name += 1 + *name;
	return apex_name_equal(name, parent);
}

size_t apex_name_key(const uint8_t *name, uint8_t *key, uint16_t *label_ends)
{
	const uint8_t *labels[APEX_LABELS_MAX];
	int n = 0;
	for (const uint8_t *p = name; *p != 0 && n < APEX_LABELS_MAX; p += 1 + *p)
		labels[n++] = p;

	size_t k = 0;
	if (label_ends != NULL)
		label_ends[0] = 0;
	for (int i = n - 1; i >= 0; i--) {
		const uint8_t *label = labels[i];
		for (uint8_t j = 1; j <= label[0]; j++) {
			uint8_t c = apex_ascii_lower(label[j]);
			if (c <= 1) {
				/* Escape so that 0x00 stays the separator and
				 * order is kept: 0x00 -> 01 01, 0x01 -> 01 02. */
				key[k++] = 1;
				key[k++] = (uint8_t)(c + 1);
			} else {
				key[k++] = c;
			}
		}
		key[k++] = 0;
		if (label_ends != NULL)
			label_ends[n - i] = (uint16_t)k;
	}
	return k;
}

/* The start of each label of name, root excluded, first label first;
 * returns their number. */
static int label_starts(const uint8_t *name, const uint8_t **labels)
{
	int n = 0;
	for (const uint8_t *p = name; *p != 0 && n < APEX_LABELS_MAX; p += 1 + *p)
		labels[n++] = p;
	return n;
}

/*
 * Label by label from the root, without building the lookup keys: the
 * order of apex_name_key()'s keys, which is RFC 4034's (a label that is
 * a prefix of another sorts first, a name with fewer labels first).
 * Sorting thousands of zone names calls this a million times.
 */
int apex_name_compare(const uint8_t *a, const uint8_t *b)
{
	const uint8_t *la[APEX_LABELS_MAX], *lb[APEX_LABELS_MAX];
	int na = label_starts(a, la);
	int nb = label_starts(b, lb);

	for (int i = na - 1, j = nb - 1; i >= 0 && j >= 0; i--, j--) {
		const uint8_t *x = la[i], *y = lb[j];
		uint8_t len = x[0] < y[0] ? x[0] : y[0];

		for (uint8_t k = 1; k <= len; k++) {
			uint8_t cx = apex_ascii_lower(x[k]), cy = apex_ascii_lower(y[k]);
			if (cx != cy)
				return cx < cy ? -1 : 1;
		}
		if (x[0] != y[0])
			return x[0] < y[0] ? -1 : 1;
	}
	return (na > nb) - (na < nb);
}

void apex_name_lower(uint8_t *name)
{
	while (*name != 0) {
		uint8_t len = *name;
		for (uint8_t i = 1; i <= len; i++)
			name[i] = apex_ascii_lower(name[i]);
		name += 1 + len;
	}
}

char *apex_name_to_str(const uint8_t *name, char *buf, size_t buf_size)
{
	size_t n = 0;
	if (buf_size == 0)
		return buf;
	if (*name == 0) {
		snprintf(buf, buf_size, ".");
		return buf;
	}
	while (*name != 0 && n + 5 < buf_size) {
		uint8_t len = *name;
		for (uint8_t i = 1; i <= len && n + 5 < buf_size; i++) {
			uint8_t c = name[i];
			if (c == '.' || c == '\\' || c == '"' || c == '(' || c == ')' || c == ';' ||
			    c == '@' || c == '$') {
				buf[n++] = '\\';
				buf[n++] = (char)c;
			} else if (c <= 0x20 || c >= 0x7F) {
				n += (size_t)snprintf(buf + n, buf_size - n, "\\%03u", c);
			} else {
				buf[n++] = (char)c;
			}
		}
		buf[n++] = '.';
		name += 1 + len;
	}
	buf[n < buf_size ? n : buf_size - 1] = '\0';
	return buf;
}

int apex_name_from_str(const char *str, uint8_t *out)
{
	size_t size = 0;
	const char *s = str;
	if (strcmp(s, ".") == 0 || *s == '\0') {
		out[0] = 0;
		return 1;
	}
	while (*s != '\0') {
		size_t len_pos = size++;
		uint8_t len = 0;
		while (*s != '\0' && *s != '.') {
			unsigned c = (unsigned char)*s++;
			if (c == '\\') {
				if (isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
				    isdigit((unsigned char)s[2])) {
					c = (unsigned)((s[0] - '0') * 100 + (s[1] - '0') * 10 +
						       (s[2] - '0'));
					if (c > 255)
						return APEX_EINVAL;
					s += 3;
				} else if (*s != '\0') {
					c = (unsigned char)*s++;
				} else {
					return APEX_EINVAL;
				}
			}
			if (len == APEX_LABEL_MAX || size + 1 >= APEX_NAME_MAX)
				return APEX_EINVAL;
			out[size++] = (uint8_t)c;
			len++;
		}
		if (len == 0)
			return APEX_EINVAL; /* empty label */
		out[len_pos] = len;
		if (*s == '.')
			s++;
	}
	out[size++] = 0;
	return (int)size;
}
