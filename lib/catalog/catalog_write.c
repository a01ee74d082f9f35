/* SPDX-License-Identifier: BSD-3-Clause */
/* A catalog zone's text from its members (catalog_write.h). */
#include "catalog/catalog_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns/name.h"
#include "dns/sha1.h"
#include "util/error.h"

#define NAME_TEXT (APEX_NAME_MAX * 4 + 1) /* every byte escaped */

void apex_catalog_member_id(const uint8_t *zone, char id[APEX_CATALOG_ID_SIZE + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t name[APEX_NAME_MAX], digest[APEX_SHA1_SIZE];
	apex_sha1_t sha;

	memcpy(name, zone, apex_name_size(zone));
	apex_name_lower(name);
	apex_sha1_init(&sha);
	apex_sha1_update(&sha, name, apex_name_size(name));
	apex_sha1_final(&sha, digest);
	for (size_t i = 0; i < APEX_CATALOG_ID_SIZE / 2; i++) {
		id[2 * i] = hex[digest[i] >> 4];
		id[2 * i + 1] = hex[digest[i] & 15];
	}
	id[APEX_CATALOG_ID_SIZE] = '\0';
}

static int compare_entries(const void *a, const void *b)
{
	return apex_name_compare(((const apex_catalog_entry_t *)a)->zone,
				 ((const apex_catalog_entry_t *)b)->zone);
}

int apex_catalog_body(const apex_catalog_entry_t *entries, size_t count, char **body, size_t *size)
{
	apex_catalog_entry_t *sorted = malloc((count > 0 ? count : 1) * sizeof(*sorted));
	char text[NAME_TEXT], id[APEX_CATALOG_ID_SIZE + 1];
	FILE *out;
	int rc = APEX_OK;

	*body = NULL;
	*size = 0;
	if (sorted == NULL || (out = open_memstream(body, size)) == NULL) {
		free(sorted);
		return APEX_ENOMEM;
	}
	if (count > 0)
		memcpy(sorted, entries, count * sizeof(*sorted));
	qsort(sorted, count, sizeof(*sorted), compare_entries);
	fputs("@ 0 IN NS invalid.\nversion 0 IN TXT \"2\"\n", out);
	for (size_t i = 0; i < count; i++) {
		apex_catalog_member_id(sorted[i].zone, id);
		apex_name_to_str(sorted[i].zone, text, sizeof(text));
		fprintf(out, "%s.zones 0 IN PTR %s\n", id, text);
		if (sorted[i].group != NULL)
			fprintf(out, "group.%s.zones 0 IN TXT \"%s\"\n", id, sorted[i].group);
	}
	if (ferror(out))
		rc = APEX_ENOMEM;
	if (fclose(out) != 0)
		rc = APEX_ENOMEM;
	free(sorted);
	if (rc < 0) {
		free(*body);
		*body = NULL;
		*size = 0;
	}
	return rc;
}
