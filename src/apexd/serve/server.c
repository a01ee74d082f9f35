/* SPDX-License-Identifier: BSD-3-Clause */
/* The apexd server: zones, worker threads, statistics. */
#ifdef HAVE_CONFIG_H
#include <config.h> /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "serve/server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/name.h"
#include "dns/wire.h"
#include "serve/listen_socket.h"
#include "process/quiet_thread.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/chain_sweep.h"
#include "zone/page_discard.h"

int apex_server_init(apex_server_t *server, const apex_config_t *cfg, unsigned workers)
{
	int rc;

	memset(server, 0, sizeof(*server));
	server->config = cfg;
	apex_answer_config_init(&server->answer_config);
	server->answer_config.edns_payload = cfg->edns_payload;
	server->answer_config.nsid = cfg->nsid;
	server->answer_config.nsid_size = (uint16_t)cfg->nsid_size;
	server->answer_config.chaos_id = cfg->identity;
	server->answer_config.chaos_version = cfg->version;
	/* Server cookies: the configured secret, or a random one (cookies
	 * then survive no restart, and are not shared with other servers). */
	if (cfg->cookies) {
		if (cfg->cookie_secret_set)
			memcpy(server->cookie_secret, cfg->cookie_secret,
			       sizeof(server->cookie_secret));
		else if ((rc = apex_random_bytes(server->cookie_secret,
						 sizeof(server->cookie_secret))) < 0)
			return rc;
		server->answer_config.cookie_secret = server->cookie_secret;
		if (cfg->cookie_staging_secret_set)
			server->answer_config.cookie_staging_secret = cfg->cookie_staging_secret;
		server->answer_config.require_cookie = cfg->require_cookie;
	}
	if ((rc = apex_tcp_shared_init(&server->tcp, cfg)) < 0)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &server->started);
	clock_gettime(CLOCK_REALTIME, &server->started_wall);

	rc = apex_zonetable_init(&server->zonetable);
	if (rc < 0)
		return rc;
	server->zonetable_ready = true;

	server->worker_count = workers;
	server->workers = aligned_alloc(64, sizeof(apex_worker_thread_t) * workers);
	if (server->workers == NULL)
		return APEX_ENOMEM;
	memset(server->workers, 0, sizeof(apex_worker_thread_t) * workers);
	for (unsigned i = 0; i < workers; i++) {
		server->workers[i].server = server;
		rc = apex_worker_init(&server->workers[i].worker, i, &server->zonetable,
				      &server->answer_config, &cfg->rrl, workers);
		if (rc < 0)
			return rc;
	}
	return APEX_OK;
}

/* ---------------------------------------------------------------- sockets and workers */

/* The UDP buffer sizes the kernel gave (every socket gets the same), and
 * a warning when it gave less than asked: what a reload or a burst can
 * hold without loss depends on them. */
static void note_buffers(apex_server_t *server, int fd)
{
	const apex_config_t *cfg = server->config;

	apex_socket_buffers_get(fd, &server->udp_receive_buffer, &server->udp_send_buffer);
	/* the kernel reports twice the size set */
	if (cfg->receive_buffer_size > 0 &&
	    server->udp_receive_buffer < 2 * cfg->receive_buffer_size)
		apex_warning("udp receive buffers: %zu bytes asked, the kernel gave %zu: run apexd "
			     "as root (it forces them before dropping privileges) or raise "
			     "net.core.rmem_max (sysctl)",
			     cfg->receive_buffer_size, server->udp_receive_buffer / 2);
	if (cfg->send_buffer_size > 0 && server->udp_send_buffer < 2 * cfg->send_buffer_size)
		apex_warning("udp send buffers: %zu bytes asked, the kernel gave %zu: run apexd as "
			     "root or raise net.core.wmem_max (sysctl)",
			     cfg->send_buffer_size, server->udp_send_buffer / 2);
}

void apex_server_open_xdp(apex_server_t *server)
{
	const apex_config_t *cfg = server->config;
	size_t answer_capacity =
		cfg->edns_payload > APEX_MIN_UDP_PAYLOAD ? cfg->edns_payload : APEX_MIN_UDP_PAYLOAD;

	if (server->config->xdp_interface == NULL ||
	    !apex_xdp_service_attach(&server->xdp, server->config))
		return;
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_thread_t *wt = &server->workers[w];

		if (apex_xdp_worker_open(&server->xdp, &wt->xdp, &wt->worker, answer_capacity) <
		    0) {
			for (unsigned i = 0; i <= w; i++)
				apex_xdp_worker_close(&server->workers[i].xdp);
			apex_xdp_service_detach(&server->xdp);
			return;
		}
	}
	apex_xdp_service_log(&server->xdp, server->worker_count);
}

int apex_server_open_tls(apex_server_t *server)
{
	char err[512];

	if (!apex_tls_service_wanted(server->config))
		return APEX_OK;
	server->tls_ready = true;
	int rc = apex_tls_service_init(&server->tls, server->config, err, sizeof(err));
	if (rc < 0) {
		apex_error("tls: %s", err);
		return rc;
	}
	server->tcp.tls = &server->tls;
	return APEX_OK;
}

int apex_server_open_sockets(apex_server_t *server)
{
	const apex_config_t *cfg = server->config;
	size_t n = cfg->listen_count;
	size_t answer_capacity =
		cfg->edns_payload > APEX_MIN_UDP_PAYLOAD ? cfg->edns_payload : APEX_MIN_UDP_PAYLOAD;
	int *udp_fds = calloc(n, sizeof(int));
	bool *udp_proxy = calloc(n, sizeof(bool));
	int *tcp_fds = calloc(n, sizeof(int));
	apex_listen_transport_t *transports = calloc(n, sizeof(*transports));
	char err[256];
	int rc = APEX_OK;

	if (udp_fds == NULL || udp_proxy == NULL || tcp_fds == NULL || transports == NULL) {
		free(udp_fds);
		free(udp_proxy);
		free(tcp_fds);
		free(transports);
		return APEX_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		transports[i] = cfg->listens[i].transport;
	for (unsigned w = 0; w < server->worker_count && rc == APEX_OK; w++) {
		apex_worker_thread_t *wt = &server->workers[w];
		size_t udp_open = 0, tcp_open = 0;

		for (size_t i = 0; i < n; i++) {
			int fd = 0;

			/* TLS listeners are TCP only (RFC 7858) */
			if (transports[i] == APEX_LISTEN_PLAIN)
				fd = apex_udp_socket_open(&cfg->listens[i],
							  cfg->receive_buffer_size,
							  cfg->send_buffer_size, err, sizeof(err));
			if (fd < 0) {
				apex_error("%s", err);
				rc = fd;
				break;
			}
			if (w == 0 && udp_open == 0 && transports[i] == APEX_LISTEN_PLAIN)
				note_buffers(server, fd);
			if (transports[i] == APEX_LISTEN_PLAIN) {
				udp_proxy[udp_open] = cfg->listens[i].proxy;
				udp_fds[udp_open++] = fd;
			}
			fd = apex_tcp_socket_open(&cfg->listens[i], err, sizeof(err));
			if (fd < 0) {
				apex_error("%s", err);
				rc = fd;
				break;
			}
			tcp_fds[tcp_open++] = fd;
		}
		if (rc < 0) {
			for (size_t i = 0; i < udp_open; i++)
				close(udp_fds[i]);
			for (size_t i = 0; i < tcp_open; i++)
				close(tcp_fds[i]);
			break;
		}
		/* from here the worker owns the fds, even if init fails */
		rc = apex_udp_worker_init(&wt->udp, &wt->worker, udp_fds, udp_proxy, udp_open,
					  answer_capacity);
		wt->udp.allow_proxy = cfg->allow_proxy;
		wt->udp.allow_proxy_count = cfg->allow_proxy_count;
		int rc2 = apex_tcp_worker_init(&wt->tcp, &wt->worker, &server->tcp, tcp_fds,
					       cfg->listens, n);
		if (rc == APEX_OK)
			rc = rc2;
		if (rc < 0)
			apex_error("worker %u: %s", w, apex_strerror(rc));
	}
	free(udp_fds);
	free(udp_proxy);
	free(tcp_fds);
	free(transports);
	return rc;
}

static void on_stop(uv_async_t *async)
{
	apex_worker_thread_t *worker = async->data;

	apex_udp_worker_stop(&worker->udp);
	apex_tcp_worker_stop(&worker->tcp);
	apex_xdp_worker_stop(&worker->xdp);
	uv_close((uv_handle_t *)async, NULL);
	apex_loop_wakeup_close(&worker->wake);
}

/* A zoneset was published: pick it up now, even with no query to answer. */
static void on_wake(apex_loop_wakeup_t *wake)
{
	apex_worker_thread_t *worker = wake->data;

	apex_worker_batch(&worker->worker, false);
}

static void *worker_main(void *arg)
{
	apex_worker_thread_t *worker = arg;

	pthread_setname_np(pthread_self(), "apexd-worker");
	/* runs until on_stop() has closed every handle of the loop */
	uv_run(&worker->loop, UV_RUN_DEFAULT);
	return NULL;
}

/*
 * Set up a worker's loop and handles on the calling thread, before its
 * own thread exists (pthread_create orders these writes before the
 * thread's first read), so that every start-up error is reported here.
 */
static int worker_prepare(apex_worker_thread_t *worker)
{
	int rc = uv_loop_init(&worker->loop);

	if (rc < 0) {
		apex_error("worker %u: loop: %s", worker->worker.index, apex_strerror(rc));
		return rc;
	}
	worker->loop_ready = true;
	worker->stop_async.data = worker;
	rc = uv_async_init(&worker->loop, &worker->stop_async, on_stop);
	if (rc < 0) {
		apex_error("worker %u: async: %s", worker->worker.index, apex_strerror(rc));
		return rc;
	}
	worker->async_ready = true;
	rc = apex_loop_wakeup_init(&worker->wake, &worker->loop, on_wake, worker);
	if (rc < 0) {
		apex_error("worker %u: wake-up: %s", worker->worker.index, apex_strerror(rc));
		return rc;
	}
	/* the zones published before the start */
	apex_worker_batch(&worker->worker, false);
	if ((rc = apex_udp_worker_start(&worker->udp, &worker->loop)) < 0)
		return rc;
	if ((rc = apex_xdp_worker_start(&worker->xdp, &worker->loop)) < 0)
		return rc;
	return apex_tcp_worker_start(&worker->tcp, &worker->loop);
}

int apex_server_start(apex_server_t *server)
{
	int rc = APEX_OK;

	for (unsigned w = 0; w < server->worker_count; w++) {
		rc = worker_prepare(&server->workers[w]);
		if (rc < 0)
			return rc;
	}
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_thread_t *worker = &server->workers[w];

		rc = apex_quiet_thread_start(&worker->thread, worker_main, worker);
		if (rc < 0) {
			apex_error("worker %u: thread: %s", w, apex_strerror(rc));
			break;
		}
		worker->thread_started = true;
	}
	return rc;
}

void apex_server_stop(apex_server_t *server)
{
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_thread_t *worker = &server->workers[w];

		if (worker->thread_started)
			uv_async_send(&worker->stop_async);
	}
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_thread_t *worker = &server->workers[w];

		if (worker->thread_started) {
			pthread_join(worker->thread, NULL);
			worker->thread_started = false;
		}
	}
}

void apex_server_destroy(apex_server_t *server)
{
	/* the program first: the kernel stops redirecting to the sockets */
	apex_xdp_service_detach(&server->xdp);
	for (unsigned w = 0; server->workers != NULL && w < server->worker_count; w++) {
		apex_worker_thread_t *worker = &server->workers[w];

		if (worker->loop_ready) {
			/* a worker that never ran still has handles: close them here */
			if (worker->async_ready &&
			    !uv_is_closing((uv_handle_t *)&worker->stop_async))
				on_stop(&worker->stop_async);
			uv_run(&worker->loop, UV_RUN_DEFAULT);
			if (uv_loop_close(&worker->loop) != 0)
				apex_warning("worker %u: loop still has handles at exit", w);
		}
		apex_loop_wakeup_free(&worker->wake);
		apex_udp_worker_free(&worker->udp);
		apex_tcp_worker_free(&worker->tcp);
		apex_xdp_worker_close(&worker->xdp);
		apex_worker_free(&worker->worker);
	}
	free(server->workers);
	apex_tcp_shared_free(&server->tcp);
	if (server->tls_ready)
		apex_tls_service_free(&server->tls);
	if (server->zonetable_ready)
		apex_zonetable_destroy(&server->zonetable);
	memset(server, 0, sizeof(*server));
}

void apex_server_wake_workers(apex_server_t *server)
{
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_thread_t *worker = &server->workers[w];

		/* thread_started is written only by the main thread before the
		 * control and reload threads exist and after they are gone */
		if (worker->thread_started)
			apex_loop_wakeup_send(&worker->wake);
	}
}

/* The node pages of old (replaced and released) that the version derived
 * from it replaced, given back (zone/page_discard.h).  That version is the
 * one served, or one of its bases when more were published since. */
static void discard_replaced(apex_server_t *server, apex_zone_t *old)
{
	apex_zone_t *served = apex_server_served_version(server, old->origin);
	const apex_zone_t *successor = served;

	while (successor != NULL && successor->base != old)
		successor = successor->base;
	if (successor != NULL) {
		apex_zone_discard_replaced(old, successor);
		/* a part built again: what it replaced, records among it */
		if (successor->sweeps_base) {
			size_t swept = apex_zone_sweep_chain(old, successor, served);
			apex_debug("serial %u: %.1f MiB of its chain no version reads given back, "
				   "%.1f MiB held beyond its whole build",
				   successor->serial, (double)swept / 1048576.0,
				   (double)apex_zone_chain_memory(successor) / 1048576.0);
		}
	}
	apex_zone_unref(served);
}

void apex_server_retire(apex_server_t *server, apex_zone_t *old, bool workers_run)
{
	if (old == NULL)
		return;
	if (workers_run) {
		int ms = 0;

		apex_server_wake_workers(server);
		for (; ms < APEX_SERVER_RELEASE_WAIT_MS; ms++) {
			/* the caller's reference, and those of versions derived
			 * from it, which share its memory (zone/derive.h) */
			if (atomic_load_explicit(&old->refcount, memory_order_acquire) ==
			    1 + atomic_load_explicit(&old->base_refs, memory_order_acquire))
				break;
			usleep(1000);
		}
		/* Only versions derived from it hold it now: the memory of its
		 * name index, which they do not use, goes at once, and so do
		 * the node pages its successor replaced. */
		if (ms < APEX_SERVER_RELEASE_WAIT_MS) {
			apex_zone_release_index(old);
			discard_replaced(server, old);
		}
		if (ms == APEX_SERVER_RELEASE_WAIT_MS) {
			char name[APEX_NAME_MAX * 4 + 1];

			apex_warning(
				"zone %s: serial %u, replaced, is still in use after %d ms "
				"(an outgoing transfer of it?); it is freed when its last user "
				"lets go",
				apex_name_to_str(old->origin, name, sizeof(name)), old->serial,
				APEX_SERVER_RELEASE_WAIT_MS);
		}
	}
	apex_zone_unref(old);
}

apex_zone_t *apex_server_served_version(apex_server_t *server, const uint8_t *origin)
{
	apex_zoneset_t *set = apex_zonetable_acquire(&server->zonetable, NULL);
	apex_zone_t *zone = apex_zoneset_get(set, origin);

	if (zone != NULL)
		apex_zone_ref(zone);
	apex_zoneset_release(set);
	return zone;
}

/* ---------------------------------------------------------------- statistics */

void apex_server_stats(const apex_server_t *server, apex_stats_totals_t *per_worker,
		       apex_stats_totals_t *total)
{
	memset(total, 0, sizeof(*total));
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_stats_totals_t one;

		apex_stats_snapshot(&server->workers[w].worker.stats, &one);
		apex_xdp_worker_kernel_counts(&server->xdp, &server->workers[w].xdp,
					      &one.xdp_passed, &one.xdp_kernel_drops);
		if (per_worker != NULL)
			per_worker[w] = one;
		apex_stats_add(total, &one);
	}
}

void apex_server_log_stats(const apex_server_t *server)
{
	apex_stats_totals_t total;
	apex_ctl_buf_t line;

	apex_server_stats(server, NULL, &total);
	apex_ctl_buf_init(&line, 4096);
	apex_stats_summary(&line, &total);
	if (!line.failed)
		apex_info("%s", line.data);
	apex_ctl_buf_free(&line);
}

double apex_server_uptime(const apex_server_t *server)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - server->started.tv_sec) +
	       (double)(now.tv_nsec - server->started.tv_nsec) / 1e9;
}
