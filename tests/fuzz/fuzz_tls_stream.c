/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: what apex parses after TLS, DNS over TLS (RFC 7858)
 * as a worker's TCP connection (src/apexd/serve/tcp.c) runs it.
 *
 * Once, at start: an EC P-256 key and a self-signed certificate for
 * dot.fuzz.example made in memory with libcrypto (no file, no openssl
 * command); apexd's server context from them (lib/tls/server_context.h,
 * with session tickets), a client context that trusts that certificate
 * alone, and a worker answering from root. and example. (NSEC-signed)
 * with server cookies, an NSID and a 4096-byte payload.
 *
 * Each input runs a handshake between a client session (lib/tls/session.h)
 * and the server's (src/apexd/serve/tcp_tls.c, the worker's own), both
 * over memory BIOs, then one of two modes, by the low bit of byte 0:
 *
 * stream (bit 0 clear): the input from byte 5 on is the plaintext a
 *   client sends, DNS messages each after a two-byte length.  The client
 *   writes it in chunks whose sizes cycle through four taken from bytes
 *   1-4 (1 to 192 bytes, or 1 to 64 KiB: several messages in one record,
 *   a message across records), and its ciphertext reaches the server in
 *   pieces of a size chosen by bits 1-3 of byte 0 (1 byte to 16 KiB, as
 *   socket reads).  After each piece the server does what conn_process()
 *   and conn_tls_fill() do: the plaintext read out into a 2 + 65535-byte
 *   input until nothing is left or the input is full, split by
 *   apex_stream_next() (lib/dns/stream.h), each whole message answered by
 *   apex_worker_answer() over TLS, the answers gathered, encrypted and
 *   sent back, and read by the client.  Bit 4 of byte 0: the client
 *   ends with close_notify.
 * raw (bit 0 set): the bytes from byte 2 on are fed to a server session
 *   as ciphertext, garbage instead of TLS, in pieces sized by byte 1;
 *   before the handshake, or after a real one when bit 1 of byte 0 is set.
 *
 * Oracle (a violation aborts):
 * - stream: each message framed is the one written, at the same place
 *   in the stream (an independent reading of the lengths), none is
 *   missed; a length of 0 closes the stream exactly there; what is left
 *   unframed is the rest of what was written, byte for byte; the server
 *   session never fails; every answer passes fuzz_common.h's response
 *   oracle and the client reads back exactly the answers sent;
 * - raw: no plaintext ever comes out of garbage; a session that failed
 *   stays failed and takes no more input;
 * - both: the memory OpenSSL holds for the server's connection stays
 *   under SERVER_MEMORY_MAX (counted through CRYPTO_set_mem_functions(),
 *   by whose call allocated it), and none of the server's or the
 *   client's stays allocated once the sessions are freed (beyond
 *   OpenSSL's own caches, filled on first use: an input that leaves
 *   more is run again, and must not leave more a second time); ASan's
 *   leak check besides.
 */
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "fuzz_common.h"
#include "dns/stream.h"
#include "serve/tcp_tls.h"
#include "serve/worker.h"
#include "tls/client_context.h"
#include "tls/server_context.h"
#include "tls/session.h"
#include "tls/ticket_keys.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* As src/apexd/serve/tcp.c: one whole message fits the input; answers
 * are gathered up to TS_FLUSH_AT bytes, with room for one more. */
#define TS_IN_CAPACITY (2 + APEX_MAX_MESSAGE)
#define TS_FLUSH_AT 16384
#define TS_OUT_CAPACITY (TS_FLUSH_AT + 2 + APEX_MAX_MESSAGE)
#define TS_NAME "dot.fuzz.example"
#define TS_HEADER 5 /* stream mode: flags and four chunk sizes */
/* The most OpenSSL may hold for one server connection.  Measured on the
 * seeds: about 72 KiB through a handshake, 110 KiB with a 16 KiB record
 * fed whole.  The session (about 15 KiB), its record buffers (about 34
 * KiB), a handshake's buffers, the ciphertext fed and not read (at most
 * APEX_TLS_INPUT_MAX, in a memory BIO that grows by a third) and the
 * encrypted answers of one output (at most TS_OUT_CAPACITY and the
 * records' overhead) stay below it. */
#define SERVER_MEMORY_MAX (256 * 1024)

/* ---------------------------------------------------------------- OpenSSL's memory, counted */

enum { TS_OWNER_NONE, TS_OWNER_SERVER, TS_OWNER_CLIENT, TS_OWNERS };

typedef union ts_block {
	max_align_t align;
	struct {
		size_t size;
		int owner;
	} h;
} ts_block_t;

static bool ts_counting;          /* our functions are OpenSSL's */
static int ts_owner;              /* whose calls into OpenSSL run now */
static size_t ts_live[TS_OWNERS]; /* bytes allocated and not freed, by owner */
static size_t ts_server_start;    /* the server's at the start of this input */
static size_t ts_server_peak;     /* the server's most, this input */

static void ts_count(int owner, size_t add, size_t sub)
{
	ts_live[owner] += add;
	ts_live[owner] -= sub;
	if (owner == TS_OWNER_SERVER && ts_live[owner] > ts_server_peak)
		ts_server_peak = ts_live[owner];
}

static void *ts_malloc(size_t n, const char *file, int line)
{
	ts_block_t *b = malloc(sizeof(*b) + n);

	(void)file;
	(void)line;
	if (b == NULL)
		return NULL;
	b->h.size = n;
	b->h.owner = ts_owner;
	ts_count(ts_owner, n, 0);
	return b + 1;
}

static void ts_free(void *p, const char *file, int line)
{
	ts_block_t *b = p != NULL ? (ts_block_t *)p - 1 : NULL;

	(void)file;
	(void)line;
	if (b == NULL)
		return;
	ts_count(b->h.owner, 0, b->h.size);
	free(b);
}

/* A block keeps its owner when it grows. */
static void *ts_realloc(void *p, size_t n, const char *file, int line)
{
	ts_block_t *b, *grown;
	size_t old;

	if (p == NULL)
		return ts_malloc(n, file, line);
	if (n == 0) {
		ts_free(p, file, line);
		return NULL;
	}
	b = (ts_block_t *)p - 1;
	old = b->h.size;
	grown = realloc(b, sizeof(*b) + n);
	if (grown == NULL)
		return NULL;
	grown->h.size = n;
	ts_count(grown->h.owner, n, old);
	return grown + 1;
}

/* ---------------------------------------------------------------- setup, once */

static apex_zonetable_t ts_table;
static apex_answer_config_t ts_config;
static apex_worker_t *ts_worker;
static SSL_CTX *ts_server_ctx, *ts_client_ctx;
static uint8_t *ts_in, *ts_out, *ts_answer;   /* the connection's buffers, exact sizes */
static uint8_t *ts_cipher_in, *ts_cipher_out; /* a read's and a write's ciphertext, the same */
static uint8_t *ts_plain;                     /* what the client reads, APEX_MAX_MESSAGE */
static const apex_rrl_config_t ts_rrl = {
	.rate = 1000000000, /* on, at a rate no input reaches */
	.slip = 2,
	.ipv4_prefix = 24,
	.ipv6_prefix = 56,
	.table_size = 1024,
};

static void ts_need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_tls_stream setup: %s\n", what);
		ERR_print_errors_fp(stderr);
		abort();
	}
}

/* A self-signed certificate for TS_NAME with an EC P-256 key. */
static void ts_make_certificate(X509 **cert_out, EVP_PKEY **key_out)
{
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	X509 *cert = X509_new();
	X509_NAME *name = X509_NAME_new();
	X509V3_CTX v3;

	ts_need(key != NULL && cert != NULL && name != NULL, "key and certificate");
	ts_need(X509_set_version(cert, X509_VERSION_3) == 1 &&
			ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) == 1 &&
			X509_gmtime_adj(X509_getm_notBefore(cert), -86400) != NULL &&
			X509_gmtime_adj(X509_getm_notAfter(cert), 10L * 365 * 86400) != NULL,
		"certificate fields");
	ts_need(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)TS_NAME,
					   -1, -1, 0) == 1 &&
			X509_set_subject_name(cert, name) == 1 &&
			X509_set_issuer_name(cert, name) == 1 && X509_set_pubkey(cert, key) == 1,
		"certificate names");
	X509V3_set_ctx(&v3, cert, cert, NULL, NULL, 0);
	X509_EXTENSION *san = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:" TS_NAME);
	ts_need(san != NULL && X509_add_ext(cert, san, -1) == 1, "subjectAltName");
	X509_EXTENSION_free(san);
	ts_need(X509_sign(cert, key, EVP_sha256()) > 0, "self-signature");
	X509_NAME_free(name);
	*cert_out = cert;
	*key_out = key;
}

/* apexd's server context (with session tickets), and a client context
 * whose only trust is the certificate. */
static void ts_make_contexts(void)
{
	apex_tls_server_options_t so = { 0 };
	apex_tls_client_options_t co = { 0 };
	apex_tls_ticket_keys_t *tickets = NULL;
	X509_STORE *store = X509_STORE_new();
	char err[512];

	ts_make_certificate(&so.cert, &so.key);
	ts_need(apex_tls_ticket_keys_new(&tickets, err, sizeof(err)) == APEX_OK, err);
	so.tickets = tickets;
	ts_need(apex_tls_server_context_new(&so, &ts_server_ctx, err, sizeof(err)) == APEX_OK, err);
	apex_tls_ticket_keys_unref(tickets); /* the context holds it */
	ts_need(apex_tls_client_context_new(&co, &ts_client_ctx, err, sizeof(err)) == APEX_OK, err);
	/* not the system's CAs: the certificate made here, and nothing read from disk */
	ts_need(store != NULL && X509_STORE_add_cert(store, so.cert) == 1, "trust store");
	SSL_CTX_set_cert_store(ts_client_ctx, store);
	X509_free(so.cert);
	EVP_PKEY_free(so.key);
}

static void ts_make_worker(void)
{
	static const uint8_t nsid[] = "ns1.fuzz.apex.example";
	static const uint8_t cookie_secret[16] = "fuzz-cookie-key";

	ts_need(apex_zonetable_init(&ts_table) == APEX_OK, "zonetable");
	fuzz_load(&ts_table, "root.zone", ".");
	fuzz_load(&ts_table, "example.nsec.zone", "example.");
	apex_answer_config_init(&ts_config);
	ts_config.edns_payload = 4096;
	ts_config.nsid = nsid;
	ts_config.nsid_size = sizeof(nsid) - 1;
	ts_config.cookie_secret = cookie_secret;
	ts_worker = aligned_alloc(64, sizeof(apex_worker_t));
	ts_need(ts_worker != NULL && apex_worker_init(ts_worker, 0, &ts_table, &ts_config, &ts_rrl,
						      1) == APEX_OK,
		"worker");
}

/* ---------------------------------------------------------------- one connection */

typedef struct ts_conn {
	apex_tcp_tls_t tls;         /* the server's side, as a worker's connection holds it */
	apex_tls_session_t *client; /* the client's, or NULL (raw mode before a handshake) */
	bool client_reads;          /* the server's output goes to the client (else dropped) */
	const uint8_t *sent;        /* stream: the plaintext the client writes */
	size_t written;             /* how much of it the client has written */
	size_t base;                /* the stream offset of ts_in[0] */
	size_t in_used, out_used;
	size_t framed;    /* messages framed by the server */
	bool closed;      /* the server closed: a length of 0 at stream offset closed_at */
	size_t closed_at; /* (a failure of the server's session aborts at once) */
	uint64_t sent_hash, read_hash; /* the answers encrypted, the plaintext the client read */
	size_t sent_size, read_size;
} ts_conn_t;

static __attribute__((noreturn, format(printf, 1, 2))) void ts_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "apex fuzz oracle: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	abort();
}

static uint64_t ts_hash(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL; /* FNV-1a */
	return h;
}

/* The client reads all the plaintext its session holds. */
static void ts_client_read(ts_conn_t *c)
{
	char err[256];
	size_t got;

	ts_owner = TS_OWNER_CLIENT;
	do {
		if (apex_tls_session_read(c->client, ts_plain, APEX_MAX_MESSAGE, &got, err,
					  sizeof(err)) < 0)
			ts_fail("the client failed: %s", err);
		c->read_hash = ts_hash(c->read_hash, ts_plain, got);
		c->read_size += got;
	} while (got == APEX_MAX_MESSAGE);
	ts_owner = TS_OWNER_NONE;
}

/* The server's output sent, as tcp.c writes it: APEX_TCP_TLS_OUT at a
 * time, read by the client at once (or dropped when nobody reads it). */
static void ts_to_client(ts_conn_t *c)
{
	char err[256];
	size_t n;

	for (;;) {
		ts_owner = TS_OWNER_SERVER;
		n = apex_tcp_tls_output(&c->tls, ts_cipher_out, APEX_TCP_TLS_OUT);
		ts_owner = TS_OWNER_CLIENT;
		if (n == 0 || !c->client_reads)
			break;
		if (apex_tls_session_feed(c->client, ts_cipher_out, n, err, sizeof(err)) != APEX_OK)
			ts_fail("the client cannot take the server's output: %s", err);
		ts_client_read(c);
	}
	ts_owner = TS_OWNER_NONE;
}

/* conn_flush(): the answers gathered encrypted, and sent with whatever
 * else the session has to send. */
static void ts_flush(ts_conn_t *c)
{
	if (c->out_used > 0) {
		c->sent_hash = ts_hash(c->sent_hash, ts_out, c->out_used);
		c->sent_size += c->out_used;
		ts_owner = TS_OWNER_SERVER;
		if (apex_tcp_tls_encrypt(&c->tls, ts_out, c->out_used) != APEX_OK)
			ts_fail("the server cannot encrypt %zu bytes of answers", c->out_used);
		ts_owner = TS_OWNER_NONE;
		c->out_used = 0;
	}
	ts_to_client(c);
}

/* conn_tls_fill(): the messages before *pos moved out, then the plaintext
 * read out until none is left or the input is full.  A well-behaved
 * client's stream never makes the server's session fail. */
static void ts_fill(ts_conn_t *c, size_t *pos)
{
	size_t got;
	int rc;

	if (*pos > 0) {
		memmove(ts_in, ts_in + *pos, c->in_used - *pos);
		c->in_used -= *pos;
		c->base += *pos;
		*pos = 0;
	}
	ts_owner = TS_OWNER_SERVER;
	do {
		rc = apex_tcp_tls_plaintext(&c->tls, &ts_worker->stats, ts_in + c->in_used,
					    TS_IN_CAPACITY - c->in_used, &got);
		c->in_used += got;
	} while (rc == APEX_OK && got > 0 && c->in_used < TS_IN_CAPACITY);
	ts_owner = TS_OWNER_NONE;
	if (rc != APEX_OK)
		ts_fail("the server's session failed on a client's stream (%d)", rc);
	if (c->base + c->in_used > c->written ||
	    (c->in_used > 0 && memcmp(ts_in, c->sent + c->base, c->in_used) != 0))
		ts_fail("the plaintext read at %zu is not what the client wrote", c->base);
}

/* The message framed at pos is the next one written, read independently. */
static void ts_check_framed(ts_conn_t *c, size_t pos, const apex_stream_msg_t *m)
{
	size_t at = c->base + pos;
	size_t len = at + 2 <= c->written ? apex_read_u16(c->sent + at) : 0;

	if (len == 0 || m->size != len || m->data != ts_in + pos + 2 || m->next != pos + 2 + len ||
	    at + 2 + len > c->written || memcmp(m->data, c->sent + at + 2, len) != 0)
		ts_fail("the message framed at stream offset %zu (%zu bytes) is not the one "
			"written",
			at, m->size);
	c->framed++;
}

/* The message answered as a worker answers it over TLS, into an
 * exact-size buffer (ASan sees a write past it), checked, gathered. */
static void ts_answer_one(ts_conn_t *c, const apex_stream_msg_t *m)
{
	struct sockaddr_storage peer = { .ss_family = AF_INET };
	apex_answer_info_t info;
	size_t size;

	((struct sockaddr_in *)&peer)->sin_addr.s_addr = htonl(0xc0000201u);
	size = apex_worker_answer(ts_worker, APEX_TRANSPORT_TLS, &peer, m->data, m->size, ts_answer,
				  APEX_MAX_MESSAGE, &info);
	fuzz_check_response(m->data, m->size, &ts_config, APEX_TRANSPORT_TLS, ts_answer, size,
			    APEX_MAX_MESSAGE, &info);
	if (size > 0) {
		apex_write_u16(ts_out + c->out_used, (uint16_t)size);
		memcpy(ts_out + c->out_used + 2, ts_answer, size);
		c->out_used += 2 + size;
	}
}

/* conn_close() of a stream out of step: close_notify, answers gathered
 * and not yet sent dropped (the connection is gone). */
static void ts_close(ts_conn_t *c, size_t pos)
{
	c->closed = true;
	c->closed_at = c->base + pos;
	c->out_used = 0;
	ts_owner = TS_OWNER_SERVER;
	apex_tcp_tls_close(&c->tls);
	ts_owner = TS_OWNER_NONE;
	ts_to_client(c);
}

/* conn_process(): every whole message in the input answered, in order
 * (a write completes at once here: the loop goes on where tcp.c waits
 * for on_written() to call it again). */
static void ts_process(ts_conn_t *c)
{
	apex_stream_msg_t m;
	apex_stream_status_t framed;
	size_t pos = 0;

	apex_worker_batch(ts_worker, false);
	while (!c->closed) {
		if (c->in_used - pos < 2 + APEX_MAX_MESSAGE)
			ts_fill(c, &pos);
		framed = apex_stream_next(ts_in, c->in_used, pos, &m);
		if (framed == APEX_STREAM_MALFORMED) {
			ts_close(c, pos);
			return;
		}
		if (framed == APEX_STREAM_MORE)
			break;
		if (TS_OUT_CAPACITY - c->out_used < 2 + APEX_MAX_MESSAGE)
			ts_flush(c);
		ts_check_framed(c, pos, &m);
		ts_answer_one(c, &m);
		pos = m.next;
		if (c->out_used >= TS_FLUSH_AT)
			ts_flush(c);
	}
	if (pos > 0) {
		memmove(ts_in, ts_in + pos, c->in_used - pos);
		c->in_used -= pos;
		c->base += pos;
	}
	ts_flush(c);
}

/* The client's output, as socket reads of up to piece bytes, each fed to
 * the server (on_read()) and processed. */
static void ts_deliver(ts_conn_t *c, size_t piece)
{
	size_t n;

	for (;;) {
		if (c->closed)
			return;
		ts_owner = TS_OWNER_CLIENT;
		n = apex_tls_session_take_output(c->client, ts_cipher_in, piece);
		ts_owner = TS_OWNER_SERVER;
		if (n == 0)
			break;
		if (apex_tcp_tls_received(&c->tls, ts_cipher_in, n) != APEX_OK)
			ts_fail("the server refused %zu bytes of a client's stream", n);
		ts_owner = TS_OWNER_NONE;
		ts_process(c);
	}
	ts_owner = TS_OWNER_NONE;
}

/* The server's session and the client's, and a handshake between them. */
static void ts_connect(ts_conn_t *c, bool client)
{
	char err[256];
	int rc;

	ts_owner = TS_OWNER_SERVER;
	rc = apex_tcp_tls_start(&c->tls, ts_server_ctx, APEX_LISTEN_TLS);
	ts_owner = TS_OWNER_NONE;
	ts_need(rc == APEX_OK, "server session");
	if (!client)
		return;
	ts_owner = TS_OWNER_CLIENT;
	rc = apex_tls_session_new_client(ts_client_ctx, TS_NAME, &c->client, err, sizeof(err));
	ts_owner = TS_OWNER_NONE;
	ts_need(rc == APEX_OK, err);
	c->client_reads = true;
	ts_client_read(c); /* the ClientHello */
	for (int round = 0; round < 8; round++) {
		if (apex_tls_session_state(c->client) == APEX_TLS_OPEN &&
		    !apex_tcp_tls_handshaking(&c->tls))
			return;
		ts_deliver(c, APEX_TCP_TLS_IN);
		if (c->in_used != 0)
			ts_fail("plaintext before the client wrote any");
	}
	ts_fail("the handshake did not finish");
}

static void ts_disconnect(ts_conn_t *c)
{
	ts_owner = TS_OWNER_SERVER;
	apex_tcp_tls_free(&c->tls);
	ts_owner = TS_OWNER_CLIENT;
	apex_tls_session_free(c->client);
	c->client = NULL;
	ts_owner = TS_OWNER_NONE;
}

/* ---------------------------------------------------------------- the two modes */

/* Sizes of the server's socket reads, by bits 1-3 of byte 0. */
static const size_t ts_pieces[8] = { APEX_TCP_TLS_IN, 1, 3, 64, 517, 1500, 5000, 9000 };

/* A chunk size from one byte: 1 to 192 bytes, or 1 to 64 KiB. */
static size_t ts_chunk(uint8_t b)
{
	return b < 192 ? (size_t)b + 1 : (size_t)(b - 191) * 1024;
}

/* After the last message: every message written was framed, in order, up
 * to a length of 0 (which closed the connection there) or to the rest,
 * which waits in the input as it was written; the client read back
 * exactly the answers the server sent. */
static void ts_check_end(const ts_conn_t *c)
{
	size_t off = 0, count = 0, len = 1;

	while (c->written - off >= 2) {
		len = apex_read_u16(c->sent + off);
		if (len == 0 || c->written - off - 2 < len)
			break;
		off += 2 + len;
		count++;
	}
	if (c->framed != count)
		ts_fail("%zu messages framed of the %zu written", c->framed, count);
	if (len == 0 && c->written - off >= 2) {
		if (!c->closed || c->closed_at != off)
			ts_fail("a length of 0 at %zu did not close the stream there", off);
	} else if (c->closed) {
		ts_fail("the stream closed at %zu, with no length of 0", c->closed_at);
	} else if (c->base != off || c->in_used != c->written - off ||
		   (c->in_used > 0 && memcmp(ts_in, c->sent + off, c->in_used) != 0)) {
		ts_fail("the %zu bytes left after the last whole message are not the %zu written",
			c->in_used, c->written - off);
	}
	if (c->read_size != c->sent_size || c->read_hash != c->sent_hash)
		ts_fail("the client read %zu bytes of answers, not the %zu sent", c->read_size,
			c->sent_size);
}

static void ts_stream(const uint8_t *data, size_t size)
{
	ts_conn_t c = { .sent = data + TS_HEADER };
	size_t total = size - TS_HEADER, piece = ts_pieces[(data[0] >> 1) & 7];
	char err[256];

	ts_connect(&c, true);
	for (unsigned i = 0; c.written < total && !c.closed; i++) {
		size_t n = ts_chunk(data[1 + i % 4]);

		if (n > total - c.written)
			n = total - c.written;
		ts_owner = TS_OWNER_CLIENT;
		if (apex_tls_session_write(c.client, c.sent + c.written, n, err, sizeof(err)) !=
		    APEX_OK)
			ts_fail("the client cannot write: %s", err);
		ts_owner = TS_OWNER_NONE;
		c.written += n;
		ts_deliver(&c, piece);
	}
	if ((data[0] & 0x10) && !c.closed) {
		ts_owner = TS_OWNER_CLIENT;
		if (apex_tls_session_close(c.client, err, sizeof(err)) != APEX_OK)
			ts_fail("the client cannot close: %s", err);
		ts_owner = TS_OWNER_NONE;
		ts_deliver(&c, piece);
		if (!c.closed && !apex_tcp_tls_ended(&c.tls))
			ts_fail("the client's close_notify was not seen");
	}
	ts_check_end(&c);
	ts_disconnect(&c);
}

/* Garbage fed to a server session, in reads of up to piece bytes: it
 * fails, or waits for more; it never yields plaintext. */
static void ts_raw(const uint8_t *data, size_t size)
{
	ts_conn_t c = { .sent = data };
	uint8_t b = size > 1 ? data[1] : 0;
	size_t piece = b == 0 ? APEX_TCP_TLS_IN : b < 128 ? b : (size_t)(b - 127) * 128;
	size_t got;
	int rc;

	ts_connect(&c, (data[0] & 2) != 0);
	c.client_reads = false; /* the alert would fail the client: not a finding */
	for (size_t off = 2; off < size;) {
		size_t n = size - off < piece ? size - off : piece;

		memcpy(ts_cipher_in, data + off, n);
		off += n;
		ts_owner = TS_OWNER_SERVER;
		if (apex_tcp_tls_received(&c.tls, ts_cipher_in, n) != APEX_OK)
			break; /* tcp.c closes */
		do {
			rc = apex_tcp_tls_plaintext(&c.tls, &ts_worker->stats, ts_in,
						    TS_IN_CAPACITY, &got);
			if (got > 0)
				ts_fail("%zu bytes of plaintext out of garbage", got);
		} while (rc == APEX_OK && got > 0);
		ts_owner = TS_OWNER_NONE;
		ts_to_client(&c); /* the handshake's answers, or the alert */
		if (rc != APEX_OK) {
			ts_owner = TS_OWNER_SERVER;
			if (!apex_tcp_tls_ended(&c.tls) ||
			    apex_tcp_tls_received(&c.tls, ts_cipher_in, 1) == APEX_OK)
				ts_fail("a session that failed is not failed for good");
			ts_owner = TS_OWNER_NONE;
			break;
		}
	}
	ts_owner = TS_OWNER_NONE;
	ts_disconnect(&c);
}

/* ---------------------------------------------------------------- entry points */

static void ts_one(const uint8_t *data, size_t size)
{
	ts_server_start = ts_server_peak = ts_live[TS_OWNER_SERVER];
	if (size > 0 && (data[0] & 1))
		ts_raw(data, size);
	else if (size >= TS_HEADER)
		ts_stream(data, size);
	ERR_clear_error();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* a stream of two queries, and garbage: whatever OpenSSL sets up on
	 * first use (its error state, algorithm caches) before it is counted */
	static const uint8_t warm_stream[] = {
		0x10, 191, 191, 191, 191, /* chunks of 192 bytes, then close_notify */
		0,    12,  0,   1,   0,   0, 0, 0, 0, 0, 0, 0, 0, 0, /* a header alone */
		0,    17,  0,   2,   1,   0, 0, 1, 0, 0, 0, 0, 0, 0, /* ". SOA", RD */
		0,    0,   6,   0,   1,
	};
	static const uint8_t warm_before[] = { 1, 0, 0x16, 3, 1, 0, 1, 0xff };
	static const uint8_t warm_after[] = { 3, 0, 0x17, 3, 3, 0, 1, 0xff };

	(void)argc;
	(void)argv;
	/* before OpenSSL allocates anything, or not at all (then unchecked) */
	ts_counting = CRYPTO_set_mem_functions(ts_malloc, ts_realloc, ts_free) == 1;
	apex_log_set_level(APEX_LOG_ERROR);
	ts_in = fuzz_buffer(TS_IN_CAPACITY);
	ts_out = fuzz_buffer(TS_OUT_CAPACITY);
	ts_answer = fuzz_buffer(APEX_MAX_MESSAGE);
	ts_plain = fuzz_buffer(APEX_MAX_MESSAGE);
	ts_cipher_in = fuzz_buffer(APEX_TCP_TLS_IN);
	ts_cipher_out = fuzz_buffer(APEX_TCP_TLS_OUT);
	ts_make_worker();
	ts_make_contexts();
	ts_one(warm_stream, sizeof(warm_stream));
	ts_one(warm_before, sizeof(warm_before));
	ts_one(warm_after, sizeof(warm_after));
	return 0;
}

/* Whether the input made OpenSSL hold more memory for the server or
 * the client once their sessions were freed. */
static bool ts_holds_more(const size_t before[TS_OWNERS])
{
	return ts_live[TS_OWNER_SERVER] > before[TS_OWNER_SERVER] ||
	       ts_live[TS_OWNER_CLIENT] > before[TS_OWNER_CLIENT];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t before[TS_OWNERS], after[TS_OWNERS];

	memcpy(before, ts_live, sizeof(before));
	ts_one(data, size);
	if (!ts_counting)
		return 0;
	if (ts_server_peak - ts_server_start > SERVER_MEMORY_MAX)
		ts_fail("the server's connection held %zu bytes of OpenSSL's memory (at most %d)",
			ts_server_peak - ts_server_start, SERVER_MEMORY_MAX);
	/* OpenSSL fills caches of its own on the first use of an algorithm
	 * (a cipher suite the warm-up did not use): what the same input
	 * holds once more when run again is leaked. */
	if (ts_holds_more(before)) {
		memcpy(after, ts_live, sizeof(after));
		ts_one(data, size);
		if (ts_holds_more(after))
			ts_fail("%zu bytes of the server's and %zu of the client's not freed",
				ts_live[TS_OWNER_SERVER] - after[TS_OWNER_SERVER],
				ts_live[TS_OWNER_CLIENT] - after[TS_OWNER_CLIENT]);
	}
	return 0;
}
