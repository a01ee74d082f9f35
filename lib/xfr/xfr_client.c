/* SPDX-License-Identifier: BSD-3-Clause */
/* A secondary's requests to a primary over TCP (xfr_client.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/xfr_client.h"

#include <errno.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dns/edns.h"
#include "dns/rrtype.h"
#include "dns/soa_stub.h"
#include "dns/wire.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/siphash.h"
#include "xfr/tcp_stream.h"

#define MESSAGE_MAX 65535
#define REQUEST_MAX 1024 /* a question, an SOA and a TSIG record */

/* The connection of one exchange. */
typedef struct conn {
	apex_tcp_stream_t io;
	const apex_xfr_primary_t *primary;
	char *err;
	size_t err_size;
	bool reused; /* a kept connection */
} conn_t;

void apex_xfr_kept_close(apex_xfr_kept_t *kept, uint64_t older_than_ms)
{
	if (kept == NULL || kept->fd < 0)
		return;
	if (older_than_ms > 0 && apex_monotonic_ms() - kept->since_ms < older_than_ms)
		return;
	close(kept->fd);
	kept->fd = -1;
}

/* Whether p can be asked on a kept connection: plain TCP. */
static bool keeps(const apex_xfr_primary_t *p)
{
	return p->kept != NULL && p->tls == NULL && p->tls_name == NULL;
}

/* The exchange ended: close_notify over TLS when it went well, then the
 * connection closed, or kept when it went well and p keeps one. */
static void conn_close(conn_t *c, int rc)
{
	apex_xfr_kept_t *kept = c->primary->kept;

	apex_tcp_stream_tls_end(&c->io, rc == APEX_OK);
	if (rc != APEX_OK || !keeps(c->primary)) {
		close(c->io.fd);
		return;
	}
	apex_xfr_kept_close(kept, 0);
	kept->fd = c->io.fd;
	memcpy(&kept->addr, &c->primary->addr, sizeof(kept->addr));
	kept->addr_len = c->primary->addr_len;
	kept->since_ms = apex_monotonic_ms();
}

/* The connection p's thread keeps for p's address, when there is one
 * young enough and still open (the primary has not closed it, nor sent
 * anything unasked): true with c on it. */
static bool conn_take_kept(conn_t *c, const apex_xfr_primary_t *p, const apex_xfr_timeouts_t *t)
{
	apex_xfr_kept_t *kept = p->kept;
	struct pollfd pfd;
	int fd;

	if (!keeps(p) || kept->fd < 0)
		return false;
	if (kept->addr_len != p->addr_len || memcmp(&kept->addr, &p->addr, p->addr_len) != 0 ||
	    apex_monotonic_ms() - kept->since_ms >= APEX_XFR_KEPT_MS) {
		apex_xfr_kept_close(kept, 0);
		return false;
	}
	fd = kept->fd;
	kept->fd = -1;
	/* readable: the primary's end of stream (or bytes nobody asked for);
	 * POLLHUP and POLLERR come unasked */
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, 0) != 0) {
		close(fd);
		return false;
	}
	c->reused = true;
	apex_tcp_stream_init(&c->io, fd, t, p->text, c->err, c->err_size);
	return true;
}

/* A connection to p for an exchange: a kept one if reuse allows and
 * there is one, else a new one. */
static int conn_open(conn_t *c, const apex_xfr_primary_t *p, const apex_xfr_timeouts_t *t,
		     bool reuse, char *err, size_t err_size)
{
	apex_xfr_timeouts_t connecting = *t;
	int rc, soerr = 0;
	socklen_t len = sizeof(soerr);
	int fd;

	c->primary = p;
	c->err = err;
	c->err_size = err_size;
	c->reused = false;
	if (reuse && conn_take_kept(c, p, t))
		return APEX_OK;
	apex_xfr_kept_close(p->kept, 0); /* one connection at a time */
	fd = socket(p->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return apex_fail(err, err_size, apex_errno(), "%s: socket: %s", p->text,
				 strerror(errno));
	connecting.idle_ms = t->connect_ms;
	apex_tcp_stream_init(&c->io, fd, &connecting, p->text, err, err_size);
	if (connect(fd, (const struct sockaddr *)&p->addr, p->addr_len) < 0 &&
	    errno != EINPROGRESS) {
		rc = apex_fail(err, err_size, apex_errno(), "%s: connect: %s", p->text,
			       strerror(errno));
		goto failed;
	}
	if ((rc = apex_tcp_stream_wait(&c->io, POLLOUT, "connect")) < 0)
		goto failed;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0 || soerr != 0) {
		rc = apex_fail(err, err_size, soerr != 0 ? -soerr : apex_errno(), "%s: connect: %s",
			       p->text, strerror(soerr != 0 ? soerr : errno));
		goto failed;
	}
	c->io.idle_ms = t->idle_ms;
	if (p->tls_name != NULL && p->tls == NULL) {
		rc = apex_fail(err, err_size, APEX_EINVAL, "%s: TLS: %s", p->text, p->tls_error);
		goto failed;
	}
	/* the handshake within the exchange's time-outs; the certificate is
	 * checked against tls_name in it */
	if (p->tls != NULL && (rc = apex_tcp_stream_tls_connect(&c->io, p->tls, p->tls_name)) < 0)
		goto failed;
	return APEX_OK;
failed:
	close(fd);
	c->io.fd = -1;
	return rc;
}

/*
 * The request: the question (origin, qtype, IN) and for an IXFR the
 * secondary's SOA in the authority section (RFC 1995 section 3), an OPT
 * record asking for the zone's EDNS EXPIRE (RFC 7314 section 3), signed
 * when the primary has a key (its MAC into *mac).  Sent with its length.
 */
static int send_request(conn_t *c, const uint8_t *origin, uint16_t qtype, uint32_t serial,
			uint16_t id, apex_tsig_mac_t *mac)
{
	uint8_t m[REQUEST_MAX];
	size_t name_size = apex_name_size(origin), size = 12;
	int rc;

	memset(m, 0, 12);
	apex_write_u16(m, id);
	apex_write_u16(m + 4, 1);
	memcpy(m + size, origin, name_size);
	size += name_size;
	apex_write_u16(m + size, qtype);
	apex_write_u16(m + size + 2, APEX_CLASS_IN);
	size += 4;
	if (qtype == APEX_TYPE_IXFR) {
		apex_write_u16(m + 8, 1); /* NSCOUNT */
		apex_soa_stub_write(m + size, serial);
		size += APEX_SOA_STUB_SIZE;
	}
	size = apex_message_add_opt(m, size, REQUEST_MAX, APEX_EDNS_EXPIRE, NULL, 0);
	mac->size = 0;
	if (c->primary->key != NULL) {
		rc = apex_tsig_sign(m, &size, REQUEST_MAX, c->primary->key, NULL,
				    (uint64_t)time(NULL), mac);
		if (rc < 0)
			return apex_fail(c->err, c->err_size, rc, "%s: cannot sign the request: %s",
					 c->primary->text, apex_strerror(rc));
	}
	return apex_tcp_stream_send_message(&c->io, m, size);
}

static const char *tsig_error_text(int error)
{
	switch (error) {
	case APEX_TSIG_FORMERR: return "a malformed TSIG record";
	case APEX_TSIG_BADSIG: return "BADSIG (wrong MAC)";
	case APEX_TSIG_BADKEY: return "BADKEY (not signed with the primary's key)";
	case APEX_TSIG_BADTIME: return "BADTIME (clocks apart)";
	case APEX_TSIG_BADTRUNC: return "BADTRUNC";
	default: return "a TSIG error";
	}
}

static const char *rcode_name(unsigned rcode)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",  "REFUSED", "YXDOMAIN", "YXRRSET",
					     "NXRRSET", "NOTAUTH", "NOTZONE" };

	return rcode < sizeof(names) / sizeof(names[0]) ? names[rcode] : "an error";
}

/* Check the signature of one answer message (and take the TSIG record off). */
static int check_signature(conn_t *c, apex_tsig_stream_t *stream, uint8_t *msg, size_t *size)
{
	apex_tsig_result_t res;
	int rc;

	if (c->primary->key == NULL)
		return APEX_OK;
	rc = apex_tsig_stream_verify(stream, msg, size, (uint64_t)time(NULL), &res);
	/* a refusal is not signed (the primary did not take the request):
	 * its RCODE says more than the missing signature */
	if (rc == APEX_ENOENT && stream->messages == 0 && *size >= 4 && (msg[3] & 0x0f) != 0)
		return apex_fail(c->err, c->err_size, APEX_EREFUSED,
				 "%s: the primary answered %s (RCODE %u), unsigned",
				 c->primary->text, rcode_name(msg[3] & 0x0f), msg[3] & 0x0fu);
	if (rc == APEX_ENOENT && stream->messages == 0)
		return apex_fail(c->err, c->err_size, APEX_EMALFORMED,
				 "%s: the first message of the answer is not signed with TSIG",
				 c->primary->text);
	if (rc == APEX_ENOENT)
		return apex_fail(c->err, c->err_size, APEX_EMALFORMED,
				 "%s: message %u of the answer: more than %u unsigned messages in "
				 "a row (RFC 8945 section 5.3.1)",
				 c->primary->text, stream->messages + 1, APEX_TSIG_UNSIGNED_MAX);
	if ((rc < 0 || res.error != APEX_TSIG_NOERROR) && *size >= 4 && (msg[3] & 0x0f) == 9)
		return apex_fail(
			c->err, c->err_size, APEX_EREFUSED,
			"%s: the primary answered NOTAUTH: it does not accept the request's "
			"signature (a wrong key or secret, or clocks apart)",
			c->primary->text);
	if (rc < 0 || res.error != APEX_TSIG_NOERROR)
		return apex_fail(c->err, c->err_size, APEX_EMALFORMED,
				 "%s: message %u of the answer: %s", c->primary->text,
				 stream->messages + 1,
				 rc < 0 ? apex_strerror(rc) : tsig_error_text(res.error));
	return APEX_OK;
}

/* The EDNS EXPIRE value of an answer, or -1: none, or not 4 bytes long. */
static int64_t expire_of(const uint8_t *msg, size_t size)
{
	const uint8_t *data;

	if (apex_message_opt_option(msg, size, APEX_EDNS_EXPIRE, &data) != 4)
		return -1;
	return (int64_t)apex_read_u32(data);
}

static uint16_t random_id(void)
{
	uint16_t id = 0;

	if (apex_random_bytes(&id, sizeof(id)) < 0)
		id = (uint16_t)(apex_monotonic_ms() ^ (uint64_t)getpid());
	return id;
}

/* The serial of the SOA of origin in the answer section of msg. */
static int soa_serial(conn_t *c, const uint8_t *msg, size_t size, uint16_t id,
		      const uint8_t *origin, uint32_t *serial)
{
	ldns_pkt *pkt = NULL;
	int rc = APEX_EMALFORMED;

	if (ldns_wire2pkt(&pkt, msg, size) != LDNS_STATUS_OK)
		return apex_fail(c->err, c->err_size, rc, "%s: the SOA answer does not parse",
				 c->primary->text);
	if (ldns_pkt_id(pkt) != id || !ldns_pkt_qr(pkt)) {
		rc = apex_fail(c->err, c->err_size, rc,
			       "%s: the SOA answer is not for the question", c->primary->text);
	} else if (ldns_pkt_get_rcode(pkt) != LDNS_RCODE_NOERROR) {
		rc = apex_fail(c->err, c->err_size, APEX_EREFUSED, "%s: the SOA query got RCODE %d",
			       c->primary->text, (int)ldns_pkt_get_rcode(pkt));
	} else {
		ldns_rr_list *answer = ldns_pkt_answer(pkt);
		ldns_rdf *owner = ldns_dname_new_frm_data((uint16_t)apex_name_size(origin), origin);

		for (size_t i = 0; owner != NULL && i < ldns_rr_list_rr_count(answer); i++) {
			ldns_rr *rr = ldns_rr_list_rr(answer, i);

			if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA &&
			    ldns_dname_compare(ldns_rr_owner(rr), owner) == 0 &&
			    ldns_rr_rd_count(rr) >= 3) {
				*serial = ldns_rdf2native_int32(ldns_rr_rdf(rr, 2));
				rc = APEX_OK;
				break;
			}
		}
		ldns_rdf_deep_free(owner);
		if (rc != APEX_OK)
			apex_fail(c->err, c->err_size, rc, "%s: no SOA of the zone in the answer",
				  c->primary->text);
	}
	ldns_pkt_free(pkt);
	return rc;
}

/* The SOA query on one connection (a kept one if reuse); *again when it
 * failed on a kept connection before any answer (the primary let it go:
 * worth asking once more on a new one). */
static int soa_once(const apex_xfr_primary_t *primary, const uint8_t *origin,
		    const apex_xfr_timeouts_t *t, bool reuse, uint8_t *msg, uint32_t *serial,
		    int64_t *expire, bool *again, char *err, size_t err_size)
{
	uint16_t id = random_id();
	apex_tsig_mac_t mac;
	apex_tsig_stream_t stream;
	size_t size;
	conn_t c;
	int rc = conn_open(&c, primary, t, reuse, err, err_size);

	*again = false;
	if (rc < 0)
		return rc;
	rc = send_request(&c, origin, APEX_TYPE_SOA, 0, id, &mac);
	if (rc == APEX_OK)
		rc = apex_tcp_stream_recv_message(&c.io, msg, &size);
	*again = rc < 0 && c.reused;
	apex_tsig_stream_init(&stream, primary->key, &mac);
	if (rc == APEX_OK)
		rc = check_signature(&c, &stream, msg, &size);
	if (rc == APEX_OK)
		rc = soa_serial(&c, msg, size, id, origin, serial);
	*expire = rc == APEX_OK ? expire_of(msg, size) : -1;
	apex_tsig_stream_clear(&stream);
	conn_close(&c, rc);
	return rc;
}

int apex_xfr_client_soa(const apex_xfr_primary_t *primary, const uint8_t *origin,
			const apex_xfr_timeouts_t *t, uint32_t *serial, int64_t *expire, char *err,
			size_t err_size)
{
	uint8_t *msg = malloc(MESSAGE_MAX);
	bool again;
	int rc;

	if (msg == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	rc = soa_once(primary, origin, t, true, msg, serial, expire, &again, err, err_size);
	if (again)
		rc = soa_once(primary, origin, t, false, msg, serial, expire, &again, err,
			      err_size);
	free(msg);
	return rc;
}

/* The transfer on one connection (a kept one if reuse) into x; *again
 * as for soa_once(): no message of the answer came on a kept one. */
static int transfer_once(const apex_xfr_primary_t *primary, const uint8_t *origin, uint16_t qtype,
			 uint32_t known_serial, const apex_xfr_timeouts_t *t, bool reuse,
			 apex_xfr_in_t *x, uint8_t *msg, bool *again, char *err, size_t err_size)
{
	apex_tsig_mac_t mac;
	apex_tsig_stream_t stream;
	size_t size;
	conn_t c;
	bool answered = false;
	int rc = conn_open(&c, primary, t, reuse, err, err_size);

	*again = false;
	if (rc < 0)
		return rc;
	rc = send_request(&c, origin, qtype, known_serial, x->id, &mac);
	x->requested_us = apex_monotonic_us();
	if (rc == APEX_OK && x->handler.requested != NULL)
		x->handler.requested(x->handler.ctx);
	apex_tsig_stream_init(&stream, primary->key, &mac);
	while (rc == APEX_OK && !apex_xfr_in_done(x)) {
		rc = apex_tcp_stream_recv_message(&c.io, msg, &size);
		if (x->first_message_us == 0)
			x->first_message_us = apex_monotonic_us();
		if (rc == APEX_OK)
			answered = true;
		if (rc == APEX_OK)
			rc = check_signature(&c, &stream, msg, &size);
		if (rc == APEX_OK && x->expire < 0)
			x->expire = expire_of(msg, size);
		if (rc == APEX_OK) {
			rc = apex_xfr_in_message(x, msg, size);
			if (rc < 0)
				apex_fail(err, err_size, rc, "%s: %s%s", primary->text, x->err,
					  rc == APEX_ESPACE ? " (past the transfer's size limit)"
							    : "");
		}
	}
	if (rc == APEX_OK && primary->key != NULL && !apex_tsig_stream_complete(&stream))
		rc = apex_fail(err, err_size, APEX_EMALFORMED,
			       "%s: the last message of the answer is not signed with TSIG",
			       primary->text);
	*again = rc < 0 && c.reused && !answered;
	apex_tsig_stream_clear(&stream);
	conn_close(&c, rc);
	return rc;
}

int apex_xfr_client_transfer(const apex_xfr_primary_t *primary, const uint8_t *origin,
			     uint16_t qtype, uint32_t known_serial,
			     const apex_xfr_in_handler_t *handler,
			     const apex_xfr_in_limits_t *limits, const apex_xfr_timeouts_t *t,
			     apex_xfr_in_t *x, char *err, size_t err_size)
{
	uint8_t *msg;
	bool again;
	int rc = apex_xfr_in_init(x, origin, random_id(), qtype, known_serial, handler, limits);

	if (rc < 0)
		return apex_fail(err, err_size, rc, "out of memory");
	x->expire = -1;
	msg = malloc(MESSAGE_MAX);
	if (msg == NULL)
		return apex_fail(err, err_size, APEX_ENOMEM, "out of memory");
	rc = transfer_once(primary, origin, qtype, known_serial, t, true, x, msg, &again, err,
			   err_size);
	if (again) { /* a kept connection the primary let go */
		x->first_message_us = 0;
		rc = transfer_once(primary, origin, qtype, known_serial, t, false, x, msg, &again,
				   err, err_size);
	}
	free(msg);
	return rc;
}
