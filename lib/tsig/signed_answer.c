/* SPDX-License-Identifier: BSD-3-Clause */
/* The answer to a query signed with TSIG (signed_answer.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tsig/signed_answer.h"

#include <string.h>

#include "dns/name.h"
#include "dns/wire.h"
#include "util/error.h"

#define MESSAGE_MAX 65535
#define RCODE_FORMERR 1
#define RCODE_NOTAUTH 9

/* Cut the answer to its header and question, with rcode. */
static size_t error_answer(uint8_t *answer, size_t size, uint8_t rcode)
{
	uint8_t name[APEX_NAME_MAX];
	size_t pos = 12;

	if (size < 12)
		return 0;
	answer[3] = (uint8_t)((answer[3] & 0xf0) | rcode);
	memset(answer + 6, 0, 6);
	if (apex_read_u16(answer + 4) == 0 || apex_name_unpack(answer, size, &pos, name) < 0 ||
	    pos + 4 > size) {
		memset(answer + 4, 0, 2);
		return 12;
	}
	apex_write_u16(answer + 4, 1);
	return pos + 4;
}

size_t apex_tsig_signed_answer(const uint8_t *query, size_t query_size,
			       const apex_tsig_keyring_t *ring, uint64_t now, uint8_t *answer,
			       size_t size, size_t capacity)
{
	uint8_t copy[MESSAGE_MAX];
	size_t n = query_size;
	apex_tsig_result_t res;

	if (query_size > sizeof(copy))
		return 0;
	memcpy(copy, query, query_size);
	int rc = apex_tsig_verify(copy, &n, ring, NULL, now, &res);
	if (rc == APEX_ENOENT)
		return size; /* not the last record: the engine's answer stands */
	if (rc < 0 || res.error == APEX_TSIG_FORMERR)
		return error_answer(answer, size, RCODE_FORMERR);
	if (res.error != APEX_TSIG_NOERROR) {
		size = error_answer(answer, size, RCODE_NOTAUTH);
		/* the TSIG error in a TSIG record (RFC 8945 section 5.3.2), if it fits */
		apex_tsig_error_record(answer, &size, capacity, &res, now);
		return size;
	}
	if (apex_tsig_sign(answer, &size, capacity, res.key, &res.mac, now, NULL) < 0)
		return error_answer(answer, size, RCODE_NOTAUTH);
	return size;
}
