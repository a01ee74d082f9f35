/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TSIG (RFC 8945): messages signed with a shared secret, as zone
 * transfers and NOTIFY carry them.
 *
 * A key has a name, an algorithm (HMAC with MD5 for old peers, SHA-1,
 * SHA-224, SHA-256, SHA-384 or SHA-512; OpenSSL's libcrypto computes
 * them) and a secret.  apex_tsig_sign() appends a TSIG record to a
 * message; apex_tsig_verify() checks the one a message ends with and
 * takes it off, so that the message can then be parsed as if unsigned.
 * A stream of messages (an AXFR or IXFR response, RFC 8945 section 5.3.1)
 * chains each MAC to the one before: apex_tsig_stream_t carries it.
 *
 * Nothing here allocates but the HMAC context of one computation, freed
 * before the call returns, and that of a stream's unsigned messages, which
 * the stream holds (apex_tsig_stream_clear()).  Functions return 0 or a
 * negative apex code.
 */
#ifndef APEX_TSIG_TSIG_H
#define APEX_TSIG_TSIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dns/name.h"

#define APEX_TSIG_MAC_MAX 64     /* SHA-512 */
#define APEX_TSIG_SECRET_MAX 256 /* bytes of a secret */
#define APEX_TSIG_FUDGE 300      /* seconds: RFC 8945 section 10's recommendation */

/* TSIG error codes (the RR's Error field, RFC 8945 section 3) and FORMERR. */
enum {
	APEX_TSIG_NOERROR = 0,
	APEX_TSIG_FORMERR = 1,
	APEX_TSIG_BADSIG = 16,
	APEX_TSIG_BADKEY = 17,
	APEX_TSIG_BADTIME = 18,
	APEX_TSIG_BADTRUNC = 22,
};

typedef enum apex_tsig_alg {
	APEX_TSIG_HMAC_MD5,
	APEX_TSIG_HMAC_SHA1,
	APEX_TSIG_HMAC_SHA224,
	APEX_TSIG_HMAC_SHA256,
	APEX_TSIG_HMAC_SHA384,
	APEX_TSIG_HMAC_SHA512,
} apex_tsig_alg_t;

typedef struct apex_tsig_key {
	uint8_t name[APEX_NAME_MAX]; /* wire form, lower case */
	apex_tsig_alg_t alg;
	uint8_t secret[APEX_TSIG_SECRET_MAX];
	size_t secret_size;
} apex_tsig_key_t;

/* The keys a server knows; the array is the caller's. */
typedef struct apex_tsig_keyring {
	const apex_tsig_key_t *keys;
	size_t count;
} apex_tsig_keyring_t;

/*
 * A key from configuration text: its name ("xfr-key", made absolute), its
 * algorithm as NSD and Knot DNS write it ("hmac-sha256") or as its wire
 * name ("hmac-sha256."), and its secret in base64.  APEX_EINVAL with the
 * reason in err when any of them is wrong.
 */
int apex_tsig_key_init(apex_tsig_key_t *key, const char *name, const char *alg,
		       const char *secret_base64, char *err, size_t err_size);

/* The key of this name and algorithm (wire form), or NULL. */
const apex_tsig_key_t *apex_tsig_keyring_find(const apex_tsig_keyring_t *ring, const uint8_t *name,
					      const uint8_t *alg_name);

/* The MAC of a signed message, kept to sign or check the next one. */
typedef struct apex_tsig_mac {
	uint8_t bytes[APEX_TSIG_MAC_MAX];
	size_t size;
} apex_tsig_mac_t;

/*
 * Sign msg[0..*size), whose capacity is capacity: the TSIG record is
 * appended (ARCOUNT counts it) and *size grows.  prior: for a response,
 * the request's MAC (and in a stream, the MAC of the message before; see
 * apex_tsig_stream_t), NULL for a request.  time_signed: seconds since
 * the epoch.  The new MAC goes to *mac (may be NULL).  APEX_ESPACE when
 * the record does not fit (msg unchanged).
 */
int apex_tsig_sign(uint8_t *msg, size_t *size, size_t capacity, const apex_tsig_key_t *key,
		   const apex_tsig_mac_t *prior, uint64_t time_signed, apex_tsig_mac_t *mac);

/* What apex_tsig_verify() found. */
typedef struct apex_tsig_result {
	int error;                       /* APEX_TSIG_*: NOERROR when the message is good */
	const apex_tsig_key_t *key;      /* the key named, when known */
	uint8_t key_name[APEX_NAME_MAX]; /* as the record names them (unless FORMERR) */
	uint8_t alg_name[APEX_NAME_MAX];
	apex_tsig_mac_t mac; /* the message's MAC (to sign the answer) */
	uint64_t time_signed;
	uint16_t fudge;
	uint16_t original_id;
} apex_tsig_result_t;

/*
 * Check the TSIG record msg[0..*size) ends with, against ring, at time
 * now (seconds since the epoch), prior being the request's MAC when msg
 * is a response (NULL for a request).  Returns APEX_ENOENT when msg is a
 * well-formed message without a TSIG record (msg unchanged), else APEX_OK with res->error the
 * outcome: NOERROR, FORMERR (a message cut short or with bytes after its
 * records, a TSIG record that is not the last, or is malformed), BADKEY (unknown key or algorithm), BADSIG, BADTRUNC (a MAC
 * cut shorter than RFC 8945 section 5.2.2.1 allows) or BADTIME (outside
 * the fudge).  Unless FORMERR, the TSIG record is taken off: *size
 * shrinks and ARCOUNT no longer counts it.
 */
int apex_tsig_verify(uint8_t *msg, size_t *size, const apex_tsig_keyring_t *ring,
		     const apex_tsig_mac_t *prior, uint64_t now, apex_tsig_result_t *res);

/*
 * Append to the error answer msg[0..*size) (capacity bytes) the TSIG record
 * RFC 8945 section 5.3.2 asks for, for a request whose check found req
 * (apex_tsig_verify()): for BADKEY, BADSIG and BADTRUNC an unsigned record
 * (empty MAC) naming the request's key and algorithm, with the error; for
 * BADTIME a record signed with the request's MAC, carrying the request's
 * time and the server's (now) as other data.  APEX_ESPACE when it does
 * not fit.  The caller sets the answer's RCODE (NOTAUTH).
 */
int apex_tsig_error_record(uint8_t *msg, size_t *size, size_t capacity,
			   const apex_tsig_result_t *req, uint64_t now);

/*
 * The messages of one response stream (RFC 8945 section 5.3.1): the first
 * is signed or checked with the request's MAC as prior, each later one
 * with the MAC before it and the TSIG timers only.  A sender may leave up
 * to 99 messages in a row unsigned after the first; the next signed one's
 * MAC covers them.  apex signs every message it sends.  Start a stream with
 * the request's MAC; apex_tsig_stream_clear() it when done with it.
 */
#define APEX_TSIG_UNSIGNED_MAX 99

typedef struct apex_tsig_stream {
	const apex_tsig_key_t *key;
	apex_tsig_mac_t prior;
	unsigned messages;     /* signed or checked so far, unsigned ones included */
	unsigned unsigned_run; /* unsigned messages since the last signed one */
	void *pending;         /* the MAC over them so far (OpenSSL's); owned */
} apex_tsig_stream_t;

void apex_tsig_stream_init(apex_tsig_stream_t *s, const apex_tsig_key_t *key,
			   const apex_tsig_mac_t *request_mac);

/* Sign the next message of the stream (as apex_tsig_sign()). */
int apex_tsig_stream_sign(apex_tsig_stream_t *s, uint8_t *msg, size_t *size, size_t capacity,
			  uint64_t time_signed);

/*
 * Check the next message of the stream (as apex_tsig_verify(), with the
 * stream's key only).  An unsigned message is APEX_OK with NOERROR when the
 * stream may have one there (it is then part of the next MAC), APEX_ENOENT
 * when it is the first message or the 100th unsigned one in a row.
 */
int apex_tsig_stream_verify(apex_tsig_stream_t *s, uint8_t *msg, size_t *size, uint64_t now,
			    apex_tsig_result_t *res);

/* Whether the stream's last message was signed (and checked): a complete
 * answer must end with a signed message. */
bool apex_tsig_stream_complete(const apex_tsig_stream_t *s);

/* Free what the stream holds (a MAC over unsigned messages in progress). */
void apex_tsig_stream_clear(apex_tsig_stream_t *s);

#endif
