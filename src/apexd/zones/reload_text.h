/* SPDX-License-Identifier: BSD-3-Clause */
/* The sizes of the reloader's texts (reload.h, reload_internal.h). */
#ifndef APEXD_RELOAD_TEXT_H
#define APEXD_RELOAD_TEXT_H

#define APEX_RELOAD_ERROR_MAX 512
#define APEX_RELOAD_NAME_TEXT 1024 /* a name in presentation format, escapes included */

#endif
