/* SPDX-License-Identifier: BSD-3-Clause */
#include "dns/name_hash.h"

#include "dns/name.h"

uint32_t apex_name_hash(const uint8_t *name)
{
	/* Labels from the root down: find them first. */
	const uint8_t *labels[APEX_LABELS_MAX];
	int n = 0;
	for (const uint8_t *p = name; *p != 0 && n < APEX_LABELS_MAX; p += 1 + *p)
		labels[n++] = p;
	uint32_t h = APEX_NAME_HASH_ROOT;
	while (n > 0)
		h = apex_name_hash_label(h, labels[--n]);
	return h;
}
