/* SPDX-License-Identifier: BSD-3-Clause */
/* Load and attach the XDP program (program.h). */
#include "program.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>

#include "filter_object.h"
#include "util/error.h"
#include "util/log.h"

/* libbpf's own messages: its warnings are apexd's debug lines, since the
 * failure that matters is reported by the caller with its reason. */
static int libbpf_message(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = '\0';
	apex_debug("libbpf: %s", line);
	return 0;
}

/* Open and load the built-in object, with the served ports in its map. */
static int load(apex_xdp_program_t *prog, const uint16_t *ports, size_t count, char *err,
		size_t err_size)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "apex_xdp");
	int rc;

	libbpf_set_print(libbpf_message);
	prog->object =
		bpf_object__open_mem(apex_xdp_filter_object, apex_xdp_filter_object_size, &opts);
	if (prog->object == NULL) {
		rc = apex_errno();
		prog->object = NULL;
		return apex_fail(err, err_size, rc, "cannot open the XDP program: %s",
				 apex_strerror(rc));
	}
	if ((rc = bpf_object__load(prog->object)) < 0)
		return apex_fail(err, err_size, rc,
				 "cannot load the XDP program: %s (needs CAP_BPF and "
				 "CAP_NET_ADMIN, or root)",
				 apex_strerror(rc));
	prog->xsks_fd = bpf_object__find_map_fd_by_name(prog->object, "apex_xsks");
	prog->passed_fd = bpf_object__find_map_fd_by_name(prog->object, "apex_passed");
	int ports_fd = bpf_object__find_map_fd_by_name(prog->object, "apex_ports");
	if (prog->xsks_fd < 0 || prog->passed_fd < 0 || ports_fd < 0)
		return apex_fail(err, err_size, APEX_EINVAL, "the XDP program lacks its maps");
	for (size_t i = 0; i < count; i++) {
		uint16_t key = htons(ports[i]);
		uint8_t one = 1;

		if (bpf_map_update_elem(ports_fd, &key, &one, BPF_ANY) < 0) {
			rc = apex_errno();
			return apex_fail(err, err_size, rc, "XDP program: port %u: %s", ports[i],
					 apex_strerror(rc));
		}
	}
	return APEX_OK;
}

int apex_xdp_program_attach(apex_xdp_program_t *prog, const char *ifname, const uint16_t *ports,
			    size_t count, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	int rc;

	memset(prog, 0, sizeof(*prog));
	prog->xsks_fd = prog->passed_fd = -1;
	prog->ifindex = (int)if_nametoindex(ifname);
	if (prog->ifindex == 0)
		return apex_fail(err, err_size, APEX_ENOENT, "no interface %s", ifname);
	if ((rc = load(prog, ports, count, err, err_size)) < 0) {
		apex_xdp_program_detach(prog);
		return rc;
	}
	struct bpf_program *entry = bpf_object__find_program_by_name(prog->object, "apex_xdp");
	prog->link = entry != NULL ? bpf_program__attach_xdp(entry, prog->ifindex) : NULL;
	if (prog->link == NULL) {
		rc = apex_errno();
		apex_xdp_program_detach(prog);
		return apex_fail(err, err_size, rc, "cannot attach the XDP program to %s: %s%s",
				 ifname, apex_strerror(rc),
				 rc == -EBUSY ? " (another XDP program is attached to it)" : "");
	}
	if (bpf_xdp_query(prog->ifindex, 0, &query) == 0)
		prog->native = query.attach_mode == XDP_ATTACHED_DRV ||
			       query.attach_mode == XDP_ATTACHED_HW;
	return APEX_OK;
}

int apex_xdp_program_add_socket(apex_xdp_program_t *prog, unsigned queue, int fd)
{
	uint32_t key = queue, value = (uint32_t)fd;

	if (queue >= APEX_XDP_QUEUES_MAX)
		return APEX_EINVAL;
	if (bpf_map_update_elem(prog->xsks_fd, &key, &value, BPF_ANY) < 0)
		return apex_errno();
	return APEX_OK;
}

uint64_t apex_xdp_program_passed(const apex_xdp_program_t *prog, unsigned queue)
{
	int cpus = libbpf_num_possible_cpus();
	uint32_t key = queue;
	uint64_t sum = 0;

	if (prog->passed_fd < 0 || cpus <= 0 || cpus > 4096)
		return 0;
	uint64_t values[cpus];
	if (bpf_map_lookup_elem(prog->passed_fd, &key, values) < 0)
		return 0;
	for (int i = 0; i < cpus; i++)
		sum += values[i];
	return sum;
}

void apex_xdp_program_detach(apex_xdp_program_t *prog)
{
	if (prog->link != NULL)
		bpf_link__destroy(prog->link); /* the kernel detaches the program */
	if (prog->object != NULL)
		bpf_object__close(prog->object);
	memset(prog, 0, sizeof(*prog));
	prog->xsks_fd = prog->passed_fd = -1;
}
