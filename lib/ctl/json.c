/* SPDX-License-Identifier: BSD-3-Clause */
/* JSON string escaping. */
#include "ctl/json.h"

void apex_ctl_json_string(apex_ctl_buf_t *buf, const char *str)
{
	static const char hex[] = "0123456789abcdef";

	apex_ctl_buf_append(buf, "\"", 1);
	for (const unsigned char *s = (const unsigned char *)str; *s != '\0'; s++) {
		char esc[6];

		if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*s;
			apex_ctl_buf_append(buf, esc, 2);
		} else if (*s < 0x20 || *s >= 0x7f) {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[*s >> 4];
			esc[5] = hex[*s & 15];
			apex_ctl_buf_append(buf, esc, 6);
		} else {
			apex_ctl_buf_append(buf, s, 1);
		}
	}
	apex_ctl_buf_append(buf, "\"", 1);
}
