# SPDX-License-Identifier: BSD-3-Clause
"""apexd's AF_XDP path (xdp-interface:), between two network namespaces
joined by a veth pair that the tests create and remove: apexd runs in one
(started with nsenter, so its PID is apexd's own), the queries come from
the other (netns_client.py under ip netns exec).

- The queries of the differential suite for example. and a sample of the
  root zone, over UDP on IPv4 and IPv6, get byte-identical answers through
  XDP and through apexd's sockets; TCP still goes through the kernel.
- Malformed frames (short, bad lengths, a bad IPv4 header checksum, IPv4
  options, a fragment) are passed to the kernel or dropped and counted,
  a VLAN-tagged query is answered with its tag, and apexd goes on.
- When XDP cannot attach (no such interface, another program on it),
  apexd says why and serves on its sockets.
Without root, network namespaces or XDP the tests say so and skip.
"""

import json
import os
import shutil
import socket
import struct
import subprocess
import time

import pytest

import client
import querygen
import servers
from veth_pair import VethPair
from conftest import SANITIZER_RE, zone

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER4, CLIENT4 = "198.18.0.1", "198.18.0.2"  # RFC 2544's benchmarking range
SERVER6, CLIENT6 = "fd00:a9e::1", "fd00:a9e::2"
START_TIMEOUT = 30


def apexctl_path():
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return os.path.join(builddir, "apexctl")


class Net(VethPair):
    """The pair, and the client side's queries (netns_client.py)."""

    def __init__(self):
        super().__init__("x", (SERVER4, CLIENT4), (SERVER6, CLIENT6))

    def mac(self, ns, ifname):
        return bytes.fromhex(super().mac(ns, ifname).replace(":", ""))

    def client(self, request):
        r = subprocess.run(["ip", "netns", "exec", self.client_ns, "/usr/bin/python3",
                            os.path.join(HERE, "netns_client.py")],
                           input=json.dumps(request), capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def exchange(self, server, port, wires, transport="udp"):
        out = self.client({"op": "exchange", "server": server, "port": port,
                           "transport": transport, "queries": [w.hex() for w in wires]})
        return [None if a is None else bytes.fromhex(a) for a in out["answers"]]


@pytest.fixture(scope="module")
def net():
    if os.geteuid() != 0:
        pytest.skip("AF_XDP needs root here: network namespaces, a BPF program, AF_XDP sockets")
    for tool in ("ip", "nsenter"):
        if shutil.which(tool) is None:
            pytest.skip("%s not found (Debian packages iproute2, util-linux)" % tool)
    n = Net()
    try:
        n.create()
    except subprocess.CalledProcessError as e:
        n.remove()
        pytest.skip("cannot create network namespaces and a veth pair here: %s" % e.stderr)
    yield n
    n.remove()


class Apexd:
    """apexd in the server namespace, on SERVER4 and SERVER6."""

    def __init__(self, net, workdir, name, xdp_interface, zones, port=None, extra=()):
        self.net, self.port = net, port or servers.free_port()
        self.dir = os.path.join(str(workdir), name)
        os.makedirs(self.dir, exist_ok=True)
        self.ctl = os.path.join(self.dir, "ctl.sock")
        conf = os.path.join(self.dir, "apex.conf")
        with open(conf, "w") as f:
            f.write("server:\n    listen: %s@%d\n    listen: %s@%d\n    workers: 1\n"
                    "    control-socket: %s\n" % (SERVER4, self.port, SERVER6, self.port,
                                                 self.ctl))
            if xdp_interface:
                f.write("    xdp-interface: %s\n" % xdp_interface)
            for line in extra:
                f.write("    %s\n" % line)
            for origin, path in zones:
                f.write("zone:\n    name: %s\n    file: %s\n" % (origin, path))
        self.logpath = os.path.join(self.dir, "apexd.log")
        self.log = open(self.logpath, "wb")
        self.proc = subprocess.Popen(
            ["nsenter", "--net=/run/netns/" + net.server_ns, servers.apexd_path(), "-f",
             "-c", conf], stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + START_TIMEOUT
        while "serving " not in self.log_text():
            assert self.proc.poll() is None, "apexd exited: %s" % self.log_text()
            assert time.monotonic() < deadline, "apexd did not start: %s" % self.log_text()
            time.sleep(0.1)

    def log_text(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def xdp_stats(self):
        r = subprocess.run([apexctl_path(), "-s", self.ctl, "--json", "stats"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["total"]["xdp"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()
        assert not SANITIZER_RE.search(self.log_text()), self.log_text()
        return self.proc.returncode


def start_xdp(net, workdir, name, zones, extra=()):
    """apexd with XDP on, or a skip saying why XDP is not available."""
    server = Apexd(net, workdir, name, net.server_if, zones, extra=extra)
    text = server.log_text()
    if "serving on sockets only" in text:
        server.stop()
        pytest.skip("XDP is not available here: " +
                    [line for line in text.splitlines() if "xdp-interface" in line][0])
    assert "XDP program attached" in text, text
    return server


def queries_of(zones):
    """The differential suite's UDP queries for example. (all of its
    systematic ones) and a sample of the root zone, as wire messages."""
    qs, _ = querygen.systematic("example.", zone("example.zone"))
    qs += querygen.generate(".", zone("root.zone"), max_names=150)
    udp = [q for q in qs if q.transport == "udp"]
    return [client.make_wire(q, i & 0xffff) for i, q in enumerate(udp)]


ZONES = [(".", zone("root.zone")), ("example.", zone("example.zone"))]


def serve_all(server, wires):
    return {
        "udp4": server.net.exchange(SERVER4, server.port, wires),
        "udp6": server.net.exchange(SERVER6, server.port, wires[::5]),
        "tcp4": server.net.exchange(SERVER4, server.port, wires[::20], "tcp"),
    }


def test_answers_are_those_of_the_socket_path(net, tmp_path):
    wires = queries_of(ZONES)
    assert len(wires) > 1000

    server = start_xdp(net, tmp_path, "xdp", ZONES)
    try:
        through_xdp = serve_all(server, wires)
        stats = server.xdp_stats()
    finally:
        assert server.stop() == 0, server.log_text()
    # every UDP query went through XDP, none to the kernel's stack
    udp_count = len(through_xdp["udp4"]) + len(through_xdp["udp6"])
    assert stats["received"] >= udp_count, stats
    assert stats["sent"] == stats["received"] and stats["invalid"] == 0, stats

    server = Apexd(net, tmp_path, "sockets", None, ZONES)
    try:
        through_sockets = serve_all(server, wires)
        assert server.xdp_stats()["received"] == 0
    finally:
        assert server.stop() == 0, server.log_text()

    for path in ("udp4", "udp6", "tcp4"):
        assert None not in through_xdp[path], path
        different = [i for i, (a, b) in enumerate(zip(through_xdp[path], through_sockets[path]))
                     if a != b]
        assert not different, "%s: %d answers differ, the first to query %s" % (
            path, len(different), wires[different[0]].hex())


def test_busy_poll(net, tmp_path):
    """xdp-busy-poll: the socket set to the kernel's preferred busy polling,
    and the answers still those of the socket path."""
    wires = queries_of(ZONES)[::3]
    server = start_xdp(net, tmp_path, "busy", ZONES, extra=["xdp-busy-poll: 50"])
    try:
        text = server.log_text()
        if "without busy polling" in text:
            pytest.skip("no busy polling on AF_XDP sockets here: " + text)
        assert "through AF_XDP (the interface has 1 receive queues); busy polling" in text, text
        through_xdp = server.net.exchange(SERVER4, server.port, wires)
        stats = server.xdp_stats()
    finally:
        assert server.stop() == 0, server.log_text()
    assert stats["received"] >= len(wires) and stats["sent"] == stats["received"], stats

    server = Apexd(net, tmp_path, "busy-sockets", None, ZONES)
    try:
        through_sockets = server.net.exchange(SERVER4, server.port, wires)
    finally:
        assert server.stop() == 0, server.log_text()
    assert None not in through_xdp
    assert through_xdp == through_sockets


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s


def ipv4_frame(net, dst_mac, sport, dport, payload, vlan=None, options=b"", flags=0,
               total_delta=0, bad_ip_checksum=False):
    """An Ethernet frame from the client to apexd carrying payload over
    UDP/IPv4, with checksums right unless told otherwise."""
    src = socket.inet_aton(CLIENT4)
    dst = socket.inet_aton(SERVER4)
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    pseudo = src + dst + struct.pack("!xBH", 17, len(udp))
    udp = udp[:6] + struct.pack("!H", (0xffff - checksum(pseudo + udp)) or 0xffff) + udp[8:]
    ihl = 5 + len(options) // 4
    header = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(udp) + total_delta, 7,
                         flags, 64, 17, 0, src, dst) + options
    check = 0xffff - checksum(header)
    if bad_ip_checksum:
        check ^= 0x0101
    header = header[:10] + struct.pack("!H", check) + header[12:]
    eth = dst_mac + net.mac(net.client_ns, net.client_if)
    if vlan is not None:
        eth += struct.pack("!HH", 0x8100, vlan)
    return eth + b"\x08\x00" + header + udp


def dns_of(frame):
    """The UDP payload of an IPv4 frame (its VLAN tag, if the kernel left
    it in the frame, skipped)."""
    l3 = 18 if frame[12:14] == b"\x81\x00" else 14
    return frame[l3 + 28:] if frame[l3 - 2:l3] == b"\x08\x00" else b""


def query_wire(qid):
    m = client.make_wire(querygen.Query("example.", 6, "udp", 1232, False, False, False), qid)
    return m


def test_malformed_frames(net, tmp_path):
    server = start_xdp(net, tmp_path, "malformed", [("example.", zone("example.zone"))])
    try:
        mac = net.mac(net.server_ns, net.server_if)
        sport = servers.free_port()
        f = lambda qid, **kw: ipv4_frame(net, mac, sport, server.port, query_wire(qid), **kw)
        frames = {
            "good": f(1),
            "short": mac + b"\x02" * 6 + b"\x08\x00" + b"\x45\x00",
            "ip-length-beyond-frame": f(2, total_delta=40),
            "bad-ip-checksum": f(3, bad_ip_checksum=True),
            "ip-options": f(4, options=b"\x01\x01\x01\x00"),
            "first-fragment": f(5, flags=0x2000),
            "vlan": f(6, vlan=7),
        }
        before = server.xdp_stats()
        out = net.client({"op": "frames", "interface": net.client_if, "port": sport,
                          "frames": [x.hex() for x in frames.values()], "wait": 2.0})
        answered = sorted(bytes.fromhex(a)[1] for a in out["udp"])
        # the good query through XDP; IPv4 with options through the kernel's socket
        assert answered == [1, 4], out
        # the VLAN-tagged query's answer, tagged 7, from apexd to the client
        tagged = [dns_of(bytes.fromhex(fr)) for fr, vlan in out["frames"] if vlan == 7]
        assert any(m[:2] == b"\x00\x06" and m[2] & 0x80 for m in tagged), out["frames"]
        after = server.xdp_stats()
        assert after["invalid"] - before["invalid"] == 2, (before, after)  # length, checksum
        assert after["sent"] - before["sent"] == 2, (before, after)  # good, vlan
        # and it goes on answering
        assert net.exchange(SERVER4, server.port, [query_wire(9)])[0] is not None
    finally:
        assert server.stop() == 0, server.log_text()


def test_falls_back_to_sockets(net, tmp_path):
    zones = [("example.", zone("example.zone"))]
    server = Apexd(net, tmp_path, "nonexistent", "apex-none0", zones)
    try:
        assert ("xdp-interface apex-none0: no interface apex-none0: serving on sockets only"
                in server.log_text()), server.log_text()
        assert net.exchange(SERVER4, server.port, [query_wire(1)])[0] is not None
    finally:
        assert server.stop() == 0, server.log_text()

    first = start_xdp(net, tmp_path, "first", zones)
    try:
        second = Apexd(net, tmp_path, "second", net.server_if, zones)
        try:
            text = second.log_text()
            assert "another XDP program is attached to it" in text, text
            assert "serving on sockets only" in text, text
            assert net.exchange(SERVER4, second.port, [query_wire(2)])[0] is not None
            assert second.xdp_stats()["received"] == 0
        finally:
            assert second.stop() == 0, second.log_text()
        # the first one still serves through XDP
        sent = first.xdp_stats()["sent"]
        assert net.exchange(SERVER4, first.port, [query_wire(3)])[0] is not None
        assert first.xdp_stats()["sent"] == sent + 1
    finally:
        assert first.stop() == 0, first.log_text()
    # the program went with apexd
    assert "xdp" not in net.link(net.server_ns, net.server_if)


def test_the_interface_name_is_checked(tmp_path):
    conf = os.path.join(str(tmp_path), "apex.conf")
    with open(conf, "w") as f:
        f.write("server:\n    xdp-interface: eth0/../../x\n")
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert "%s:2:" % conf in r.stderr and "not an interface name" in r.stderr, r.stderr
    # an interface not there (yet) is a warning: apexd would serve on sockets
    with open(conf, "w") as f:
        f.write("server:\n    xdp-interface: apex-none0\n")
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "xdp-interface apex-none0: no such interface here" in r.stderr, r.stderr
