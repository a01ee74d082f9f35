/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NSD's spellings of apex's keys (apex.conf(5), NSD's spellings): the
 * reader looks a key up here when its section has no key of that name.
 * Internal to config/.
 */
#ifndef APEXD_CONFIG_NSD_SPELLINGS_H
#define APEXD_CONFIG_NSD_SPELLINGS_H

/* The apex key that NSD's key means in a section ("server", "zone"), or
 * NULL if it is no NSD spelling there. */
const char *apex_config_nsd_spelling(const char *section, const char *key);

#endif
