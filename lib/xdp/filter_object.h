/* SPDX-License-Identifier: BSD-3-Clause */
/* The compiled XDP program (filter.bpf.c), built into apexd by the build
 * (filter_object.c is generated from filter.bpf.o). */
#ifndef APEX_XDP_FILTER_OBJECT_H
#define APEX_XDP_FILTER_OBJECT_H

#include <stddef.h>

extern const unsigned char apex_xdp_filter_object[];
extern const size_t apex_xdp_filter_object_size;

#endif
