/* The apexd server: zones, worker threads, statistics. */
#ifdef HAVE_CONFIG_H
#include <config.h>  /* autoconf's, from the build directory: _GNU_SOURCE */
#endif
#include "server.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dns/wire.h"
#include "util/error.h"
#include "util/log.h"
#include "zone/load.h"

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
	atomic_init(&server->tcp_connections, 0);

	rc = apex_zonetable_init(&server->zonetable);
	if (rc < 0)
		return rc;
	server->zonetable_ready = true;

	server->worker_count = workers;
	server->workers = aligned_alloc(64, sizeof(apex_worker_t) * workers);
	if (server->workers == NULL)
		return APEX_ENOMEM;
	memset(server->workers, 0, sizeof(apex_worker_t) * workers);
	for (unsigned i = 0; i < workers; i++) {
		server->workers[i].server = server;
		server->workers[i].index = i;
	}
	return APEX_OK;
}

/* ---------------------------------------------------------------- zones */

typedef struct zone_job {
	apex_server_t *server;
	atomic_size_t next;         /* next zone index to load */
	apex_zone_t **loaded;       /* per zone: the new version or NULL */
} zone_job_t;

static void load_one(const apex_zone_config_t *zc, apex_zone_t **out)
{
	char err[512];
	int rc = apex_zone_load(zc->file, zc->origin, out, err, sizeof(err));

	if (rc < 0) {
		*out = NULL;
		apex_error("zone %s not served: %s", zc->name, err[0] != '\0' ? err : apex_strerror(rc));
		return;
	}
	apex_info("zone %s loaded from %s: serial %u, %zu records, %.3f s, %.1f MiB", zc->name,
		  zc->file, (*out)->serial, (*out)->record_count, (*out)->load_seconds,
		  (double)(*out)->memory / (1024.0 * 1024.0));
}

static void *zone_loader(void *arg)
{
	zone_job_t *job = arg;
	const apex_config_t *cfg = job->server->config;

	for (;;) {
		size_t i = atomic_fetch_add(&job->next, 1);

		if (i >= cfg->zone_count)
			break;
		load_one(&cfg->zones[i], &job->loaded[i]);
	}
	return NULL;
}

/*
 * Load all configured zones into job->loaded, with up to one thread per
 * CPU when there are several zones (each load is independent).
 */
static int load_all(apex_server_t *server, apex_zone_t **loaded)
{
	const apex_config_t *cfg = server->config;
	zone_job_t job = { .server = server, .loaded = loaded };
	size_t threads = apex_config_cpu_count();
	pthread_t *tids;
	size_t started = 0;

	atomic_init(&job.next, 0);
	if (threads > cfg->zone_count)
		threads = cfg->zone_count;
	if (threads <= 1) {
		zone_loader(&job);
		return APEX_OK;
	}
	tids = calloc(threads, sizeof(*tids));
	if (tids == NULL)
		return APEX_ENOMEM;
	for (size_t t = 0; t < threads; t++) {
		if (pthread_create(&tids[t], NULL, zone_loader, &job) != 0)
			break;
		started++;
	}
	if (started == 0)
		zone_loader(&job);  /* no thread could start: load here */
	for (size_t t = 0; t < started; t++)
		pthread_join(tids[t], NULL);
	free(tids);
	return APEX_OK;
}

/* Publish the versions that loaded; returns how many were published. */
static size_t publish_all(apex_server_t *server, apex_zone_t **loaded)
{
	const apex_config_t *cfg = server->config;
	size_t published = 0;

	for (size_t i = 0; i < cfg->zone_count; i++) {
		int rc;

		if (loaded[i] == NULL)
			continue;
		rc = apex_zonetable_publish(&server->zonetable, loaded[i]);
		if (rc < 0) {
			apex_error("zone %s not served: %s", cfg->zones[i].name, apex_strerror(rc));
			apex_zone_unref(loaded[i]);
			continue;
		}
		published++;
	}
	return published;
}

int apex_server_load_zones(apex_server_t *server, size_t *loaded_count)
{
	const apex_config_t *cfg = server->config;
	apex_zone_t **loaded;
	int rc;

	*loaded_count = 0;
	if (cfg->zone_count == 0)
		return APEX_OK;
	loaded = calloc(cfg->zone_count, sizeof(*loaded));
	if (loaded == NULL)
		return APEX_ENOMEM;
	rc = load_all(server, loaded);
	if (rc == APEX_OK)
		*loaded_count = publish_all(server, loaded);
	free(loaded);
	return rc;
}

void apex_server_reload_zones(apex_server_t *server)
{
	const apex_config_t *cfg = server->config;
	apex_zone_t **loaded;
	size_t published;

	apex_info("reloading %zu zone(s)", cfg->zone_count);
	loaded = calloc(cfg->zone_count > 0 ? cfg->zone_count : 1, sizeof(*loaded));
	if (loaded == NULL) {
		apex_error("reload: out of memory");
		return;
	}
	/* a zone that fails to load keeps its current version (load_one logged why) */
	if (load_all(server, loaded) < 0)
		apex_error("reload: out of memory");
	published = publish_all(server, loaded);
	free(loaded);
	apex_info("reload done: %zu of %zu zone(s) replaced", published, cfg->zone_count);
}

/* ---------------------------------------------------------------- sockets and workers */

int apex_server_open_sockets(apex_server_t *server)
{
	const apex_config_t *cfg = server->config;
	size_t n = cfg->listen_count;
	size_t answer_capacity = cfg->edns_payload > APEX_MIN_UDP_PAYLOAD ? cfg->edns_payload
									   : APEX_MIN_UDP_PAYLOAD;
	int *udp_fds = calloc(n, sizeof(int));
	int *tcp_fds = calloc(n, sizeof(int));
	char err[256];
	int rc = APEX_OK;

	if (udp_fds == NULL || tcp_fds == NULL) {
		free(udp_fds);
		free(tcp_fds);
		return APEX_ENOMEM;
	}
	for (unsigned w = 0; w < server->worker_count && rc == APEX_OK; w++) {
		apex_worker_t *worker = &server->workers[w];
		size_t udp_open = 0, tcp_open = 0;

		for (size_t i = 0; i < n; i++) {
			int fd = apex_udp_socket_open(&cfg->listens[i], err, sizeof(err));

			if (fd < 0) {
				apex_error("%s", err);
				rc = fd;
				break;
			}
			udp_fds[udp_open++] = fd;
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
		rc = apex_udp_worker_init(&worker->udp, worker, udp_fds, n, answer_capacity);
		int rc2 = apex_tcp_worker_init(&worker->tcp, worker, tcp_fds, n);
		if (rc == APEX_OK)
			rc = rc2;
		if (rc < 0)
			apex_error("worker %u: %s", w, apex_strerror(rc));
	}
	free(udp_fds);
	free(tcp_fds);
	return rc;
}

static void on_stop(uv_async_t *async)
{
	apex_worker_t *worker = async->data;

	apex_udp_worker_stop(&worker->udp);
	apex_tcp_worker_stop(&worker->tcp);
	uv_close((uv_handle_t *)async, NULL);
}

static void *worker_main(void *arg)
{
	apex_worker_t *worker = arg;

	/* runs until on_stop() has closed every handle of the loop */
	uv_run(&worker->loop, UV_RUN_DEFAULT);
	return NULL;
}

/*
 * Set up a worker's loop and handles on the calling thread, before its
 * own thread exists (pthread_create orders these writes before the
 * thread's first read), so that every start-up error is reported here.
 */
static int worker_prepare(apex_worker_t *worker)
{
	int rc = uv_loop_init(&worker->loop);

	if (rc < 0) {
		apex_error("worker %u: loop: %s", worker->index, uv_strerror(rc));
		return APEX_EIO;
	}
	worker->loop_ready = true;
	worker->stop_async.data = worker;
	rc = uv_async_init(&worker->loop, &worker->stop_async, on_stop);
	if (rc < 0) {
		apex_error("worker %u: async: %s", worker->index, uv_strerror(rc));
		return APEX_EIO;
	}
	worker->async_ready = true;
	worker->zones = apex_zonetable_acquire(&worker->server->zonetable, &worker->generation);
	if ((rc = apex_udp_worker_start(&worker->udp, &worker->loop)) < 0)
		return rc;
	return apex_tcp_worker_start(&worker->tcp, &worker->loop);
}

int apex_server_start(apex_server_t *server)
{
	sigset_t all, old;
	int rc = APEX_OK;

	for (unsigned w = 0; w < server->worker_count; w++) {
		rc = worker_prepare(&server->workers[w]);
		if (rc < 0)
			return rc;
	}
	/* workers take no signals: the main thread waits for them (main.c) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_t *worker = &server->workers[w];
		int err = pthread_create(&worker->thread, NULL, worker_main, worker);

		if (err != 0) {
			apex_error("worker %u: thread: %s", w, strerror(err));
			rc = APEX_EIO;
			break;
		}
		worker->thread_started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void apex_server_stop(apex_server_t *server)
{
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_t *worker = &server->workers[w];

		if (worker->thread_started)
			uv_async_send(&worker->stop_async);
	}
	for (unsigned w = 0; w < server->worker_count; w++) {
		apex_worker_t *worker = &server->workers[w];

		if (worker->thread_started) {
			pthread_join(worker->thread, NULL);
			worker->thread_started = false;
		}
	}
}

void apex_server_destroy(apex_server_t *server)
{
	for (unsigned w = 0; server->workers != NULL && w < server->worker_count; w++) {
		apex_worker_t *worker = &server->workers[w];

		if (worker->loop_ready) {
			/* a worker that never ran still has handles: close them here */
			if (worker->async_ready && !uv_is_closing((uv_handle_t *)&worker->stop_async))
				on_stop(&worker->stop_async);
			uv_run(&worker->loop, UV_RUN_DEFAULT);
			if (uv_loop_close(&worker->loop) != 0)
				apex_warning("worker %u: loop still has handles at exit", w);
		}
		apex_udp_worker_free(&worker->udp);
		apex_tcp_worker_free(&worker->tcp);
		if (worker->zones != NULL)
			apex_zoneset_release(worker->zones);
	}
	free(server->workers);
	if (server->zonetable_ready)
		apex_zonetable_destroy(&server->zonetable);
	memset(server, 0, sizeof(*server));
}

/* ---------------------------------------------------------------- statistics */

void apex_server_stats(const apex_server_t *server, apex_stats_totals_t *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned w = 0; w < server->worker_count; w++) {
		const apex_worker_stats_t *s = &server->workers[w].stats;

#define SUM(field) out->field += atomic_load_explicit(&s->field, memory_order_relaxed)
		SUM(udp_queries);
		SUM(tcp_queries);
		SUM(truncated);
		SUM(dropped);
		SUM(tcp_connections);
		SUM(tcp_rejected);
		SUM(tcp_timeouts);
		for (int r = 0; r < APEX_STATS_RCODES; r++)
			SUM(rcode[r]);
#undef SUM
	}
}

void apex_server_log_stats(const apex_server_t *server)
{
	static const char *const names[APEX_STATS_RCODES] = {
		[0] = "NOERROR", [1] = "FORMERR", [2] = "SERVFAIL", [3] = "NXDOMAIN",
		[4] = "NOTIMP", [5] = "REFUSED", [9] = "NOTAUTH", [16] = "BADVERS",
		[APEX_STATS_RCODES - 1] = "other",
	};
	apex_stats_totals_t t;
	char rcodes[512];
	size_t len = 0;

	apex_server_stats(server, &t);
	rcodes[0] = '\0';
	for (int r = 0; r < APEX_STATS_RCODES; r++) {
		char unnamed[24];
		const char *name = names[r];

		if (t.rcode[r] == 0)
			continue;
		if (name == NULL) {
			snprintf(unnamed, sizeof(unnamed), "RCODE%d", r);
			name = unnamed;
		}
		int n = snprintf(rcodes + len, sizeof(rcodes) - len, " %s=%llu", name,
				 (unsigned long long)t.rcode[r]);
		if (n < 0 || (size_t)n >= sizeof(rcodes) - len)
			break;
		len += (size_t)n;
	}
	apex_info("queries: udp=%llu tcp=%llu; responses:%s%s; truncated=%llu dropped=%llu; "
		  "tcp connections=%llu rejected=%llu timed-out=%llu",
		  (unsigned long long)t.udp_queries, (unsigned long long)t.tcp_queries,
		  len > 0 ? rcodes : " none", "", (unsigned long long)t.truncated,
		  (unsigned long long)t.dropped, (unsigned long long)t.tcp_connections,
		  (unsigned long long)t.tcp_rejected, (unsigned long long)t.tcp_timeouts);
}
