/* SPDX-License-Identifier: BSD-3-Clause */
/* Crash points inside the library (crash_hook.h). */
#include "util/crash_hook.h"

#include <stddef.h>

void (*apex_crash_hook)(const char *point) = NULL;
