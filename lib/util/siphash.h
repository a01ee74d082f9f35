/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input
 * PRF", 2012): a keyed 64-bit hash.  apex uses it where an attacker
 * chooses the input and must not predict or forge the output: the DNS
 * server cookies of RFC 9018 and the hash tables of response rate
 * limiting and the per-client TCP connection counts, each keyed with a
 * secret.
 *
 * Nothing is allocated; the functions are pure and thread-safe.
 */
#ifndef APEX_UTIL_SIPHASH_H
#define APEX_UTIL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define APEX_SIPHASH_KEY_SIZE 16

/* SipHash-2-4 of data[0..size) under the 16-byte key. */
uint64_t apex_siphash24(const uint8_t key[APEX_SIPHASH_KEY_SIZE], const void *data, size_t size);

/*
 * Fill buf with size bytes from the kernel's random source (getrandom).
 * Returns APEX_OK or the failure as -errno.
 */
int apex_random_bytes(void *buf, size_t size);

#endif
