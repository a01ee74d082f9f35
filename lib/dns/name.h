/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Domain names in uncompressed wire format (RFC 1035 section 3.1):
 * length-prefixed labels ending with the zero-length root label.
 * Names keep the letter case they were written with; comparisons
 * are ASCII case-insensitive (RFC 4343).
 *
 * The lookup key of a name is its labels from the root down, each
 * lowercased and followed by a 0x00 separator, with the bytes 0x00
 * and 0x01 inside a label escaped as 0x01 0x01 and 0x01 0x02.  memcmp()
 * order of keys is the DNSSEC canonical order of names (RFC 4034
 * section 6.1), keys are unique per name, and the key of an ancestor
 * is a prefix of the key of its descendant.  The root has the empty key.
 */
#ifndef APEX_DNS_NAME_H
#define APEX_DNS_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define APEX_NAME_MAX 255   /* bytes in a wire name */
#define APEX_LABEL_MAX 63   /* bytes in a label */
#define APEX_LABELS_MAX 128 /* labels in a name, root included */
#define APEX_KEY_MAX 512    /* bytes in a lookup key (escaping doubles at most) */

/*
 * Read a name that may be compressed from the message pkt[0..pkt_len)
 * starting at *pos.  The uncompressed name is written to out (at least
 * APEX_NAME_MAX bytes), letter case kept; *pos is advanced past the
 * name as it stands at *pos.  Compression pointers must point strictly
 * backwards (this rejects loops and forward pointers).
 * Returns the size of the name written, or APEX_EMALFORMED.
 */
int apex_name_unpack(const uint8_t *pkt, size_t pkt_len, size_t *pos, uint8_t *out);

/* Size in bytes of a valid uncompressed wire name, root label included. */
size_t apex_name_size(const uint8_t *name);

/* apex_name_size() of data not yet checked: the uncompressed wire name at
 * p that ends before end, or 0 if there is none there (cut short, a
 * compression pointer or another label type, longer than APEX_NAME_MAX,
 * p at or past end). */
size_t apex_name_checked_size(const uint8_t *p, const uint8_t *end);

/* Number of labels, not counting the root label ("." has 0, "com." 1). */
int apex_name_labels(const uint8_t *name);

/* Name with its first label removed; the root returns itself. */
static inline const uint8_t *apex_name_parent(const uint8_t *name)
{
	return name[0] == 0 ? name : name + 1 + name[0];
}

/* True if the first label is the single asterisk of a wildcard (RFC 4592). */
static inline bool apex_name_is_wildcard(const uint8_t *name)
{
	return name[0] == 1 && name[1] == '*';
}

/* ASCII case-insensitive equality of two names. */
bool apex_name_equal(const uint8_t *a, const uint8_t *b);

/* True if name equals parent or lies below it. */
bool apex_name_is_subdomain(const uint8_t *name, const uint8_t *parent);

/* DNSSEC canonical order (RFC 4034 6.1): <0, 0, >0. */
int apex_name_compare(const uint8_t *a, const uint8_t *b);

/* Lowercase a name in place. */
void apex_name_lower(uint8_t *name);

/*
 * Write the lookup key of name to key (APEX_KEY_MAX bytes).  If
 * label_ends is not NULL, label_ends[i] receives the key length that
 * covers the i labels closest to the root (label_ends[0] == 0), for
 * i = 0 .. labels; it must hold APEX_LABELS_MAX entries.
 * Returns the key length.
 */
size_t apex_name_key(const uint8_t *name, uint8_t *key, uint16_t *label_ends);

/* Order of two lookup keys: memcmp, then the shorter first (<0, 0, >0). */
static inline int apex_key_compare(const uint8_t *a, size_t a_size, const uint8_t *b, size_t b_size)
{
	int c = memcmp(a, b, a_size < b_size ? a_size : b_size);
	if (c != 0)
		return c;
	return (a_size > b_size) - (a_size < b_size);
}

/*
 * Presentation format ("www.example.", "\\046" escapes) into buf of
 * size buf_size, for logs and tests.  Returns buf.
 */
char *apex_name_to_str(const uint8_t *name, char *buf, size_t buf_size);

/*
 * Parse a presentation-format absolute or relative name (relative names
 * are taken as absolute) into wire format in out (APEX_NAME_MAX bytes).
 * Supports \DDD and \X escapes.  Returns the wire size or APEX_EINVAL.
 */
int apex_name_from_str(const char *str, uint8_t *out);

#endif
