/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP program (filter.bpf.c) on one interface: loaded from the
 * object built into apexd, told the served UDP ports, attached through a
 * BPF link, and given the AF_XDP socket of each receive queue.
 *
 * A BPF link is used rather than the older netlink attachment because
 * the kernel detaches the program when the last file descriptor of the
 * link is closed: when apexd exits, however it exits, and without the
 * privileges it dropped after start.  The kernel attaches it in the
 * driver (native mode) when the driver supports XDP, and in the generic
 * mode otherwise.
 */
#ifndef APEX_XDP_PROGRAM_H
#define APEX_XDP_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;
struct bpf_link;

/* The queue count the program's socket map holds */
#define APEX_XDP_QUEUES_MAX 256

typedef struct apex_xdp_program {
	struct bpf_object *object;
	struct bpf_link *link;
	int xsks_fd;   /* map: queue -> AF_XDP socket */
	int passed_fd; /* map: per queue and CPU, frames passed to the kernel */
	int ifindex;
	bool native; /* attached in the driver, not in the generic mode */
} apex_xdp_program_t;

/*
 * Load the program, let it take UDP to ports[0..count) (host order), and
 * attach it to the interface ifname.  Returns 0, or a negative apex code
 * with the reason in err; on failure nothing is left attached.
 */
int apex_xdp_program_attach(apex_xdp_program_t *prog, const char *ifname, const uint16_t *ports,
			    size_t count, char *err, size_t err_size);

/* Send the frames of queue to the AF_XDP socket fd. */
int apex_xdp_program_add_socket(apex_xdp_program_t *prog, unsigned queue, int fd);

/* The frames of queue the program passed to the kernel (every CPU's count). */
uint64_t apex_xdp_program_passed(const apex_xdp_program_t *prog, unsigned queue);

/* Detach and unload (safe on a program never attached, and twice). */
void apex_xdp_program_detach(apex_xdp_program_t *prog);

#endif
