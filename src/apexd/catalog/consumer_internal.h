/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of catalog/ share: the members and the catalogs as the
 * consumer keeps them (consumer.h), and the helpers over them.  Internal
 * to catalog/.
 */
#ifndef APEXD_CATALOG_CONSUMER_INTERNAL_H
#define APEXD_CATALOG_CONSUMER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog_read.h"
#include "control/commands.h"
#include "dns/name.h"

typedef struct apexd_catalogs apexd_catalogs_t; /* consumer.h */

/* A member zone, in force or about to be: a catalog's, or one apexctl
 * zone-add added (catalog NULL, pattern set). */
typedef struct member {
	uint8_t *zone;    /* wire format, owned */
	uint8_t *catalog; /* the origin of the catalog that owns it, owned; NULL: zone-add */
	char *pattern;    /* a zone-add's pattern, owned; NULL for a catalog's */
	uint8_t id[64];   /* its member node's label: length byte, then the label */
	char *group;      /* its group property; NULL: none; owned */
	char *file;       /* its file, from its pattern once added; owned, NULL before */
	size_t rank;      /* its catalog's place in the configuration */
} member_t;

/* A zone apexctl zone-add added (zone_list.c). */
typedef struct added {
	uint8_t *zone; /* wire format, owned */
	char *pattern; /* owned */
} added_t;

/* A catalog: consumer zone of the configuration. */
typedef struct consumer {
	uint8_t origin[APEX_NAME_MAX];
	char *name;    /* for logs, owned */
	char *pattern; /* catalog-member-pattern, owned */
	/* the version last read: compared, never followed */
	const apex_zone_t *seen;
	uint32_t serial;
	apex_catalog_t catalog; /* its members as last read */
} consumer_t;

struct apexd_catalogs {
	/* Held while a configuration is put in force (here, or by reconfig);
	 * guards everything below up to the wake. */
	pthread_mutex_t apply;
	apex_command_context_t ctx;
	consumer_t *consumers;
	size_t consumer_count;
	uint8_t **configured; /* the file's zones, sorted: never members; owned */
	size_t configured_count;
	member_t *members; /* in force, sorted by zone */
	size_t member_count;
	bool retry; /* the last configuration was not put in force */
	/* the catalogs produced (producer.h) whose file was written for a
	 * configuration not yet in force: reloaded once it is */
	uint8_t **produced;
	size_t produced_count;
	/* the zones apexctl zone-add added, sorted by zone, kept in the
	 * zone-list-file (zone_list.c) at zone_list (as seen in the chroot;
	 * NULL: none configured) */
	added_t *added;
	size_t added_count;
	char *zone_list;
	bool dirty;      /* added changed: the members are put in force again */
	char **patterns; /* the names of the patterns in force, for zone-add */
	size_t pattern_count;

	pthread_mutex_t wake_lock;
	pthread_cond_t wake_cond;
	bool woken, stopping, started;
	pthread_t thread;
	/* the thread's priority: the reload thread's (reload-priority); it
	 * builds configurations and removes files, none of which may take a
	 * CPU from the workers */
	bool idle;
	int nice;
};

/* A copy of name (malloc'ed), or NULL. */
uint8_t *name_dup(const uint8_t *name);

/* Two names (uint8_t * each) in canonical order, for qsort() and bsearch(). */
int compare_names(const void *a, const void *b);

/* What a member owns; a list of count members, and the list. */
void member_clear(member_t *m);
void members_free(member_t *list, size_t count);

/* The member named zone in a list sorted by zone, or NULL. */
member_t *member_find(member_t *list, size_t count, const uint8_t *zone);

/* Whether the configuration file has a zone of that name. */
bool is_configured(const apexd_catalogs_t *c, const uint8_t *zone);

/* The catalog of that origin, or NULL. */
consumer_t *consumer_find(apexd_catalogs_t *c, const uint8_t *origin);
void consumer_clear(consumer_t *k);

/* name as text, for logs. */
void text_of(const uint8_t *name, char *text, size_t size);

/* Whether two members have the same owner: one catalog, or zone-add. */
bool same_owner(const member_t *a, const member_t *b);

/* cfg's zone-list-file and patterns taken note of (zone_list.c): a list
 * file other than the one in use is read.  Returns APEX_OK or
 * APEX_ENOMEM. */
int zone_list_configure(apexd_catalogs_t *c, const apex_config_t *cfg);

/* The added zones freed. */
void zone_list_free(apexd_catalogs_t *c);

/* The members as the catalogs now give them (members.c), sorted by zone,
 * into *out (owned by the caller); who owns each, as consumer.h says. */
int assign(apexd_catalogs_t *c, member_t **out, size_t *count);

#endif
