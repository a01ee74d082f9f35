/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TLS (lib/tls, and lib/xfr/tcp_stream.c over TLS): handshakes between
 * sessions over memory BIOs and OpenSSL clients, ALPN, data, close_notify,
 * garbage, session tickets and their rotation, certificate verification
 * both ways, and the blocking stream over a socketpair with its time-outs.
 * The certificates are made at test time with the openssl command (Debian
 * package openssl) in a temporary directory.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "tls/client_context.h"
#include "tls/context_slot.h"
#include "tls/peer.h"
#include "tls/reason.h"
#include "tls/server_context.h"
#include "tls/session.h"
#include "tls/ticket_keys.h"
#include "util/clock.h"
#include "util/error.h"
#include "xfr/tcp_stream.h"

/* ---------------------------------------------------------------- memory */

/* OpenSSL's allocations counted (CRYPTO_set_mem_functions, before any
 * other OpenSSL call): the bytes live now, to bound a session's memory. */
static atomic_size_t live_bytes;
#define HEADER 16 /* the size in front of each block, alignment kept */

static void *count_malloc(size_t n, const char *file, int line)
{
	size_t *p = malloc(n + HEADER);

	if (p == NULL)
		return NULL;
	p[0] = n;
	atomic_fetch_add(&live_bytes, n);
	return (char *)p + HEADER;
}

static void count_free(void *ptr, const char *file, int line)
{
	size_t *p;

	if (ptr == NULL)
		return;
	p = (size_t *)((char *)ptr - HEADER);
	atomic_fetch_sub(&live_bytes, p[0]);
	free(p);
}

static void *count_realloc(void *ptr, size_t n, const char *file, int line)
{
	size_t *p, old;

	if (ptr == NULL)
		return count_malloc(n, file, line);
	if (n == 0) {
		count_free(ptr, file, line);
		return NULL;
	}
	old = ((size_t *)((char *)ptr - HEADER))[0];
	p = realloc((char *)ptr - HEADER, n + HEADER);
	if (p == NULL)
		return NULL;
	p[0] = n;
	atomic_fetch_add(&live_bytes, n);
	atomic_fetch_sub(&live_bytes, old);
	return (char *)p + HEADER;
}

/* ---------------------------------------------------------------- certificates */

static char dir[256];

/* dir/name, in one of a few rotating buffers. */
static const char *file(const char *name)
{
	static char bufs[8][512];
	static unsigned next;
	char *buf = bufs[next++ % 8];

	snprintf(buf, sizeof bufs[0], "%s/%s", dir, name);
	return buf;
}

static const char cert_config[] = "[req]\n"
				  "distinguished_name = dn\n"
				  "[dn]\n"
				  "[ca]\n"
				  "basicConstraints = critical,CA:TRUE\n"
				  "keyUsage = critical,keyCertSign,cRLSign\n"
				  "subjectKeyIdentifier = hash\n"
				  "[primary]\n"
				  "basicConstraints = CA:FALSE\n"
				  "extendedKeyUsage = serverAuth,clientAuth\n"
				  "subjectAltName = DNS:primary.example\n"
				  "[secondary]\n"
				  "basicConstraints = CA:FALSE\n"
				  "extendedKeyUsage = serverAuth,clientAuth\n"
				  "subjectAltName = DNS:secondary.example\n"
				  "[wrong]\n"
				  "basicConstraints = CA:FALSE\n"
				  "extendedKeyUsage = serverAuth,clientAuth\n"
				  "subjectAltName = DNS:wrong.example\n"
				  "[cn_only]\n"
				  "basicConstraints = CA:FALSE\n"
				  "extendedKeyUsage = serverAuth,clientAuth\n";

/* Two CAs; from the first, primary.example (the server), secondary.example
 * (a client), wrong.example and a certificate whose name is its CN only;
 * from the second, primary.example and secondary.example again.  The keys
 * of server and client also encrypted with the password "sesame". */
static const char cert_script[] =
	"set -e\n"
	"key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1.key; }\n"
	"ca() { key $1; openssl req -new -x509 -config tls.cnf -extensions ca -key $1.key "
	"-subj \"/CN=$2\" -days 2 -out $1.pem; }\n"
	"leaf() { key $1; openssl req -new -config tls.cnf -key $1.key -subj \"/CN=$3\" "
	"-out $1.csr; openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -set_serial $4 "
	"-days 2 -extfile tls.cnf -extensions $5 -out $1.pem; }\n"
	"ca ca 'apex test CA'\n"
	"ca ca2 'apex other CA'\n"
	"leaf server ca primary.example 1 primary\n"
	"leaf client ca secondary.example 2 secondary\n"
	"leaf wrong ca wrong.example 3 wrong\n"
	"leaf cn_only ca cn-only.example 4 cn_only\n"
	"leaf other ca2 primary.example 5 primary\n"
	"leaf other_client ca2 secondary.example 6 secondary\n"
	"openssl pkey -in server.key -aes256 -passout pass:sesame -out server_enc.key\n"
	"openssl pkey -in client.key -aes256 -passout pass:sesame -out client_enc.key\n";

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static int make_certificates(void **state)
{
	char cmd[1024];
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof dir, "%s/apex-tls-XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	write_file(file("tls.cnf"), cert_config);
	write_file(file("make.sh"), cert_script);
	snprintf(cmd, sizeof cmd, "cd '%s' && sh make.sh >make.log 2>&1", dir);
	if (system(cmd) != 0) {
		FILE *log = fopen(file("make.log"), "r");
		char line[256];

		fprintf(stderr, "test_tls: the openssl command (package openssl) failed:\n");
		while (log != NULL && fgets(line, sizeof line, log) != NULL)
			fputs(line, stderr);
		if (log != NULL)
			fclose(log);
		return -1;
	}
	return 0;
}

static int remove_certificates(void **state)
{
	char cmd[512];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- contexts */

static SSL_CTX *server_ctx(const char *cert, const char *client_ca, apex_tls_ticket_keys_t *tickets)
{
	char key[64], err[256];
	apex_tls_server_options_t o = { 0 };
	SSL_CTX *ctx;

	snprintf(key, sizeof key, "%.*s.key", (int)(strlen(cert) - 4), cert);
	o.cert_file = file(cert);
	o.key_file = file(key);
	o.client_ca_file = client_ca != NULL ? file(client_ca) : NULL;
	o.tickets = tickets;
	if (apex_tls_server_context_new(&o, &ctx, err, sizeof err) != APEX_OK)
		fail_msg("server context: %s", err);
	return ctx;
}

/* An apex client context: CA bundle ca (NULL: the system's), and a client
 * certificate when cert is set (its key beside it). */
static SSL_CTX *client_ctx(const char *ca, const char *cert)
{
	char key[64], err[256];
	apex_tls_client_options_t o = { 0 };
	SSL_CTX *ctx;

	o.ca_file = ca != NULL ? file(ca) : NULL;
	if (cert != NULL) {
		snprintf(key, sizeof key, "%.*s.key", (int)(strlen(cert) - 4), cert);
		o.cert_file = file(cert);
		o.key_file = file(key);
	}
	if (apex_tls_client_context_new(&o, &ctx, err, sizeof err) != APEX_OK)
		fail_msg("client context: %s", err);
	return ctx;
}

/* A plain OpenSSL client context trusting ca.pem, offering the ALPN list
 * alpn (wire form; NULL: none), between TLS versions min and max (0: any). */
static SSL_CTX *raw_client_ctx(const char *alpn, size_t alpn_size, int min, int max)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());

	assert_non_null(ctx);
	assert_int_equal(SSL_CTX_load_verify_locations(ctx, file("ca.pem"), NULL), 1);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if (alpn != NULL)
		assert_int_equal(SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)alpn,
							 (unsigned)alpn_size),
				 0);
	if (min != 0) {
		SSL_CTX_set_security_level(ctx, 0); /* old versions offered at all */
		assert_int_equal(SSL_CTX_set_min_proto_version(ctx, min), 1);
	}
	if (max != 0)
		assert_int_equal(SSL_CTX_set_max_proto_version(ctx, max), 1);
	return ctx;
}

#define ALPN_DOT "\003dot"

/* ---------------------------------------------------------------- a connection in memory */

#define CAP 200000

/* A client (plain OpenSSL over memory BIOs, or an apex client session) and
 * an apex server session, with what each has read. */
typedef struct pair {
	SSL *raw; /* the plain client, or NULL */
	BIO *raw_in, *raw_out;
	apex_tls_session_t *client; /* the apex client, or NULL */
	apex_tls_session_t *server;
	uint8_t to_client[CAP], to_server[CAP];
	size_t to_client_len, to_server_len;
	bool client_failed, client_closed, server_failed;
	char client_err[256], server_err[256];
} pair_t;

static pair_t *pair_new(SSL_CTX *server, SSL_CTX *raw_client)
{
	pair_t *p = calloc(1, sizeof *p);
	char err[256];

	assert_non_null(p);
	assert_int_equal(apex_tls_session_new_server(server, &p->server, err, sizeof err), APEX_OK);
	if (raw_client != NULL) {
		p->raw = SSL_new(raw_client);
		p->raw_in = BIO_new(BIO_s_mem());
		p->raw_out = BIO_new(BIO_s_mem());
		assert_non_null(p->raw);
		BIO_set_mem_eof_return(p->raw_in, -1);
		SSL_set_bio(p->raw, p->raw_in, p->raw_out);
		SSL_set_connect_state(p->raw);
		assert_int_equal(SSL_set1_host(p->raw, "primary.example"), 1);
	}
	return p;
}

static pair_t *pair_apex(SSL_CTX *server, SSL_CTX *client, const char *name)
{
	pair_t *p = pair_new(server, NULL);
	char err[256];

	assert_int_equal(apex_tls_session_new_client(client, name, &p->client, err, sizeof err),
			 APEX_OK);
	return p;
}

static void pair_free(pair_t *p)
{
	SSL_free(p->raw);
	apex_tls_session_free(p->client);
	apex_tls_session_free(p->server);
	free(p);
}

static void raw_step(pair_t *p)
{
	size_t n;
	int ret;

	ERR_clear_error();
	if (!SSL_is_init_finished(p->raw)) {
		ret = SSL_do_handshake(p->raw);
		if (ret != 1 && SSL_get_error(p->raw, ret) != SSL_ERROR_WANT_READ) {
			p->client_failed = true;
			apex_tls_fail_ssl(p->raw, ret, NULL, p->client_err, sizeof p->client_err,
					  APEX_EIO, "client");
			return;
		}
		if (ret != 1)
			return;
	}
	while ((ret = SSL_read_ex(p->raw, p->to_client + p->to_client_len, CAP - p->to_client_len,
				  &n)) == 1)
		p->to_client_len += n;
	if (SSL_get_error(p->raw, ret) == SSL_ERROR_ZERO_RETURN) {
		p->client_closed = true;
	} else if (SSL_get_error(p->raw, ret) != SSL_ERROR_WANT_READ) {
		p->client_failed = true;
		apex_tls_fail_ssl(p->raw, ret, NULL, p->client_err, sizeof p->client_err, APEX_EIO,
				  "client");
	}
}

static void client_step(pair_t *p)
{
	size_t got = 0;

	if (p->client_failed || p->client_closed)
		return;
	if (p->raw != NULL) {
		raw_step(p);
		return;
	}
	if (apex_tls_session_read(p->client, p->to_client + p->to_client_len,
				  CAP - p->to_client_len, &got, p->client_err,
				  sizeof p->client_err) < 0)
		p->client_failed = true;
	p->to_client_len += got;
	p->client_closed = apex_tls_session_state(p->client) == APEX_TLS_CLOSED;
}

static void server_step(pair_t *p)
{
	size_t got = 0;

	if (p->server_failed)
		return;
	if (apex_tls_session_read(p->server, p->to_server + p->to_server_len,
				  CAP - p->to_server_len, &got, p->server_err,
				  sizeof p->server_err) < 0)
		p->server_failed = true;
	p->to_server_len += got;
}

/* The client's output fed to the server; whether there was any. */
static bool client_to_server(pair_t *p)
{
	uint8_t buf[20000];
	bool moved = false;
	size_t n;
	char err[256];

	for (;;) {
		if (p->raw != NULL) {
			int r = BIO_read(p->raw_out, buf, sizeof buf);
			n = r > 0 ? (size_t)r : 0;
		} else {
			n = apex_tls_session_take_output(p->client, buf, sizeof buf);
		}
		if (n == 0)
			return moved;
		moved = true;
		if (apex_tls_session_feed(p->server, buf, n, err, sizeof err) < 0)
			return moved; /* a failed server takes nothing more */
		server_step(p);
	}
}

static bool server_to_client(pair_t *p)
{
	uint8_t buf[20000];
	bool moved = false;
	size_t n;
	char err[256];

	while ((n = apex_tls_session_take_output(p->server, buf, sizeof buf)) > 0) {
		moved = true;
		if (p->raw != NULL)
			assert_int_equal(BIO_write(p->raw_in, buf, (int)n), (int)n);
		else if (apex_tls_session_feed(p->client, buf, n, err, sizeof err) < 0)
			continue;
		client_step(p);
	}
	return moved;
}

/* Bytes moved both ways until neither side has anything more to say. */
static void pump(pair_t *p)
{
	for (int round = 0; round < 100; round++) {
		bool moved;

		client_step(p);
		moved = client_to_server(p);
		server_step(p);
		moved |= server_to_client(p);
		if (!moved)
			return;
	}
	fail_msg("the connection did not settle");
}

static bool both_open(pair_t *p)
{
	if (apex_tls_session_state(p->server) != APEX_TLS_OPEN)
		return false;
	if (p->raw != NULL)
		return SSL_is_init_finished(p->raw) && !p->client_failed;
	return apex_tls_session_state(p->client) == APEX_TLS_OPEN;
}

/* ---------------------------------------------------------------- handshakes and ALPN */

static void check_alpn(SSL_CTX *server, const char *alpn, size_t size, bool dot)
{
	SSL_CTX *cctx = raw_client_ctx(alpn, size, 0, 0);
	pair_t *p = pair_new(server, cctx);
	const uint8_t *proto;
	size_t len;

	pump(p);
	assert_true(both_open(p));
	proto = apex_tls_session_alpn(p->server, &len);
	assert_int_equal(apex_tls_alpn_is_dot(apex_tls_session_ssl(p->server)), dot);
	if (dot) {
		assert_int_equal(len, 3);
		assert_memory_equal(proto, "dot", 3);
	} else {
		assert_null(proto);
	}
	assert_int_equal(SSL_version(p->raw), TLS1_3_VERSION);
	assert_false(apex_tls_session_resumed(p->server));
	pair_free(p);
	SSL_CTX_free(cctx);
}

static void test_handshake_alpn(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);

	check_alpn(server, ALPN_DOT, 4, true);
	check_alpn(server, "\002h2" ALPN_DOT, 7, true);
	check_alpn(server, NULL, 0, false); /* DoT without ALPN */
	SSL_CTX_free(server);
}

static void test_handshake_refused(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *h2 = raw_client_ctx("\002h2", 3, 0, 0);
	SSL_CTX *old = raw_client_ctx(ALPN_DOT, 4, TLS1_VERSION, TLS1_1_VERSION);
	pair_t *p = pair_new(server, h2);

	/* Only "h2": the alert no_application_protocol. */
	pump(p);
	assert_int_equal(apex_tls_session_state(p->server), APEX_TLS_FAILED);
	assert_non_null(strstr(p->server_err, "no application protocol"));
	assert_true(p->client_failed);
	assert_non_null(strstr(p->client_err, "no application protocol"));
	pair_free(p);

	/* TLS 1.1 at most: no common version. */
	p = pair_new(server, old);
	pump(p);
	assert_int_equal(apex_tls_session_state(p->server), APEX_TLS_FAILED);
	assert_non_null(strstr(p->server_err, "unsupported protocol"));
	assert_true(p->client_failed);
	pair_free(p);

	SSL_CTX_free(old);
	SSL_CTX_free(h2);
	SSL_CTX_free(server);
}

/* ---------------------------------------------------------------- data */

/* count DNS-like messages with their lengths into buf; their total size. */
static size_t messages(uint8_t *buf, size_t count, size_t base)
{
	size_t off = 0;

	for (size_t i = 0; i < count; i++) {
		size_t len = base + i * 97;

		buf[off] = (uint8_t)(len >> 8);
		buf[off + 1] = (uint8_t)len;
		for (size_t j = 0; j < len; j++)
			buf[off + 2 + j] = (uint8_t)(i * 31 + j);
		off += 2 + len;
	}
	return off;
}

static pair_t *open_pair(SSL_CTX *server, SSL_CTX *cctx)
{
	pair_t *p = pair_new(server, cctx);

	pump(p);
	assert_true(both_open(p));
	return p;
}

/* Everything the client wrote, in one feed, all read out by one read. */
static void check_one_feed(SSL_CTX *server, SSL_CTX *cctx, size_t writes)
{
	static uint8_t msgs[20000], wire[40000], out[40000];
	pair_t *p = open_pair(server, cctx);
	size_t total = messages(msgs, 3, 29), wire_len, got = 0, part = total / writes, n;
	char err[256];

	for (size_t w = 0, off = 0; w < writes; w++, off += part)
		assert_int_equal(
			SSL_write_ex(p->raw, msgs + off, w + 1 < writes ? part : total - off, &n),
			1);
	wire_len = (size_t)BIO_read(p->raw_out, wire, sizeof wire);
	assert_true(wire_len > total);
	assert_int_equal(apex_tls_session_feed(p->server, wire, wire_len, err, sizeof err),
			 APEX_OK);
	assert_int_equal(apex_tls_session_read(p->server, out, sizeof out, &got, err, sizeof err),
			 APEX_OK);
	assert_int_equal(got, total);
	assert_memory_equal(out, msgs, total);
	pair_free(p);
}

static void test_data(void **state)
{
	static uint8_t msgs[70000], out[100];
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	pair_t *p;
	size_t total, got, n, read = 0;
	char err[256];

	check_one_feed(server, cctx, 1); /* three messages in one SSL_write */
	check_one_feed(server, cctx, 3); /* in three records */

	/* Read out in small pieces: each call fills the buffer until the end. */
	p = open_pair(server, cctx);
	total = messages(msgs, 20, 100);
	assert_int_equal(SSL_write_ex(p->raw, msgs, total, &n), 1);
	assert_true(client_to_server(p)); /* reads into to_server as it feeds */
	assert_int_equal(p->to_server_len, total);
	assert_int_equal(SSL_write_ex(p->raw, msgs, total, &n), 1);
	while (BIO_ctrl_pending(p->raw_out) > 0) {
		uint8_t wire[4096];
		int r = BIO_read(p->raw_out, wire, sizeof wire);
		assert_int_equal(apex_tls_session_feed(p->server, wire, (size_t)r, err, sizeof err),
				 APEX_OK);
	}
	do {
		assert_int_equal(
			apex_tls_session_read(p->server, out, sizeof out, &got, err, sizeof err),
			APEX_OK);
		assert_memory_equal(out, msgs + read, got);
		read += got;
	} while (got == sizeof out);
	assert_int_equal(read, total);

	/* The other way: a message of 64 KiB in several records. */
	total = messages(msgs, 1, 65535);
	assert_int_equal(apex_tls_session_write(p->server, msgs, total, err, sizeof err), APEX_OK);
	assert_true(apex_tls_session_output_pending(p->server) > total);
	pump(p);
	assert_int_equal(p->to_client_len, total);
	assert_memory_equal(p->to_client, msgs, total);
	pair_free(p);

	SSL_CTX_free(cctx);
	SSL_CTX_free(server);
}

static void test_close_notify(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	pair_t *p = open_pair(server, cctx);
	uint8_t buf[16];
	size_t got;
	char err[256];

	/* The client closes: the server reads nothing more, sends its own. */
	assert_int_equal(SSL_shutdown(p->raw), 0);
	pump(p);
	assert_int_equal(apex_tls_session_state(p->server), APEX_TLS_CLOSED);
	assert_int_equal(apex_tls_session_read(p->server, buf, sizeof buf, &got, err, sizeof err),
			 APEX_OK);
	assert_int_equal(got, 0);
	assert_int_equal(apex_tls_session_feed(p->server, buf, sizeof buf, err, sizeof err),
			 APEX_OK);
	assert_int_equal(apex_tls_session_close(p->server, err, sizeof err), APEX_OK);
	assert_true(apex_tls_session_output_pending(p->server) > 0);
	pump(p);
	assert_int_equal(SSL_get_shutdown(p->raw) & SSL_RECEIVED_SHUTDOWN, SSL_RECEIVED_SHUTDOWN);
	pair_free(p);

	/* The server closes first: the client reads the end. */
	p = open_pair(server, cctx);
	assert_int_equal(apex_tls_session_close(p->server, err, sizeof err), APEX_OK);
	pump(p);
	assert_true(p->client_closed);
	assert_false(p->client_failed);
	pair_free(p);

	SSL_CTX_free(cctx);
	SSL_CTX_free(server);
}

/* ---------------------------------------------------------------- garbage and memory */

static void test_garbage(void **state)
{
	static const char http[] = "GET / HTTP/1.1\r\nHost: primary.example\r\n\r\n";
	static uint8_t junk[APEX_TLS_INPUT_MAX + 1];
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	apex_tls_session_t *s;
	size_t before, failed, got;
	uint8_t buf[512];
	char err[256];

	/* An HTTP request instead of a ClientHello. */
	before = atomic_load(&live_bytes);
	assert_int_equal(apex_tls_session_new_server(server, &s, err, sizeof err), APEX_OK);
	assert_int_equal(
		apex_tls_session_feed(s, (const uint8_t *)http, sizeof http - 1, err, sizeof err),
		APEX_OK);
	err[0] = '\0';
	assert_int_equal(apex_tls_session_read(s, buf, sizeof buf, &got, err, sizeof err),
			 APEX_EIO);
	assert_int_equal(apex_tls_session_state(s), APEX_TLS_FAILED);
	assert_non_null(strstr(err, "TLS handshake: "));
	/* A failed session keeps its buffers until freed, whatever came. */
	failed = atomic_load(&live_bytes) - before;
	print_message("garbage: %s; %zu bytes held\n", err, failed);
	assert_true(failed < 80 * 1024);
	assert_int_equal(apex_tls_session_feed(s, junk, 100, err, sizeof err), APEX_EINVAL);
	assert_int_equal(apex_tls_session_read(s, buf, sizeof buf, &got, err, sizeof err),
			 APEX_EINVAL);
	assert_int_equal(atomic_load(&live_bytes) - before, failed);
	assert_int_equal(ERR_peek_error(), 0); /* nothing left for the next connection */
	apex_tls_session_free(s);
	assert_int_equal(atomic_load(&live_bytes), before);

	/* A record header announcing a handshake, then noise. */
	memset(junk, 0x5a, sizeof junk);
	memcpy(junk, "\x16\x03\x01\x40\x00\x01", 6);
	assert_int_equal(apex_tls_session_new_server(server, &s, err, sizeof err), APEX_OK);
	assert_int_equal(apex_tls_session_feed(s, junk, 16384 + 5, err, sizeof err), APEX_OK);
	assert_int_equal(apex_tls_session_read(s, buf, sizeof buf, &got, err, sizeof err),
			 APEX_EIO);
	print_message("noise: %s\n", err);
	apex_tls_session_free(s);

	/* Input not read is bounded. */
	assert_int_equal(apex_tls_session_new_server(server, &s, err, sizeof err), APEX_OK);
	assert_int_equal(apex_tls_session_feed(s, junk, APEX_TLS_INPUT_MAX, err, sizeof err),
			 APEX_OK);
	assert_int_equal(apex_tls_session_feed(s, junk, 1, err, sizeof err), APEX_ESPACE);
	assert_int_equal(apex_tls_session_feed(s, junk, sizeof junk, err, sizeof err), APEX_ESPACE);
	apex_tls_session_free(s);
	assert_int_equal(atomic_load(&live_bytes), before);
	SSL_CTX_free(server);
}

/* The server session alone, its client freed: the bytes it holds. */
static size_t server_alone(pair_t *p, size_t before)
{
	SSL_free(p->raw);
	p->raw = NULL;
	return atomic_load(&live_bytes) - before;
}

/* An open session's memory, after the handshake and idle after a large
 * exchange (its buffers released). */
static void test_idle_memory(void **state)
{
	static uint8_t msgs[70000];
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	pair_t *p = open_pair(server, cctx);
	size_t before, handshake, idle, total = messages(msgs, 1, 65535), n;
	char err[256];

	pair_free(p); /* the contexts' certificates cache what they compute once */
	before = atomic_load(&live_bytes);
	p = open_pair(server, cctx);
	handshake = server_alone(p, before);
	pair_free(p);
	assert_int_equal(atomic_load(&live_bytes), before);

	p = open_pair(server, cctx);
	assert_int_equal(SSL_write_ex(p->raw, msgs, total, &n), 1);
	assert_int_equal(apex_tls_session_write(p->server, msgs, total, err, sizeof err), APEX_OK);
	pump(p);
	assert_int_equal(p->to_server_len, total);
	assert_int_equal(p->to_client_len, total);
	idle = server_alone(p, before);
	pair_free(p);
	assert_int_equal(atomic_load(&live_bytes), before);

	print_message("server session: %zu bytes after the handshake, %zu bytes idle after "
		      "64 KiB each way\n",
		      handshake, idle);
	assert_true(handshake < 24 * 1024);
	assert_true(idle < 24 * 1024);
	SSL_CTX_free(cctx);
	SSL_CTX_free(server);
}

/* ---------------------------------------------------------------- resumption */

/* A connection from a client of cctx offering session (or none): whether
 * it resumed; the client's session afterwards (with its tickets) in *out
 * when out is set. */
static bool connect_resume(SSL_CTX *server, SSL_CTX *cctx, SSL_SESSION *session, SSL_SESSION **out)
{
	pair_t *p = pair_new(server, cctx);
	bool resumed;

	if (session != NULL)
		assert_int_equal(SSL_set_session(p->raw, session), 1);
	pump(p);
	assert_true(both_open(p));
	resumed = apex_tls_session_resumed(p->server);
	assert_int_equal(SSL_session_reused(p->raw), resumed);
	if (out != NULL) {
		*out = SSL_get1_session(p->raw);
		assert_non_null(*out);
	}
	/* OpenSSL forgets the session of a connection not shut down. */
	assert_true(SSL_shutdown(p->raw) >= 0);
	pair_free(p);
	return resumed;
}

static void check_rotation(int version)
{
	apex_tls_ticket_keys_t *keys;
	SSL_CTX *server, *renewed, *cctx = raw_client_ctx(ALPN_DOT, 4, 0, version);
	SSL_SESSION *first, *later;
	char err[256];

	assert_int_equal(apex_tls_ticket_keys_new(&keys, err, sizeof err), APEX_OK);
	server = server_ctx("server.pem", NULL, keys);
	renewed = server_ctx("server.pem", NULL, keys); /* certificate files read again */
	apex_tls_ticket_keys_unref(keys);               /* the contexts hold it */

	assert_false(connect_resume(server, cctx, NULL, &first));
	assert_int_equal(SSL_SESSION_is_resumable(first), 1);
	assert_true(connect_resume(server, cctx, first, NULL));
	assert_true(connect_resume(renewed, cctx, first, NULL)); /* same keys */

	/* One rotation: the previous key still decrypts. */
	assert_int_equal(apex_tls_ticket_keys_rotate(keys, err, sizeof err), APEX_OK);
	assert_true(connect_resume(server, cctx, first, &later));
	/* Two: the first ticket is refused (a full handshake), a later one not. */
	assert_int_equal(apex_tls_ticket_keys_rotate(keys, err, sizeof err), APEX_OK);
	assert_false(connect_resume(server, cctx, first, NULL));
	assert_true(connect_resume(server, cctx, later, NULL));

	SSL_SESSION_free(first);
	SSL_SESSION_free(later);
	SSL_CTX_free(renewed);
	SSL_CTX_free(server); /* the last reference to keys goes here */
	SSL_CTX_free(cctx);
}

static void test_resumption(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	SSL_SESSION *session;

	check_rotation(0);              /* TLS 1.3 */
	check_rotation(TLS1_2_VERSION); /* TLS 1.2's tickets */

	/* Without ticket keys: no resumption. */
	assert_false(connect_resume(server, cctx, NULL, &session));
	assert_false(connect_resume(server, cctx, session, NULL));
	SSL_SESSION_free(session);
	SSL_CTX_free(cctx);
	SSL_CTX_free(server);
}

/* The tls-port's and the tls-auth-port's contexts share the ticket keys:
 * a session begun on the first, without a client certificate, does not
 * resume on the second (a full handshake, which fails without one); a
 * session with a verified certificate resumes there. */
static void test_resumption_client_certs(void **state)
{
	apex_tls_ticket_keys_t *keys;
	SSL_CTX *dot, *auth, *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	SSL_CTX *good = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	SSL_SESSION *session;
	char err[256];
	pair_t *p;

	(void)state;
	assert_int_equal(SSL_CTX_use_certificate_chain_file(good, file("client.pem")), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey_file(good, file("client.key"), SSL_FILETYPE_PEM),
			 1);
	assert_int_equal(apex_tls_ticket_keys_new(&keys, err, sizeof err), APEX_OK);
	dot = server_ctx("server.pem", NULL, keys);
	auth = server_ctx("server.pem", "ca.pem", keys);
	apex_tls_ticket_keys_unref(keys); /* the contexts hold it */

	assert_false(connect_resume(dot, cctx, NULL, &session));
	assert_true(connect_resume(dot, cctx, session, NULL));
	p = pair_new(auth, cctx);
	assert_int_equal(SSL_set_session(p->raw, session), 1);
	pump(p);
	assert_false(apex_tls_session_resumed(p->server));
	assert_int_equal(apex_tls_session_state(p->server), APEX_TLS_FAILED);
	pair_free(p);
	SSL_SESSION_free(session);

	assert_false(connect_resume(auth, good, NULL, &session));
	assert_true(connect_resume(auth, good, session, NULL));
	SSL_SESSION_free(session);

	SSL_CTX_free(good);
	SSL_CTX_free(cctx);
	SSL_CTX_free(auth);
	SSL_CTX_free(dot);
}

/* Handshakes with tickets while another thread rotates the keys as fast
 * as it can: each completes, resumed or not (the cmocka checks stay on
 * this thread). */
typedef struct rotator {
	apex_tls_ticket_keys_t *keys;
	atomic_bool stop;
	int rotations, rc;
} rotator_t;

static void *rotate(void *arg)
{
	rotator_t *r = arg;
	char err[256];

	while (!atomic_load(&r->stop) && r->rc == APEX_OK) {
		r->rc = apex_tls_ticket_keys_rotate(r->keys, err, sizeof err);
		r->rotations++;
		usleep(500);
	}
	return NULL;
}

static void test_rotation_threads(void **state)
{
	rotator_t r = { .rc = APEX_OK };
	SSL_CTX *server, *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	SSL_SESSION *session = NULL, *next;
	pthread_t thread;
	char err[256];
	int resumed = 0;

	assert_int_equal(apex_tls_ticket_keys_new(&r.keys, err, sizeof err), APEX_OK);
	server = server_ctx("server.pem", NULL, r.keys);
	atomic_init(&r.stop, false);
	assert_int_equal(pthread_create(&thread, NULL, rotate, &r), 0);
	for (int i = 0; i < 100; i++) {
		resumed += connect_resume(server, cctx, session, &next);
		SSL_SESSION_free(session);
		session = next;
	}
	atomic_store(&r.stop, true);
	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(r.rc, APEX_OK);
	print_message("%d of 99 resumed during %d rotations\n", resumed, r.rotations);
	assert_true(r.rotations > 0);
	SSL_SESSION_free(session);
	apex_tls_ticket_keys_unref(r.keys);
	SSL_CTX_free(server);
	SSL_CTX_free(cctx);
}

/* ---------------------------------------------------------------- verification */

/* An apex client of cctx expecting name against server: whether both
 * ends opened; the client's reason in err (empty if none). */
static bool verify_with(SSL_CTX *server, SSL_CTX *cctx, const char *name, char *err, size_t size)
{
	pair_t *p = pair_apex(server, cctx, name);
	bool open;

	pump(p);
	open = both_open(p) && !p->server_failed;
	snprintf(err, size, "%s", p->client_failed ? p->client_err : "");
	if (open) {
		assert_true(apex_tls_peer_name_matches(apex_tls_session_ssl(p->client), name));
		assert_true(apex_tls_alpn_is_dot(apex_tls_session_ssl(p->client)));
	}
	pair_free(p);
	return open;
}

static void test_client_verify(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *wrong = server_ctx("wrong.pem", NULL, NULL);
	SSL_CTX *right_ca = client_ctx("ca.pem", NULL);
	SSL_CTX *other_ca = client_ctx("ca2.pem", NULL);
	SSL_CTX *system_ca = client_ctx(NULL, NULL);
	char err[256];

	assert_true(verify_with(server, right_ca, "primary.example", err, sizeof err));
	assert_true(verify_with(server, right_ca, "Primary.Example.", err, sizeof err));

	assert_false(verify_with(server, right_ca, "other.example", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate name does not match other.example");
	assert_false(verify_with(server, right_ca, "mary.example", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate name does not match mary.example");
	assert_false(verify_with(wrong, right_ca, "primary.example", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate name does not match primary.example");
	assert_false(verify_with(server, right_ca, "192.0.2.1", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate name does not match 192.0.2.1");

	assert_false(verify_with(server, other_ca, "primary.example", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate verify failed: "
				 "unable to get local issuer certificate");
	assert_false(verify_with(server, system_ca, "primary.example", err, sizeof err));
	assert_string_equal(err, "TLS handshake: certificate verify failed: "
				 "unable to get local issuer certificate");

	SSL_CTX_free(system_ca);
	SSL_CTX_free(other_ca);
	SSL_CTX_free(right_ca);
	SSL_CTX_free(wrong);
	SSL_CTX_free(server);
}

static void test_context_errors(void **state)
{
	apex_tls_server_options_t so = { 0 };
	apex_tls_client_options_t co = { 0 };
	SSL_CTX *ctx;
	apex_tls_session_t *s;
	char err[512];

	so.cert_file = file("missing.pem");
	so.key_file = file("server.key");
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_EINVAL);
	assert_null(ctx);
	assert_non_null(strstr(err, "missing.pem: No such file or directory"));

	so.cert_file = file("server.pem");
	so.key_file = file("client.key"); /* not the certificate's */
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_EINVAL);
	assert_non_null(strstr(err, "client.key"));
	print_message("mismatch: %s\n", err);

	/* An encrypted key: its password, a wrong one, none (never a prompt). */
	so.key_file = file("server_enc.key");
	so.key_password = "sesame";
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_OK);
	SSL_CTX_free(ctx);
	so.key_password = "open";
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_EINVAL);
	assert_non_null(strstr(err, "server_enc.key"));
	print_message("wrong password: %s\n", err);
	so.key_password = NULL;
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_EINVAL);

	so.key_file = file("server.key");
	so.client_ca_file = file("missing-ca.pem");
	assert_int_equal(apex_tls_server_context_new(&so, &ctx, err, sizeof err), APEX_EINVAL);
	assert_non_null(strstr(err, "missing-ca.pem"));

	co.ca_file = file("missing-ca.pem");
	assert_int_equal(apex_tls_client_context_new(&co, &ctx, err, sizeof err), APEX_EINVAL);
	assert_non_null(strstr(err, "missing-ca.pem"));
	co.ca_file = file("ca.pem");
	co.cert_file = file("client.pem");
	assert_int_equal(apex_tls_client_context_new(&co, &ctx, err, sizeof err), APEX_EINVAL);
	co.key_file = file("client_enc.key");
	co.key_password = "sesame";
	assert_int_equal(apex_tls_client_context_new(&co, &ctx, err, sizeof err), APEX_OK);
	assert_int_equal(apex_tls_session_new_client(ctx, "", &s, err, sizeof err), APEX_EINVAL);
	assert_int_equal(apex_tls_session_new_client(ctx, NULL, &s, err, sizeof err), APEX_EINVAL);
	SSL_CTX_free(ctx);
	assert_int_equal(ERR_peek_error(), 0);
}

/* A server context from a certificate and key in memory: the same
 * handshake as from the files; a key not the certificate's refused. */
static void test_context_in_memory(void **state)
{
	apex_tls_server_options_t so = { 0 };
	SSL_CTX *server, *client = client_ctx("ca.pem", NULL);
	FILE *f;
	X509 *cert;
	EVP_PKEY *key, *other;
	char err[512];

	assert_non_null(f = fopen(file("server.pem"), "r"));
	assert_non_null(cert = PEM_read_X509(f, NULL, NULL, NULL));
	fclose(f);
	assert_non_null(f = fopen(file("server.key"), "r"));
	assert_non_null(key = PEM_read_PrivateKey(f, NULL, NULL, NULL));
	fclose(f);
	assert_non_null(f = fopen(file("client.key"), "r"));
	assert_non_null(other = PEM_read_PrivateKey(f, NULL, NULL, NULL));
	fclose(f);

	so.cert = cert;
	so.key = other;
	assert_int_equal(apex_tls_server_context_new(&so, &server, err, sizeof err), APEX_EINVAL);
	assert_null(server);
	print_message("in memory, mismatch: %s\n", err);
	so.key = key;
	assert_int_equal(apex_tls_server_context_new(&so, &server, err, sizeof err), APEX_OK);
	/* the context holds its own references */
	X509_free(cert);
	EVP_PKEY_free(key);
	EVP_PKEY_free(other);

	pair_t *p = pair_apex(server, client, "primary.example");
	pump(p);
	assert_true(both_open(p));
	pair_free(p);
	SSL_CTX_free(server);
	SSL_CTX_free(client);
	assert_int_equal(ERR_peek_error(), 0);
}

/* ---------------------------------------------------------------- mutual TLS */

/* A client of cctx (or a plain client without a certificate) against the
 * server requiring client certificates: whether it got in; the server's
 * reason in err. */
static bool mutual_with(SSL_CTX *server, SSL_CTX *cctx, char *err, size_t size)
{
	SSL_CTX *raw = cctx == NULL ? raw_client_ctx(ALPN_DOT, 4, 0, 0) : NULL;
	pair_t *p =
		cctx != NULL ? pair_apex(server, cctx, "primary.example") : pair_new(server, raw);
	SSL *ssl = apex_tls_session_ssl(p->server);
	bool open;

	pump(p);
	open = both_open(p) && !p->server_failed;
	snprintf(err, size, "%s", p->server_failed ? p->server_err : "");
	if (open) {
		assert_true(apex_tls_peer_name_matches(ssl, "secondary.example"));
		assert_true(apex_tls_peer_name_matches(ssl, "secondary.example."));
		assert_false(apex_tls_peer_name_matches(ssl, "primary.example"));
		assert_false(apex_tls_peer_name_matches(ssl, "wrong.example"));
		assert_false(apex_tls_peer_name_matches(ssl, "example"));
		assert_false(apex_tls_peer_name_matches(ssl, ""));
		assert_false(apex_tls_peer_name_matches(ssl, NULL));
	} else {
		/* TLS 1.3: the client finishes first and learns of the refusal
		 * from the alert it reads next. */
		assert_true(p->client_failed);
	}
	pair_free(p);
	SSL_CTX_free(raw);
	return open;
}

static void test_mutual_tls(void **state)
{
	SSL_CTX *server = server_ctx("server.pem", "ca.pem", NULL);
	SSL_CTX *plain = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *good = client_ctx("ca.pem", "client.pem");
	SSL_CTX *foreign = client_ctx("ca.pem", "other_client.pem");
	SSL_CTX *cn = client_ctx("ca.pem", "cn_only.pem");
	SSL_CTX *none = client_ctx("ca.pem", NULL);
	pair_t *p;
	char err[256];

	assert_false(mutual_with(server, NULL, err, sizeof err));
	assert_string_equal(err, "TLS handshake: peer did not return a certificate");
	assert_false(mutual_with(server, none, err, sizeof err));
	assert_string_equal(err, "TLS handshake: peer did not return a certificate");
	assert_false(mutual_with(server, foreign, err, sizeof err));
	assert_string_equal(err, "TLS handshake: client certificate verify failed: "
				 "unable to get local issuer certificate");
	assert_true(mutual_with(server, good, err, sizeof err));

	/* The subject's CN counts when the certificate has no dNSName. */
	p = pair_apex(server, cn, "primary.example");
	pump(p);
	assert_true(both_open(p));
	assert_true(apex_tls_peer_name_matches(apex_tls_session_ssl(p->server), "cn-only.example"));
	assert_false(apex_tls_peer_name_matches(apex_tls_session_ssl(p->server), "cn.example"));
	pair_free(p);

	/* A server that asks for no certificate has no peer name to match. */
	p = pair_apex(plain, good, "primary.example");
	pump(p);
	assert_true(both_open(p));
	assert_false(
		apex_tls_peer_name_matches(apex_tls_session_ssl(p->server), "secondary.example"));
	pair_free(p);

	SSL_CTX_free(none);
	SSL_CTX_free(cn);
	SSL_CTX_free(foreign);
	SSL_CTX_free(good);
	SSL_CTX_free(plain);
	SSL_CTX_free(server);
}

/* ---------------------------------------------------------------- the context slot */

static void test_context_slot(void **state)
{
	apex_tls_context_slot_t slot;
	SSL_CTX *a = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *b = server_ctx("wrong.pem", NULL, NULL);
	SSL_CTX *cctx = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	SSL_CTX *got;
	pair_t *p;

	apex_tls_context_slot_init(&slot);
	assert_null(apex_tls_context_slot_get(&slot));
	apex_tls_context_slot_set(&slot, a);
	got = apex_tls_context_slot_get(&slot);
	assert_ptr_equal(got, a);
	p = pair_new(got, cctx); /* a connection made from a */
	SSL_CTX_free(got);
	apex_tls_context_slot_set(&slot, b); /* the slot's reference to a dropped */
	got = apex_tls_context_slot_get(&slot);
	assert_ptr_equal(got, b);
	SSL_CTX_free(got);
	pump(p); /* a lives on in its connection */
	assert_true(both_open(p));
	pair_free(p);
	apex_tls_context_slot_destroy(&slot);
	SSL_CTX_free(cctx);
}

/* ---------------------------------------------------------------- the blocking stream */

static const apex_xfr_timeouts_t timeouts = {
	.connect_ms = 1000, .idle_ms = 2000, .total_ms = 20000, .cancel_fd = -1
};

typedef struct stream_server {
	int fd;
	SSL_CTX *ctx;
	int rc;
	char err[256];
	bool name_ok;
} stream_server_t;

/* The server end: accept, check the client's name, answer each message
 * with its bytes reversed until the client stops, then close_notify. */
static void *stream_serve(void *arg)
{
	static uint8_t msg[65535], answer[65535];
	stream_server_t *t = arg;
	apex_tcp_stream_t s;
	size_t size;

	apex_tcp_stream_init(&s, t->fd, &timeouts, "client", t->err, sizeof t->err);
	t->rc = apex_tcp_stream_tls_accept(&s, t->ctx);
	if (t->rc < 0)
		return NULL;
	t->name_ok = apex_tls_peer_name_matches(apex_tls_session_ssl(s.tls), "secondary.example");
	for (int i = 0; i < 2; i++) {
		t->rc = apex_tcp_stream_recv_message(&s, msg, &size);
		if (t->rc < 0)
			break;
		for (size_t j = 0; j < size; j++)
			answer[j] = msg[size - 1 - j];
		t->rc = apex_tcp_stream_send_message(&s, answer, size);
		if (t->rc < 0)
			break;
	}
	if (t->rc == APEX_OK)
		t->rc = apex_tcp_stream_tls_end(&s, true);
	else
		apex_tcp_stream_tls_end(&s, false);
	return NULL;
}

static void round_trip(apex_tcp_stream_t *s, size_t size)
{
	static uint8_t msg[65535], back[65535];
	size_t got;

	for (size_t i = 0; i < size; i++)
		msg[i] = (uint8_t)(i * 7 + size);
	assert_int_equal(apex_tcp_stream_send_message(s, msg, size), APEX_OK);
	assert_int_equal(apex_tcp_stream_recv_message(s, back, &got), APEX_OK);
	assert_int_equal(got, size);
	for (size_t i = 0; i < size; i++)
		assert_int_equal(back[i], msg[size - 1 - i]);
}

static void test_stream(void **state)
{
	stream_server_t t = { 0 };
	apex_tcp_stream_t s;
	pthread_t thread;
	SSL_CTX *cctx = client_ctx("ca.pem", "client.pem");
	int fds[2];
	uint8_t buf[512];
	size_t size;
	char err[256];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	t.fd = fds[1];
	t.ctx = server_ctx("server.pem", "ca.pem", NULL);
	assert_int_equal(pthread_create(&thread, NULL, stream_serve, &t), 0);

	apex_tcp_stream_init(&s, fds[0], &timeouts, "primary", err, sizeof err);
	assert_int_equal(apex_tcp_stream_tls_connect(&s, cctx, "primary.example"), APEX_OK);
	assert_non_null(s.tls);
	round_trip(&s, 45);
	round_trip(&s, 65535);
	/* The server's close_notify ends the stream between messages. */
	assert_int_equal(apex_tcp_stream_recv_message(&s, buf, &size), APEX_EMALFORMED);
	assert_string_equal(err, "primary: connection closed before the answer was complete");
	assert_int_equal(apex_tcp_stream_tls_end(&s, false), APEX_OK);
	assert_null(s.tls);

	assert_int_equal(pthread_join(thread, NULL), 0);
	assert_int_equal(t.rc, APEX_OK);
	assert_true(t.name_ok);
	close(fds[0]);
	close(fds[1]);
	SSL_CTX_free(t.ctx);
	SSL_CTX_free(cctx);
}

/* Plain TCP through the same stream, unchanged. */
static void test_stream_plain(void **state)
{
	char err[256];
	apex_tcp_stream_t a, b;
	uint8_t buf[600];
	size_t size;
	int fds[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	apex_tcp_stream_init(&a, fds[0], &timeouts, "a", err, sizeof err);
	apex_tcp_stream_init(&b, fds[1], &timeouts, "b", err, sizeof err);
	assert_null(a.tls);
	assert_int_equal(apex_tcp_stream_send_message(&a, (const uint8_t *)"hello", 5), APEX_OK);
	assert_int_equal(apex_tcp_stream_recv_message(&b, buf, &size), APEX_OK);
	assert_int_equal(size, 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(recv(fds[1], buf, 1, MSG_DONTWAIT), -1); /* nothing more on the wire */
	assert_int_equal(apex_tcp_stream_tls_end(&a, true), APEX_OK);
	close(fds[0]);
	assert_int_equal(apex_tcp_stream_recv_message(&b, buf, &size), APEX_EMALFORMED);
	close(fds[1]);
}

static void test_stream_timeouts(void **state)
{
	apex_xfr_timeouts_t quick = { .idle_ms = 200, .total_ms = 5000, .cancel_fd = -1 };
	SSL_CTX *cctx = client_ctx("ca.pem", NULL);
	SSL_CTX *server = server_ctx("server.pem", NULL, NULL);
	SSL_CTX *raw = raw_client_ctx(ALPN_DOT, 4, 0, 0);
	apex_tcp_stream_t s;
	uint8_t hello[4096];
	uint64_t start;
	char err[256];
	int fds[2], cancel[2];
	SSL *ssl;
	BIO *in, *out;
	int n;

	/* The server never answers the ClientHello. */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
	apex_tcp_stream_init(&s, fds[0], &quick, "primary", err, sizeof err);
	start = apex_monotonic_ms();
	assert_int_equal(apex_tcp_stream_tls_connect(&s, cctx, "primary.example"), -ETIMEDOUT);
	assert_true(apex_monotonic_ms() - start >= 190);
	assert_true(apex_monotonic_ms() - start < 2000);
	assert_string_equal(err, "primary: TLS handshake: timed out");
	assert_null(s.tls);
	assert_true(recv(fds[1], hello, sizeof hello, MSG_DONTWAIT) > 0); /* the hello was sent */

	/* A client that sends its hello, then stalls: the server gives up. */
	ssl = SSL_new(raw);
	in = BIO_new(BIO_s_mem());
	out = BIO_new(BIO_s_mem());
	BIO_set_mem_eof_return(in, -1);
	SSL_set_bio(ssl, in, out);
	SSL_set_connect_state(ssl);
	assert_int_equal(SSL_do_handshake(ssl), -1);
	n = BIO_read(out, hello, sizeof hello);
	assert_true(n > 0);
	assert_int_equal(send(fds[1], hello, (size_t)n, 0), n);
	apex_tcp_stream_init(&s, fds[0], &quick, "client", err, sizeof err);
	start = apex_monotonic_ms();
	assert_int_equal(apex_tcp_stream_tls_accept(&s, server), -ETIMEDOUT);
	assert_true(apex_monotonic_ms() - start >= 190);
	assert_string_equal(err, "client: TLS handshake: timed out");
	assert_true(recv(fds[1], hello, sizeof hello, MSG_DONTWAIT) > 0); /* its ServerHello */
	SSL_free(ssl);

	/* Abandoned: the cancel descriptor is readable. */
	assert_int_equal(pipe(cancel), 0);
	assert_int_equal(write(cancel[1], "x", 1), 1);
	quick.cancel_fd = cancel[0];
	apex_tcp_stream_init(&s, fds[0], &quick, "primary", err, sizeof err);
	assert_int_equal(apex_tcp_stream_tls_connect(&s, cctx, "primary.example"), -ECANCELED);
	assert_string_equal(err, "primary: TLS handshake: abandoned (stopping)");

	/* The peer closes during the handshake. */
	close(fds[1]);
	quick.cancel_fd = -1;
	apex_tcp_stream_init(&s, fds[0], &quick, "primary", err, sizeof err);
	assert_true(apex_tcp_stream_tls_connect(&s, cctx, "primary.example") < 0);
	print_message("closed: %s\n", err);

	close(cancel[0]);
	close(cancel[1]);
	close(fds[0]);
	SSL_CTX_free(raw);
	SSL_CTX_free(server);
	SSL_CTX_free(cctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_alpn),
		cmocka_unit_test(test_handshake_refused),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_close_notify),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_idle_memory),
		cmocka_unit_test(test_resumption),
		cmocka_unit_test(test_resumption_client_certs),
		cmocka_unit_test(test_rotation_threads),
		cmocka_unit_test(test_client_verify),
		cmocka_unit_test(test_context_errors),
		cmocka_unit_test(test_context_in_memory),
		cmocka_unit_test(test_mutual_tls),
		cmocka_unit_test(test_context_slot),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_plain),
		cmocka_unit_test(test_stream_timeouts),
	};

	/* Before any other OpenSSL call, or OpenSSL refuses. */
	if (CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free) != 1) {
		fprintf(stderr, "test_tls: OpenSSL allocated before main\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, make_certificates, remove_certificates);
}
