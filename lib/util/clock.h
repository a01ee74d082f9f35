/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Milliseconds (and microseconds) of CLOCK_MONOTONIC, for time-outs and
 * durations that must not jump with the wall clock (transfers, NOTIFY,
 * refresh timers).
 */
#ifndef APEX_UTIL_CLOCK_H
#define APEX_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t apex_monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Microseconds of CLOCK_MONOTONIC, for the phases of a path measured in
 * parts of a millisecond (the log of a transfer's path to serving). */
static inline uint64_t apex_monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Nanoseconds of CLOCK_MONOTONIC, for steps of a few microseconds (a
 * derivation's, zone/derive_profile.h). */
static inline uint64_t apex_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

#endif
