/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: one query message through the whole answer path.
 *
 * The input is a DNS message as it arrives over UDP or TCP (without
 * the TCP length prefix).  It is answered as a worker of apexd answers
 * it, by apex_worker_answer() (src/apexd/serve/worker.h: the engine with the
 * client's address, the worker's statistics and response rate
 * limiting), against two zonesets loaded once at start, over UDP and
 * over TCP:
 *   - root. (NSEC), fj. (NSEC3) and example. NSEC-signed,
 *   - root. and example. NSEC3-signed,
 * with one of two answer configurations chosen by the low bit of the
 * first ID byte (the engine's defaults; or what apexd runs with by
 * default and more: server cookies, a 4096-byte payload, an NSID and
 * CHAOS identity strings).  The client address comes from the second
 * ID byte (IPv4 or IPv6).  Every response goes through the oracle of
 * fuzz_common.h.
 */
#include "fuzz_common.h"
#include "serve/worker.h"

enum { SET_NSEC, SET_NSEC3, SET_COUNT };

static apex_zonetable_t tables[SET_COUNT];
static apex_zoneset_t *sets[SET_COUNT];
static apex_answer_config_t configs[2];
static apex_worker_t *workers[SET_COUNT][2]; /* one per zoneset and configuration */
/* RRL on, at a rate no input reaches: its table is written per query. */
static const apex_rrl_config_t rrl_config = {
	.rate = 1000000000,
	.slip = 2,
	.ipv4_prefix = 24,
	.ipv6_prefix = 56,
	.table_size = 1024,
};
static uint8_t *udp_buf[2]; /* exactly the UDP capacity of each config */
static uint8_t *tcp_buf;    /* exactly APEX_MAX_MESSAGE */

static size_t udp_capacity(const apex_answer_config_t *cfg)
{
	/* As apexd sizes its UDP answer buffers (src/apexd/serve/server.c). */
	return cfg->edns_payload > APEX_MIN_UDP_PAYLOAD ? cfg->edns_payload : APEX_MIN_UDP_PAYLOAD;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	apex_log_set_level(APEX_LOG_ERROR);
	for (int i = 0; i < SET_COUNT; i++) {
		if (apex_zonetable_init(&tables[i]) != APEX_OK)
			abort();
	}
	fuzz_load(&tables[SET_NSEC], "root.zone", ".");
	fuzz_load(&tables[SET_NSEC], "fj.zone", "fj.");
	fuzz_load(&tables[SET_NSEC], "example.nsec.zone", "example.");
	fuzz_load(&tables[SET_NSEC3], "root.zone", ".");
	fuzz_load(&tables[SET_NSEC3], "example.nsec3.zone", "example.");
	for (int i = 0; i < SET_COUNT; i++) {
		unsigned long long generation;
		sets[i] = apex_zonetable_acquire(&tables[i], &generation);
		if (sets[i] == NULL)
			abort();
	}

	apex_answer_config_init(&configs[0]);
	apex_answer_config_init(&configs[1]);
	static const uint8_t nsid[] = "ns1.fuzz.apex.example";
	configs[1].edns_payload = 4096;
	configs[1].nsid = nsid;
	configs[1].nsid_size = sizeof(nsid) - 1;
	configs[1].chaos_id = "ns1.fuzz.apex.example";
	/* Longer than one TXT string: apex must cut it at 255. */
	static char version[400];
	memset(version, 'v', sizeof(version) - 1);
	configs[1].chaos_version = version;
	static const uint8_t cookie_secret[16] = "fuzz-cookie-key";
	configs[1].cookie_secret = cookie_secret;
	for (int i = 0; i < SET_COUNT; i++) {
		for (int c = 0; c < 2; c++) {
			workers[i][c] = aligned_alloc(64, sizeof(apex_worker_t));
			if (workers[i][c] == NULL ||
			    apex_worker_init(workers[i][c], 0, &tables[i], &configs[c], &rrl_config,
					     1) != APEX_OK)
				abort();
		}
	}
	for (int i = 0; i < 2; i++)
		udp_buf[i] = fuzz_buffer(udp_capacity(&configs[i]));
	tcp_buf = fuzz_buffer(APEX_MAX_MESSAGE);
	return 0;
}

/* The client: IPv6 when the second ID byte is odd, else IPv4, its last
 * byte the second ID byte. */
static void client_address(const uint8_t *data, size_t size, struct sockaddr_storage *peer)
{
	uint8_t b = size > 1 ? data[1] : 0;
	memset(peer, 0, sizeof(*peer));
	if (b & 1) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)peer;
		in6->sin6_family = AF_INET6;
		in6->sin6_addr.s6_addr[0] = 0x20;
		in6->sin6_addr.s6_addr[1] = 0x01;
		in6->sin6_addr.s6_addr[15] = b;
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)peer;
		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(0xc0000200u | b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > APEX_MAX_MESSAGE)
		return 0; /* cannot arrive in one message, over UDP or TCP */
	int which = size > 0 ? data[0] & 1 : 0;
	const apex_answer_config_t *cfg = &configs[which];
	struct sockaddr_storage peer;
	client_address(data, size, &peer);
	for (int s = 0; s < SET_COUNT; s++) {
		apex_worker_t *worker = workers[s][which];
		apex_answer_info_t info;
		apex_worker_batch(worker, false);
		size_t cap = udp_capacity(cfg);
		uint8_t *udp = udp_buf[which];
		size_t udp_size = apex_worker_answer(worker, APEX_TRANSPORT_UDP, &peer, data, size,
						     udp, cap, &info);
		fuzz_check_response(data, size, cfg, APEX_TRANSPORT_UDP, udp, udp_size, cap, &info);

		size_t tcp_size = apex_worker_answer(worker, APEX_TRANSPORT_TCP, &peer, data, size,
						     tcp_buf, APEX_MAX_MESSAGE, &info);
		bool edns = fuzz_check_response(data, size, cfg, APEX_TRANSPORT_TCP, tcp_buf,
						tcp_size, APEX_MAX_MESSAGE, &info);

		/* A TCP response that fits the UDP limit is what UDP must send
		 * too, byte for byte: the limit may only cut, never change.
		 * With EDNS, only when ldns reads the requestor's payload;
		 * Transfers differ on purpose: AXFR is NOTIMP over UDP and REFUSED
		 * over TCP, IXFR over UDP answered per RFC 1995 and REFUSED over
		 * TCP (where the daemon's transfer threads answer it). */
		if (tcp_size > 0 && info.qtype != 252 && info.qtype != 251 &&
		    (!edns || fuzz_query_payload(data, size) != 0)) {
			size_t limit = fuzz_udp_limit(data, size, cfg, edns);
			if (tcp_size <= limit &&
			    (udp_size != tcp_size || memcmp(udp, tcp_buf, tcp_size) != 0))
				fuzz_fail(udp, udp_size,
					  "the %zu-byte TCP response fits in UDP (limit %zu) but "
					  "UDP differs",
					  tcp_size, limit);
		}
	}
	return 0;
}
