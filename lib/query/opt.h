/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * More EDNS options in the OPT record of a response, after
 * apex_writer_opt() has written it (with or without NSID).
 */
#ifndef APEX_QUERY_OPT_H
#define APEX_QUERY_OPT_H

#include <stddef.h>
#include <stdint.h>

#include "query/writer.h"

/*
 * Append option (code, data[0..size)) to the OPT record that starts at
 * byte opt_pos of w's message and ends at w->pos (it must be the last
 * record written).  Returns 0 or APEX_ESPACE (nothing written).
 */
int apex_writer_opt_append(apex_writer_t *w, size_t opt_pos, uint16_t code, const uint8_t *data,
			   uint16_t size);

#endif
