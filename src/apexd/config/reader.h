/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The config file reader's internals, shared by the files of config/:
 * the reader's state, how a section and its keys are described, and the
 * helpers the keys' parsers use.  Internal to config/; reader.c says how
 * to add a section.
 */
#ifndef APEXD_CONFIG_READER_H
#define APEXD_CONFIG_READER_H

#include <stdbool.h>
#include <stddef.h>

#include "config/daemon_config.h"

typedef struct section_def section_def_t;

/* The reader's state while it reads one file. */
typedef struct parser {
	apex_config_t *cfg;
	const char *file; /* for messages */
	char *base_dir;   /* directory of the config file */
	char *zones_dir;  /* zones-directory: where relative zone files are; NULL: base_dir */
	unsigned line;
	const section_def_t *section; /* the section being read; NULL before the first */
	unsigned section_line;        /* the line that started it */
	void *state;                  /* what it gathers until its end (state_size bytes) */
	char *err;
	size_t err_size;
} parser_t;

/* How a key's value is read into its field of apex_config_t. */
typedef enum key_kind {
	KEY_UINT,   /* a number from min to max, into an integer field */
	KEY_STRING, /* a string, into a char * field (owned) */
	KEY_BOOL,   /* yes/on or no/off, into a bool field */
	KEY_CUSTOM, /* its own parser */
} key_kind_t;

typedef struct key_def {
	const char *name;
	key_kind_t kind;
	size_t offset;          /* of the field in apex_config_t */
	size_t size;            /* of the field (KEY_UINT) */
	unsigned long min, max; /* KEY_UINT */
	int (*parse)(parser_t *p, const char *key, const char *value); /* KEY_CUSTOM */
	bool words; /* the value is several words (an address and a key name): the
		       rest of the line, up to a comment */
} key_def_t;

#define FIELD(f) .offset = offsetof(apex_config_t, f), .size = sizeof(((apex_config_t *)0)->f)
#define UINT_KEY(n, f, lo, hi)                                                    \
	{                                                                         \
		.name = (n), .kind = KEY_UINT, FIELD(f), .min = (lo), .max = (hi) \
	}
#define STRING_KEY(n, f)                                  \
	{                                                 \
		.name = (n), .kind = KEY_STRING, FIELD(f) \
	}
#define BOOL_KEY(n, f)                                  \
	{                                               \
		.name = (n), .kind = KEY_BOOL, FIELD(f) \
	}
#define CUSTOM_KEY(n, fn)                                      \
	{                                                      \
		.name = (n), .kind = KEY_CUSTOM, .parse = (fn) \
	}
#define WORDS_KEY(n, fn)                                                      \
	{                                                                     \
		.name = (n), .kind = KEY_CUSTOM, .parse = (fn), .words = true \
	}

/* A section of the file: "NAME:" on a line of its own, then its keys. */
struct section_def {
	const char *name; /* before the ':' */
	const char *what; /* in messages: "a zone section", "the server section" */
	const key_def_t *keys;
	size_t key_count;
	/* What the section gathers before it can store it (a zone's name and
	 * file): p->state, state_size bytes zeroed at its start; 0: none. */
	size_t state_size;
	/* At its end (the next section or the end of the file): check p->state
	 * and store it in p->cfg.  NULL: nothing to do. */
	int (*end)(parser_t *p);
	/* Free what state points to, after end() or an error.  NULL: nothing. */
	void (*discard)(void *state);
	/* Once the whole file is read: checks across keys.  NULL: none. */
	int (*finish)(parser_t *p);
};

/* The sections, one file each. */
extern const section_def_t apex_config_server_section;   /* server_section.c */
extern const section_def_t apex_config_zone_section;     /* zone_section.c */
extern const section_def_t apex_config_pattern_section;  /* zone_section.c */
extern const section_def_t apex_config_key_section;      /* key_section.c */
extern const section_def_t apex_config_dnstap_section;   /* dnstap_section.c */
extern const section_def_t apex_config_tls_auth_section; /* tls_auth_section.c */

/* Fail with "FILE:LINE: reason" in p->err; returns APEX_EINVAL. */
int apex_config_fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define PFAIL(p, ...) apex_config_fail((p), __VA_ARGS__)

/* A number from min to max; key names it in the message. */
int apex_config_parse_uint(parser_t *p, const char *key, const char *value, unsigned long min,
			   unsigned long max, unsigned long *out);

/* yes/on or no/off. */
int apex_config_parse_bool(parser_t *p, const char *key, const char *value, bool *out);

/* *slot replaced by a copy of value. */
int apex_config_replace_string(parser_t *p, char **slot, const char *value);

#endif
