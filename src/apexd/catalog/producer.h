/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Catalogs produced (`catalog: producer`, RFC 9432; doc/transfers.md):
 * apexd writes the file of each such zone itself, a catalog of the zones
 * of the configuration that name it in catalog-producer-zone, each with
 * its catalog-group as its group property (lib/catalog/catalog_write.h).
 * The file is written only when its members or their groups differ from
 * what it holds; its serial is then one more than the file's (the time,
 * for a file that does not exist yet), so a restart or a reconfig that
 * changes no member leaves the catalog as it is.  The zone is loaded, or
 * reloaded, like any primary zone: a reload derived from the version
 * served gives its journal the change (IXFR) and NOTIFYs its targets.
 */
#ifndef APEXD_CATALOG_PRODUCER_H
#define APEXD_CATALOG_PRODUCER_H

#include <stddef.h>
#include <stdint.h>

#include "config/daemon_config.h"

/*
 * Write the file of each catalog: producer zone of cfg whose members
 * changed.  The origins of the catalogs written are appended to *written
 * (an array of *count malloc'ed wire names, which the caller frees; NULL
 * written: not wanted).  A file that cannot be written is logged and left
 * as it is.  Returns APEX_OK, or APEX_ENOMEM.
 */
int apexd_catalogs_produce(const apex_config_t *cfg, uint8_t ***written, size_t *count);

#endif
