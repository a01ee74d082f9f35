/* apex error codes: functions return 0 on success or one of these (negative). */
#ifndef APEX_UTIL_ERROR_H
#define APEX_UTIL_ERROR_H

enum {
	APEX_OK = 0,
	APEX_ENOMEM = -1,     /* allocation failed */
	APEX_EMALFORMED = -2, /* malformed wire data */
	APEX_ENOENT = -3,     /* not found */
	APEX_EINVAL = -4,     /* invalid argument or configuration */
	APEX_ELOAD = -5,      /* zone could not be loaded */
	APEX_ESPACE = -6,     /* output buffer too small */
	APEX_EIO = -7,        /* system call failed; see errno */
};

/* A short static description of an apex error code. */
const char *apex_strerror(int err);

#endif
