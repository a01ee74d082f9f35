/* SPDX-License-Identifier: BSD-3-Clause */
#include "dns/ascii.h"

#define L4(c) (c), (c) + 1, (c) + 2, (c) + 3
#define L16(c) L4(c), L4((c) + 4), L4((c) + 8), L4((c) + 12)
#define LETTERS L16('a'), L4('a' + 16), L4('a' + 20), 'a' + 24, 'a' + 25

/* 0x00 to 0x40 ('@'), 'A' to 'Z' as 'a' to 'z', then 0x5b ('[') to 0xff */
const uint8_t apex_ascii_lower_table[256] = {
	L16(0x00), L16(0x10), L16(0x20), L16(0x30), 0x40,      LETTERS,
	L4(0x5b),  0x5f,      L16(0x60), L16(0x70), L16(0x80), L16(0x90),
	L16(0xa0), L16(0xb0), L16(0xc0), L16(0xd0), L16(0xe0), L16(0xf0),
};

_Static_assert(sizeof(apex_ascii_lower_table) == 256, "one entry per byte");
