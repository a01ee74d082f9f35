# SPDX-License-Identifier: BSD-3-Clause
"""Two network namespaces joined by a veth pair, named after this process,
for the AF_XDP tests (test_xdp.py) and benchmark (contrib/bench/xdp.py):
create() makes them, remove() deletes them (the pair goes with them).
Needs root and iproute2."""

import json
import os
import subprocess


def sh(*cmd):
    return subprocess.run(list(cmd), check=True, capture_output=True, text=True, timeout=60)


class VethPair:
    """A server namespace and a client namespace, each with its end of
    the pair and its addresses: (server, client) pairs of IPv4 /24 and,
    if given, IPv6 /64 addresses."""

    def __init__(self, tag, ipv4, ipv6=None):
        n = os.getpid()
        self.server_ns, self.client_ns = "apex-%ss-%d" % (tag, n), "apex-%sc-%d" % (tag, n)
        self.server_if, self.client_if = "a%ss%d" % (tag, n % 100000), "a%sc%d" % (tag, n % 100000)
        self.ipv4, self.ipv6 = ipv4, ipv6

    def create(self):
        sh("ip", "netns", "add", self.server_ns)
        sh("ip", "netns", "add", self.client_ns)
        sh("ip", "link", "add", self.server_if, "type", "veth", "peer", "name", self.client_if)
        sh("ip", "link", "set", self.server_if, "netns", self.server_ns)
        sh("ip", "link", "set", self.client_if, "netns", self.client_ns)
        for side, (ns, ifname) in enumerate(((self.server_ns, self.server_if),
                                             (self.client_ns, self.client_if))):
            sh("ip", "-n", ns, "addr", "add", self.ipv4[side] + "/24", "dev", ifname)
            if self.ipv6:
                sh("ip", "-n", ns, "addr", "add", self.ipv6[side] + "/64", "dev", ifname,
                   "nodad")
            sh("ip", "-n", ns, "link", "set", ifname, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")

    def remove(self):
        for ns in (self.server_ns, self.client_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=60)

    def mac(self, ns, ifname):
        out = sh("ip", "-n", ns, "-j", "link", "show", ifname).stdout
        return json.loads(out)[0]["address"]

    def link(self, ns, ifname):
        """The first line of `ip link show` (it says "xdp" when a program is on)."""
        return sh("ip", "-n", ns, "link", "show", ifname).stdout

    def detach_xdp(self):
        """Take any XDP program attached through netlink off both ends
        (Knot DNS and kxdpgun leave theirs when they exit)."""
        for ns, ifname in ((self.server_ns, self.server_if), (self.client_ns, self.client_if)):
            subprocess.run(["ip", "-n", ns, "link", "set", "dev", ifname, "xdp", "off"],
                           capture_output=True, timeout=60)
