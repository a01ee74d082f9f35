#include "util/error.h"

const char *apex_strerror(int err)
{
	switch (err) {
	case APEX_OK: return "success";
	case APEX_ENOMEM: return "out of memory";
	case APEX_EMALFORMED: return "malformed data";
	case APEX_ENOENT: return "not found";
	case APEX_EINVAL: return "invalid argument";
	case APEX_ELOAD: return "zone load failed";
	case APEX_ESPACE: return "no space left in buffer";
	case APEX_EIO: return "I/O error";
	default: return "unknown error";
	}
}
