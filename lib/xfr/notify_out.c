/* SPDX-License-Identifier: BSD-3-Clause */
/* A NOTIFY sent and retried until answered (notify_out.h). */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include "xfr/notify_out.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/rrtype.h"
#include "dns/soa_stub.h"
#include "dns/wire.h"
#include "util/clock.h"
#include "util/error.h"
#include "util/siphash.h"

#define MESSAGE_MAX 4096
#define OPCODE_NOTIFY 4

/* The NOTIFY: the zone's SOA as question, and in the answer section the
 * new serial (RFC 1996 section 3.7), signed when there is a key. */
static int build(uint8_t *m, size_t *size, const apex_notify_target_t *t, const uint8_t *zone,
		 uint32_t serial, uint16_t id, apex_tsig_mac_t *mac)
{
	size_t name_size = apex_name_size(zone), n = 12;

	memset(m, 0, 12);
	apex_write_u16(m, id);
	m[2] = (OPCODE_NOTIFY << 3) | 0x04; /* AA */
	apex_write_u16(m + 4, 1);
	apex_write_u16(m + 6, 1);
	memcpy(m + n, zone, name_size);
	n += name_size;
	apex_write_u16(m + n, APEX_TYPE_SOA);
	apex_write_u16(m + n + 2, APEX_CLASS_IN);
	n += 4;
	apex_soa_stub_write(m + n, serial);
	n += APEX_SOA_STUB_SIZE;
	*size = n;
	mac->size = 0;
	if (t->key == NULL)
		return APEX_OK;
	return apex_tsig_sign(m, size, MESSAGE_MAX, t->key, NULL, (uint64_t)time(NULL), mac);
}

/* Whether msg answers the NOTIFY id (and verifies); rc: the verdict. */
static bool answers(const apex_notify_target_t *t, uint8_t *msg, size_t size, uint16_t id,
		    const apex_tsig_mac_t *mac, int *rc, char *err, size_t err_size)
{
	apex_tsig_keyring_t ring = { t->key, 1 };
	apex_tsig_result_t res;

	if (size < 12 || apex_read_u16(msg) != id || (msg[2] & 0x80) == 0 ||
	    ((msg[2] >> 3) & 0x0f) != OPCODE_NOTIFY)
		return false; /* not the answer: keep waiting */
	if ((msg[3] & 0x0f) != 0) {
		snprintf(err, err_size, "%s answered the NOTIFY with RCODE %u", t->text,
			 msg[3] & 0x0f);
		*rc = APEX_EREFUSED;
		return true;
	}
	if (t->key != NULL) {
		int v = apex_tsig_verify(msg, &size, &ring, mac, (uint64_t)time(NULL), &res);
		if (v < 0 || res.error != APEX_TSIG_NOERROR) {
			snprintf(err, err_size,
				 "%s: the answer to the NOTIFY is not signed with its key",
				 t->text);
			*rc = APEX_EMALFORMED;
			return true;
		}
	}
	*rc = APEX_OK;
	return true;
}

/* Wait up to wait_ms for the answer on fd. */
static int await(int fd, int cancel_fd, unsigned wait_ms, const apex_notify_target_t *t,
		 uint16_t id, const apex_tsig_mac_t *mac, char *err, size_t err_size)
{
	uint64_t start = apex_monotonic_ms();
	uint8_t msg[MESSAGE_MAX];

	for (;;) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = cancel_fd, .events = POLLIN } };
		int rc;

		uint64_t spent = apex_monotonic_ms() - start;
		if (spent >= wait_ms)
			return -ETIMEDOUT;
		int n = poll(pfd, cancel_fd >= 0 ? 2 : 1, (int)(wait_ms - (unsigned)spent));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0 && cancel_fd >= 0 && (pfd[1].revents & POLLIN))
			return -ECANCELED;
		if (n <= 0)
			continue;
		/* an error (ICMP port unreachable) is taken by recv; wait on */
		ssize_t got = recv(fd, msg, sizeof(msg), MSG_DONTWAIT);
		if (got > 0 && answers(t, msg, (size_t)got, id, mac, &rc, err, err_size))
			return rc;
	}
}

int apex_notify_send(const apex_notify_target_t *target, const uint8_t *zone, uint32_t serial,
		     unsigned tries, unsigned first_wait_ms, int cancel_fd, char *err,
		     size_t err_size)
{
	uint8_t msg[MESSAGE_MAX];
	apex_tsig_mac_t mac;
	uint16_t id = 0;
	size_t size;
	unsigned wait_ms = first_wait_ms;
	int rc = -ETIMEDOUT;

	snprintf(err, err_size, "%s did not answer the NOTIFY", target->text);
	int fd = socket(target->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, err_size, "%s: socket: %s", target->text, strerror(errno));
		return apex_errno();
	}
	if (connect(fd, (const struct sockaddr *)&target->addr, target->addr_len) < 0) {
		rc = apex_errno();
		snprintf(err, err_size, "%s: connect: %s", target->text, strerror(errno));
		close(fd);
		return rc;
	}
	for (unsigned i = 0; i < tries; i++, wait_ms *= 2) {
		if (apex_random_bytes(&id, sizeof(id)) < 0)
			id = (uint16_t)(id + 1);
		if ((rc = build(msg, &size, target, zone, serial, id, &mac)) < 0) {
			snprintf(err, err_size, "%s: cannot sign the NOTIFY", target->text);
			break;
		}
		if (send(fd, msg, size, 0) < 0) {
			rc = apex_errno();
			snprintf(err, err_size, "%s: send: %s", target->text, strerror(errno));
		}
		rc = await(fd, cancel_fd, wait_ms, target, id, &mac, err, err_size);
		if (rc != -ETIMEDOUT)
			break;
		snprintf(err, err_size, "%s did not answer the NOTIFY (%u tries)", target->text,
			 i + 1);
	}
	close(fd);
	return rc;
}
