# SPDX-License-Identifier: BSD-3-Clause
"""The kernel's drops of queries at apexd's UDP sockets, as apexctl reports them.

A burst of queries is sent, faster than the workers answer, at sockets
whose receive buffers were made tiny on purpose (receive-buffer-size), while
the zone is reloaded: the kernel drops some at the sockets.  The drops each
worker counts (SO_RXQ_OVFL, `apexctl stats`) must add up to the `drops`
column of /proc/net/udp for apexd's port.  Counters, not timings: the burst
is bounded in count, and every figure is read once the traffic has ended.
"""

import json
import os
import socket
import subprocess

import dns.exception
import dns.message
import dns.query
import dns.rdatatype as T

import servers

BURST = 20000          # queries sent without waiting for answers
FLUSH_QUERIES = 200    # one at a time afterwards: they carry the counts to the workers


def apexctl_path():
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return os.path.join(builddir, "apexctl")


class BufferApexd(servers.Apexd):
    """apexd with a config file: 2 workers, tiny UDP receive buffers."""

    def command(self):
        return [servers.apexd_path(), "-f", "-n", "2", "-l",
                "%s@%d" % (servers.LOOPBACK, self.port)] + self.extra_args


def proc_net_udp_drops(port):
    """The drops of every UDP socket bound to port (IPv4), summed."""
    total, sockets = 0, 0
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port:
                total += int(fields[12])
                sockets += 1
    return total, sockets


def test_kernel_drops_match_proc_net_udp(tmp_path):
    d = str(tmp_path)
    zone = os.path.join(d, "drops.zone")
    with open(zone, "w") as f:
        f.write("$ORIGIN drops.test.\n$TTL 60\n@ SOA ns hm 1 1 1 1 1\n@ NS ns\nns A 192.0.2.1\n")
        for i in range(2000):
            f.write("h%d A 192.0.2.%d\n" % (i, i % 250 + 1))
    sock = os.path.join(d, "ctl.sock")
    conf = os.path.join(d, "apex.conf")
    with open(conf, "w") as f:
        f.write("server:\n    control-socket: %s\n    receive-buffer-size: 4096\n" % sock)
        f.write("zone:\n    name: drops.test.\n    file: %s\n" % zone)
    apexd = BufferApexd(d, [("drops.test.", zone)], label="apexd-drops", extra_args=["-c", conf])
    apexd.start()

    def ctl_json(*args):
        r = subprocess.run([apexctl_path(), "-s", sock, "--json"] + list(args),
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    try:
        status = ctl_json("status")
        # the kernel doubles the size set, with a floor of its own
        assert 0 < status["udp_receive_buffer"] <= 16384, status

        wire = dns.message.make_query("h1.drops.test.", T.A).to_wire()
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)  # answers may be lost too
        reload = subprocess.Popen([apexctl_path(), "-s", sock, "reload", "drops.test."],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for i in range(BURST):
            # several source ports, so that both workers' sockets get queries
            s.sendto(wire, (servers.LOOPBACK, apexd.port))
            if i % 1000 == 999:
                s.close()
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.close()
        assert reload.wait(60) == 0

        # Paced queries from many source ports: every socket receives some
        # after the burst, carrying its final drop count to its worker.
        # A query may still meet a full socket (the workers drain the burst,
        # slowly under a sanitizer): it is dropped and counted like the
        # burst's, and sent again until answered.
        for i in range(FLUSH_QUERIES):
            q = dns.message.make_query("h%d.drops.test." % i, T.A)
            for attempt in range(10):
                try:
                    dns.query.udp(q, servers.LOOPBACK, port=apexd.port, timeout=2)
                    break
                except dns.exception.Timeout:
                    assert attempt < 9, "query %d never answered" % i
        kernel, sockets = proc_net_udp_drops(apexd.port)
        stats = ctl_json("stats")
        counted = stats["total"]["kernel_drops"]
        per_worker = [w["kernel_drops"] for w in stats["workers"]]
        print("burst of %d: /proc/net/udp drops %d over %d sockets; apexctl stats %d (%s)" % (
            BURST, kernel, sockets, counted, per_worker))
        assert sockets == 2
        assert kernel > 0, "the burst overflowed no socket: the test proves nothing"
        assert counted == kernel
        assert sum(per_worker) == counted
    finally:
        apexd.stop()
