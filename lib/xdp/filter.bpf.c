/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The XDP program apexd attaches to its xdp-interface: a UDP datagram to
 * one of the served ports, in an Ethernet frame (with at most one VLAN
 * tag) carrying IPv4 without options and unfragmented, or IPv6 with no
 * extension header, goes to the AF_XDP socket of the queue it arrived on
 * (apex_xsks); everything else, and any queue with no socket, goes on to
 * the kernel (XDP_PASS), counted per queue (apex_passed).  It only reads
 * the frame.
 *
 * Compiled with clang -target bpf; the object is built into apexd
 * (filter_object.c) and loaded with libbpf (program.c).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* receive queue -> the AF_XDP socket of the worker serving it */
struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} apex_xsks SEC(".maps");

/* UDP destination port (network byte order) -> 1: the served ports */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u8);
} apex_ports SEC(".maps");

/* receive queue -> frames passed to the kernel, counted per CPU */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} apex_passed SEC(".maps");

struct vlan_tag {
	__be16 tci;
	__be16 proto;
};

/* Leave the frame to the kernel, and count it. */
static __always_inline int pass(struct xdp_md *ctx)
{
	__u32 queue = ctx->rx_queue_index;
	__u64 *count = bpf_map_lookup_elem(&apex_passed, &queue);

	if (count != NULL)
		*count += 1; /* this CPU's own counter */
	return XDP_PASS;
}

SEC("xdp")
int apex_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct udphdr *udp;
	void *l3;
	__u16 proto;

	if ((void *)(eth + 1) > end)
		return pass(ctx);
	proto = eth->h_proto;
	l3 = eth + 1;
	if (proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD)) {
		struct vlan_tag *tag = l3;

		if ((void *)(tag + 1) > end)
			return pass(ctx);
		proto = tag->proto;
		l3 = tag + 1;
	}
	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)) != 0)
			return pass(ctx); /* options, fragments, not UDP: the kernel's */
		udp = (void *)(ip + 1);
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return pass(ctx); /* extension headers, fragments, not UDP */
		udp = (void *)(ip6 + 1);
	} else {
		return pass(ctx);
	}
	if ((void *)(udp + 1) > end)
		return pass(ctx);
	__u16 port = udp->dest;
	if (bpf_map_lookup_elem(&apex_ports, &port) == NULL)
		return pass(ctx);
	__u32 queue = ctx->rx_queue_index;
	if (bpf_map_lookup_elem(&apex_xsks, &queue) == NULL)
		return pass(ctx); /* no worker serves this queue */
	return bpf_redirect_map(&apex_xsks, queue, XDP_PASS);
}

char _license[] SEC("license") = "BSD";
