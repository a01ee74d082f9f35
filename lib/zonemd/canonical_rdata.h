/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The canonical form of a record's RDATA (RFC 4034 section 6.2, as RFC
 * 6840 section 5.1 corrects it): the embedded names of the types listed
 * there lowercased, NSEC's next owner left as it is.  The form has the
 * size of the RDATA it comes from.
 */
#ifndef APEX_ZONEMD_CANONICAL_RDATA_H
#define APEX_ZONEMD_CANONICAL_RDATA_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write the canonical form of rdata[0..size) of a record of type into out
 * (size bytes).  The RDATA is a served version's, so its names are known
 * to be well formed; a field that does not fit is left as it is.
 */
void apex_canonical_rdata(uint16_t type, const uint8_t *rdata, size_t size, uint8_t *out);

#endif
