/* SPDX-License-Identifier: BSD-3-Clause */
/* Session ticket keys: a seqlock-protected pair rotated on a timer
 * (ticket_keys.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "tls/ticket_keys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "tls/reason.h"
#include "util/error.h"

/* A key as OpenSSL's ticket callback takes it: the name written in the
 * ticket, AES-256-CBC to encrypt, HMAC-SHA256 to authenticate. */
typedef struct ticket_key {
	uint8_t name[16];
	uint8_t aes[32];
	uint8_t hmac[32];
} ticket_key_t;

#define KEY_WORDS (sizeof(ticket_key_t) / sizeof(uint64_t))
_Static_assert(sizeof(ticket_key_t) % sizeof(uint64_t) == 0, "a key is whole words");

struct apex_tls_ticket_keys {
	atomic_uint seq;                      /* odd while a rotation writes */
	_Atomic uint64_t words[2][KEY_WORDS]; /* [0] current, [1] previous */
	pthread_mutex_t rotating;             /* taken by rotations only */
	atomic_int refs;
};

static pthread_once_t index_once = PTHREAD_ONCE_INIT;
static int ex_index = -1; /* the ring's place in an SSL_CTX's ex_data */

/* A consistent copy of both keys, without a lock: copied again when a
 * rotation ran meanwhile.  The acquire loads of the words make a word
 * written by a rotation imply that the second read of seq sees that
 * rotation's odd count (or a later one). */
static void snapshot(apex_tls_ticket_keys_t *k, ticket_key_t out[2])
{
	uint64_t words[2][KEY_WORDS];
	unsigned before, after;

	do {
		before = atomic_load_explicit(&k->seq, memory_order_acquire);
		for (size_t i = 0; i < 2; i++)
			for (size_t j = 0; j < KEY_WORDS; j++)
				words[i][j] =
					atomic_load_explicit(&k->words[i][j], memory_order_acquire);
		after = atomic_load_explicit(&k->seq, memory_order_relaxed);
	} while ((before & 1) != 0 || before != after);
	memcpy(out, words, sizeof words);
	OPENSSL_cleanse(words, sizeof words);
}

/* Store key into slot: the caller holds the rotation mutex. */
static void store_key(apex_tls_ticket_keys_t *k, size_t slot, const uint64_t *key)
{
	for (size_t j = 0; j < KEY_WORDS; j++)
		atomic_store_explicit(&k->words[slot][j], key[j], memory_order_release);
}

static int random_key(uint64_t key[KEY_WORDS], char *err, size_t err_size)
{
	ERR_clear_error();
	if (RAND_bytes((unsigned char *)key, (int)sizeof(ticket_key_t)) != 1)
		return apex_tls_fail(err, err_size, APEX_EIO, "session ticket key");
	return APEX_OK;
}

int apex_tls_ticket_keys_new(apex_tls_ticket_keys_t **out, char *err, size_t err_size)
{
	apex_tls_ticket_keys_t *k = calloc(1, sizeof *k);
	uint64_t key[KEY_WORDS];
	int rc = APEX_OK;

	*out = NULL;
	if (k == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "session ticket keys: out of memory");
	atomic_init(&k->seq, 0);
	atomic_init(&k->refs, 1);
	pthread_mutex_init(&k->rotating, NULL);
	for (size_t slot = 0; slot < 2 && rc == APEX_OK; slot++) {
		rc = random_key(key, err, err_size);
		for (size_t j = 0; j < KEY_WORDS; j++)
			atomic_init(&k->words[slot][j], key[j]);
	}
	OPENSSL_cleanse(key, sizeof key);
	if (rc < 0) {
		apex_tls_ticket_keys_unref(k);
		return rc;
	}
	*out = k;
	return APEX_OK;
}

void apex_tls_ticket_keys_ref(apex_tls_ticket_keys_t *k)
{
	atomic_fetch_add_explicit(&k->refs, 1, memory_order_relaxed);
}

void apex_tls_ticket_keys_unref(apex_tls_ticket_keys_t *k)
{
	if (k == NULL || atomic_fetch_sub_explicit(&k->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_destroy(&k->rotating);
	OPENSSL_cleanse(k, sizeof *k);
	free(k);
}

int apex_tls_ticket_keys_rotate(apex_tls_ticket_keys_t *k, char *err, size_t err_size)
{
	uint64_t fresh[KEY_WORDS], current[KEY_WORDS];
	unsigned seq;
	int rc = random_key(fresh, err, err_size);

	if (rc < 0)
		return rc;
	pthread_mutex_lock(&k->rotating);
	for (size_t j = 0; j < KEY_WORDS; j++)
		current[j] = atomic_load_explicit(&k->words[0][j], memory_order_relaxed);
	seq = atomic_load_explicit(&k->seq, memory_order_relaxed);
	atomic_store_explicit(&k->seq, seq + 1, memory_order_relaxed);
	store_key(k, 1, current);
	store_key(k, 0, fresh);
	atomic_store_explicit(&k->seq, seq + 2, memory_order_release);
	pthread_mutex_unlock(&k->rotating);
	OPENSSL_cleanse(fresh, sizeof fresh);
	OPENSSL_cleanse(current, sizeof current);
	return APEX_OK;
}

/* The MAC key and digest of a ticket: HMAC-SHA256 with key. */
static int set_mac(EVP_MAC_CTX *hctx, ticket_key_t *key)
{
	OSSL_PARAM params[3];

	params[0] =
		OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key->hmac, sizeof key->hmac);
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0);
	params[2] = OSSL_PARAM_construct_end();
	return EVP_MAC_CTX_set_params(hctx, params) == 1 ? 0 : -1;
}

/* A new ticket: its key's name, a random IV, the cipher and MAC of key. */
static int new_ticket(ticket_key_t *key, unsigned char key_name[16], unsigned char *iv,
		      EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx)
{
	memcpy(key_name, key->name, sizeof key->name);
	if (RAND_bytes(iv, 16) != 1 ||
	    EVP_EncryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, key->aes, iv) != 1 ||
	    set_mac(hctx, key) != 0)
		return -1;
	return 1;
}

/* A ticket presented: 1 with the current key, 2 with the previous one (the
 * session resumes and gets a new ticket), 0 with none (a full handshake). */
static int old_ticket(ticket_key_t keys[2], const unsigned char key_name[16],
		      const unsigned char *iv, EVP_CIPHER_CTX *cctx, EVP_MAC_CTX *hctx)
{
	for (int which = 0; which < 2; which++) {
		if (memcmp(key_name, keys[which].name, sizeof keys[which].name) != 0)
			continue;
		if (EVP_DecryptInit_ex(cctx, EVP_aes_256_cbc(), NULL, keys[which].aes, iv) != 1 ||
		    set_mac(hctx, &keys[which]) != 0)
			return -1;
		return which == 0 ? 1 : 2;
	}
	return 0;
}

/* OpenSSL's ticket callback (SSL_CTX_set_tlsext_ticket_key_evp_cb): the
 * keys copied out of the ring, then wiped from the stack. */
static int ticket_cb(SSL *ssl, unsigned char key_name[16], unsigned char *iv, EVP_CIPHER_CTX *cctx,
		     EVP_MAC_CTX *hctx, int enc)
{
	apex_tls_ticket_keys_t *k = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ex_index);
	ticket_key_t keys[2];
	int rc;

	if (k == NULL)
		return -1;
	snapshot(k, keys);
	if (enc)
		rc = new_ticket(&keys[0], key_name, iv, cctx, hctx);
	else
		rc = old_ticket(keys, key_name, iv, cctx, hctx);
	OPENSSL_cleanse(keys, sizeof keys);
	return rc;
}

static void free_cb(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
	apex_tls_ticket_keys_unref(ptr);
}

static void make_index(void)
{
	ex_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_cb);
}

int apex_tls_ticket_keys_attach(SSL_CTX *ctx, apex_tls_ticket_keys_t *k, char *err, size_t err_size)
{
	pthread_once(&index_once, make_index);
	ERR_clear_error();
	if (ex_index < 0)
		return apex_tls_fail(err, err_size, APEX_ENOMEM, "session ticket keys");
	if (SSL_CTX_get_ex_data(ctx, ex_index) != NULL)
		return apex_fail(err, err_size, APEX_EINVAL,
				 "session ticket keys: the context has keys already");
	if (SSL_CTX_set_ex_data(ctx, ex_index, k) != 1)
		return apex_tls_fail(err, err_size, APEX_ENOMEM, "session ticket keys");
	apex_tls_ticket_keys_ref(k);
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, ticket_cb);
	return APEX_OK;
}
