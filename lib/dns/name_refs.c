/* SPDX-License-Identifier: BSD-3-Clause */
/* Names sorted to be found (name_refs.h). */
#include "dns/name_refs.h"

#include <stdlib.h>

#include "dns/name.h"

static int compare_refs(const void *a, const void *b)
{
	return apex_name_compare(((const apex_name_ref_t *)a)->name,
				 ((const apex_name_ref_t *)b)->name);
}

void apex_name_refs_sort(apex_name_ref_t *refs, size_t count)
{
	if (count > 1)
		qsort(refs, count, sizeof(*refs), compare_refs);
}

const apex_name_ref_t *apex_name_refs_find(const apex_name_ref_t *refs, size_t count,
					   const uint8_t *name)
{
	apex_name_ref_t key = { name, 0 };

	return count == 0 ? NULL : bsearch(&key, refs, count, sizeof(*refs), compare_refs);
}
