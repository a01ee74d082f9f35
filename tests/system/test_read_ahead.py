# SPDX-License-Identifier: BSD-3-Clause
"""Queries read ahead in a large zone (doc/architecture.md, "lookups").

A zone whose name table is larger than the caches (more than 2^18 slots:
here 140,000 delegations) makes a worker's UDP batches read each query
ahead of its answer, in a ring of queries.  apexd is stopped (SIGSTOP)
while bursts of queries fill its socket, so that it takes them in full
batches when it goes on; every answer must be the one the same query gets
alone, in a batch of one.  A batch that answered a query from another's
lookahead (a ring slot mixed up) would answer for the wrong name.
"""

import json
import os
import signal
import socket
import struct
import subprocess
import time

import dns.message
import dns.rdatatype as T

import servers

ORIGIN = "big."
DELEGATIONS = 140000
BURST = 64
BURSTS = 40
APEXCTL_TIMEOUT = 30


def write_zone(path):
    with open(path, "w") as f:
        f.write("$ORIGIN big.\n$TTL 3600\n@ SOA ns.big. host.big. 1 3600 600 86400 300\n"
                "@ NS ns.big.\nns A 192.0.2.1\n*.w TXT \"wild\"\n")
        for k in range(DELEGATIONS):
            f.write("d%d NS ns.other.example.\n" % k)
            if k % 3 == 0:
                f.write("d%d NS ns.d%d\nns.d%d A 192.0.2.%d\n" % (k, k, k, k % 250 + 1))
            if k % 10 == 0:
                f.write("h%d A 198.51.100.%d\n" % (k, k % 250 + 1))
            if k % 50 == 0:
                f.write("c%d CNAME h%d\n" % (k, (k + 10) % DELEGATIONS))


def queries():
    """(id, wire) of a mix of referrals, answers, NXDOMAIN, CNAME, wildcard,
    DS at a cut and the apex, each id distinct."""
    out = []
    for i in range(BURST * BURSTS):
        k = (i * 7919) % DELEGATIONS
        kind = i % 8
        name, qtype = {
            0: ("www.d%d.big." % k, T.A),
            1: ("d%d.big." % k, T.NS),
            2: ("d%d.big." % k, T.DS),
            3: ("h%d.big." % (k - k % 10), T.A),
            4: ("c%d.big." % (k - k % 50), T.A),
            5: ("nx%d.big." % k, T.A),
            6: ("a%d.w.big." % k, T.TXT),
            7: ("big.", T.SOA),
        }[kind]
        q = dns.message.make_query(name, qtype, use_edns=0, want_dnssec=(i % 3 == 0))
        q.id = i
        out.append((i, q.to_wire()))
    return out


class BigApexd(servers.Apexd):
    """apexd with one worker and a control socket, its zone in a config file."""

    def __init__(self, workdir, zonefile):
        super().__init__(workdir, [(ORIGIN, zonefile)], label="apexd-read-ahead")
        self.sock = os.path.join(workdir, "ctl.sock")
        self.conf = os.path.join(workdir, "apex.conf")
        with open(self.conf, "w") as f:
            f.write("server:\n    control-socket: %s\nzone:\n    name: %s\n    file: %s\n" % (
                self.sock, ORIGIN, zonefile))

    def command(self):
        return [servers.apexd_path(), "-f", "-n", "1", "-l",
                "%s@%d" % (servers.LOOPBACK, self.port), "-c", self.conf]

    def stats(self):
        path = os.path.join(os.path.dirname(servers.apexd_path()), "apexctl")
        r = subprocess.run([path, "-s", self.sock, "--json", "stats"], capture_output=True,
                           text=True, timeout=APEXCTL_TIMEOUT)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["total"]


def exchange(sock, port, wires, stop_pid=None):
    """Send wires to the server, all before it reads any when stop_pid is
    given (stopped meanwhile); returns {id: response bytes}."""
    if stop_pid is not None:
        os.kill(stop_pid, signal.SIGSTOP)
    try:
        for w in wires:
            sock.sendto(w, (servers.LOOPBACK, port))
    finally:
        if stop_pid is not None:
            os.kill(stop_pid, signal.SIGCONT)
    got = {}
    deadline = time.monotonic() + 10
    while len(got) < len(wires) and time.monotonic() < deadline:
        try:
            data = sock.recv(65535)
        except socket.timeout:
            break
        got[struct.unpack("!H", data[:2])[0]] = data
    return got


def test_answers_read_ahead_in_full_batches_are_those_of_single_queries(tmp_path):
    zonefile = str(tmp_path / "big.zone")
    write_zone(zonefile)
    apexd = BigApexd(str(tmp_path), zonefile)
    apexd.start()
    try:
        qs = queries()
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        sock.settimeout(5)
        before = apexd.stats()
        alone = {}
        for qid, wire in qs:
            alone.update(exchange(sock, apexd.port, [wire]))
        assert len(alone) == len(qs)

        full_before = apexd.stats()["batch_fill"]
        batched = {}
        for b in range(BURSTS):
            burst = [w for _, w in qs[b * BURST:(b + 1) * BURST]]
            batched.update(exchange(sock, apexd.port, burst, stop_pid=apexd.proc.pid))
        after = apexd.stats()
        sock.close()

        # the bursts were taken in batches of more than 31 datagrams
        big = sum(after["batch_fill"][k] - full_before[k] for k in ("32-63", "64"))
        assert big >= BURSTS // 2, after["batch_fill"]
        assert after["udp"] - before["udp"] >= 2 * len(qs)
        assert len(batched) == len(qs)
        differing = [qid for qid, _ in qs if batched[qid] != alone[qid]]
        assert not differing, "%d answers differ, the first for query %d" % (
            len(differing), differing[0])
        # and they are answers: referrals, data, NXDOMAIN
        rcodes = {dns.message.from_wire(alone[qid]).rcode() for qid, _ in qs}
        assert rcodes == {0, 3}
    finally:
        assert apexd.stop() == 0
