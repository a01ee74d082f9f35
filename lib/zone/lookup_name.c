/* SPDX-License-Identifier: BSD-3-Clause */
#include "zone/lookup_name.h"

#include "dns/ascii.h"
#include "dns/name_hash.h"

void apex_lookup_name_init(apex_lookup_name_t *ln, const uint8_t *name)
{
	/* Labels are read from the root down: find where they start. */
	const uint8_t *labels[APEX_LABELS_MAX];
	int n = 0;
	for (const uint8_t *p = name; *p != 0 && n < APEX_LABELS_MAX; p += 1 + *p)
		labels[n++] = p;

	/* The key as apex_name_key() writes it and the hash as
	 * apex_name_hash_label() computes it, in the same pass. */
	uint8_t *k = ln->key;
	uint32_t h = APEX_NAME_HASH_ROOT;
	ln->ends[0] = 0;
	ln->hashes[0] = h;
	for (int i = 1; i <= n; i++) {
		const uint8_t *label = labels[n - i];
		unsigned len = label[0];
		h = (h ^ len) * APEX_NAME_HASH_PRIME;
		for (unsigned j = 1; j <= len; j++) {
			uint8_t c = apex_ascii_lower(label[j]);
			h = (h ^ c) * APEX_NAME_HASH_PRIME;
			if (c > 1) {
				*k++ = c;
			} else { /* escaped: 0x00 -> 01 01, 0x01 -> 01 02 */
				*k++ = 1;
				*k++ = (uint8_t)(c + 1);
			}
		}
		*k++ = 0;
		ln->ends[i] = (uint16_t)(k - ln->key);
		ln->hashes[i] = h;
	}
	ln->size = (size_t)(k - ln->key);
	ln->labels = n;
}
