#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Queries during transfers: apexd's workers' CPU per query while zone
transfers run in and out, against quiet.

  contrib/bench/queries_during_transfers.py [--qps 20000] [--seconds 10]
                                            [--changes 100] [--interval 1]
                                            [--rounds 3] [--priorities idle,0]

apexd (one worker, pinned to BENCH_SERVER_CPU with all its threads) serves
the 1M-record nu.nsec3 zone as a secondary of a primary in this script (on
BENCH_CLIENT_CPU), and may transfer it out to 127.0.0.1.  dnsperf sends the
TLD query mix at --qps for --seconds in each phase:

  quiet      no transfer;
  axfr-out   a client transfers the whole zone from apexd, again and again;
  ixfr-in    every --interval seconds the primary makes a new serial with
             --changes delegations removed and as many added, and sends a
             NOTIFY: apexd asks for the IXFR and builds the new version;
  both       the two at once.

The phases take turns for --rounds rounds, once for each reload-priority
in --priorities (idle: the transfer threads under SCHED_IDLE, as shipped;
0: at the workers' priority).  Per phase (medians): the
worker threads' CPU time per answered query (threads named apexd-worker,
from /proc), queries lost, dnsperf's mean latency, the CPU time of the
transfer threads (apexd-xfr: incoming; apexd-xfr-out: outgoing) and the
transfers done.  After each phase the script waits (bounded) until the
last IXFR is published, so that the next phase starts quiet; its CPU time
counts for the phase that started it.  The worker's CPU per query is what the issue asks to
compare: a transfer must not make answering dearer.

Only loopback traffic; every process started is stopped by its PID.
APEX_NU_ZONE or APEX_ZONEDIR name the zone as for the other benchmarks.
"""

import argparse
import os
import socket
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import axfr_out  # noqa: E402
import benchlib as B  # noqa: E402

import dns.flags  # noqa: E402
import dns.message  # noqa: E402
import dns.opcode  # noqa: E402
import dns.rdatatype  # noqa: E402
import dns.rrset  # noqa: E402

ORIGIN = "nu."


def delegation_names(path, count):
    """count names of delegations of the zone file at path, spread over it."""
    names = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[3] == "NS" and fields[0] != ORIGIN and \
                    (not names or names[-1] != fields[0]):
                names.append(fields[0])
    step = max(1, len(names) // count)
    return names[::step][:count]


def zone_soa(path):
    """The SOA line of the zone file (its first record) as (mname, rname,
    serial, refresh, retry, expire, minimum, ttl)."""
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 11 and fields[3] == "SOA":
                return fields[4], fields[5], int(fields[6]), fields[7:11], int(fields[1])
    raise RuntimeError("no SOA at the start of %s" % path)


class Primary:
    """A primary of nu. that answers SOA queries and IXFRs from the
    serials it made (each set removes the delegations the set before added
    and adds --changes new ones; or, given existing delegation names, an NS
    record at each of them in place of the one the set before added), over
    UDP and TCP on one port."""

    def __init__(self, path, changes, existing=None, nsec=False):
        self.mname, self.rname, self.base, self.timers, self.ttl = zone_soa(path)
        self.serial = self.base
        self.changes = changes
        self.existing = existing
        self.nsec = nsec  # new names get an NSEC (an NSEC zone's)
        self.lock = threading.Lock()
        self.port = B.free_port()
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind((B.LOOPBACK, self.port))
        self.tcp.listen(8)
        self.tcp.settimeout(0.2)
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((B.LOOPBACK, self.port))
        self.udp.settimeout(0.2)
        self.stopping = threading.Event()
        self.ixfrs = 0
        self.threads = [threading.Thread(target=f, daemon=True)
                        for f in (self.serve_tcp, self.serve_udp)]
        for t in self.threads:
            t.start()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(10)
        self.tcp.close()
        self.udp.close()

    def soa(self, serial):
        return dns.rrset.from_text(ORIGIN, self.ttl, "IN", "SOA", "%s %s %d %s" % (
            self.mname, self.rname, serial, " ".join(self.timers)))

    def delegations(self, serial):
        """The delegations serial added (none for the zone file's own)."""
        if serial == self.base:
            return []
        if self.existing:
            return [dns.rrset.from_text(name, 86400, "IN", "NS", "ns.update-%d.example.net." %
                                        serial) for name in self.existing[:self.changes]]
        names = ["bench-%d-%d.%s" % (serial, i, ORIGIN) for i in range(self.changes)]
        sets = [dns.rrset.from_text(name, 86400, "IN", "NS", "ns%d.example.net." % (i % 4))
                for i, name in enumerate(names)]
        if self.nsec:  # its own NSEC (the names' order is not what this measures)
            sets += [dns.rrset.from_text(name, 3600, "IN", "NSEC", "%s NS RRSIG NSEC" % ORIGIN)
                     for name in names]
        return sets

    def bump(self):
        with self.lock:
            self.serial += 1

    def answer(self, q):
        with self.lock:
            current = self.serial
        if q.question[0].rdtype == dns.rdatatype.SOA:
            r = dns.message.make_response(q)
            r.flags |= dns.flags.AA
            r.answer.append(self.soa(current))
            return [r]
        # IXFR: from the client's serial to the current one, condensed (each
        # serial's delegations replace the ones before)
        client = q.authority[0][0].serial if q.authority else self.base
        rrsets = ([self.soa(current), self.soa(client)] + self.delegations(client) +
                  [self.soa(current)] + self.delegations(current) + [self.soa(current)])
        self.ixfrs += 1
        messages = []
        for i in range(0, len(rrsets), 500):  # in messages of 500 records
            m = dns.message.make_response(q)
            m.flags |= dns.flags.AA
            m.answer.extend(rrsets[i:i + 500])
            messages.append(m)
        return messages

    def serve_tcp(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.tcp.accept()
            except socket.timeout:
                continue
            with conn:
                conn.settimeout(10)
                try:
                    n = struct.unpack("!H", axfr_out.recv_exact(conn, 2))[0]
                    q = dns.message.from_wire(axfr_out.recv_exact(conn, n))
                    for m in self.answer(q):
                        wire = m.to_wire(max_size=65535)
                        conn.sendall(struct.pack("!H", len(wire)) + wire)
                except Exception as e:  # noqa: BLE001 (a bench must keep serving)
                    B.log("primary: %s" % e)

    def serve_udp(self):
        while not self.stopping.is_set():
            try:
                data, peer = self.udp.recvfrom(65535)
            except socket.timeout:
                continue
            q = dns.message.from_wire(data)
            if q.opcode() == dns.opcode.QUERY and q.question[0].rdtype == dns.rdatatype.SOA:
                self.udp.sendto(self.answer(q)[0].to_wire(), peer)

    def notify(self, port):
        q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
        q.flags = dns.flags.AA  # (this resets the opcode too)
        q.set_opcode(dns.opcode.NOTIFY)
        with self.lock:  # the new SOA in the answer section, as Knot DNS and BIND send it
            q.answer.append(self.soa(self.serial))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(2)
            s.sendto(q.to_wire(), (B.LOOPBACK, port))
            try:
                s.recv(512)
            except socket.timeout:
                pass


class SecondaryApexd(B.Server):
    name = "apexd"

    def __init__(self, workdir, zones, primary_port, priority, extra=()):
        super().__init__(workdir, zones)
        self.primary_port = primary_port
        self.priority = priority
        self.extra = list(extra)  # more server: lines

    def command(self):
        origin, path = self.zones[0]
        lines = ["server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
                 "    control-socket: none", "    reload-priority: %s" % self.priority
                 ] + self.extra + ["zone:", '    name: "%s"' % origin, '    file: "%s"' % os.path.abspath(path),
                 "    request-xfr: %s@%d NOKEY" % (B.LOOPBACK, self.primary_port),
                 "    allow-notify: 127.0.0.1 NOKEY",
                 "    provide-xfr: 127.0.0.1 NOKEY"]
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]

    def thread_cpu(self):
        """CPU seconds by thread name (the live threads of the process), and
        of the whole process under "all" (threads that ended included)."""
        out = {"all": B.proc_cpu_seconds(self.proc.pid)}
        tick = os.sysconf("SC_CLK_TCK")
        task = "/proc/%d/task" % self.proc.pid
        for tid in os.listdir(task):
            try:
                with open(os.path.join(task, tid, "comm")) as f:
                    comm = f.read().strip()
                with open(os.path.join(task, tid, "stat")) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # a transfer thread that just ended
            out[comm] = out.get(comm, 0.0) + (int(fields[11]) + int(fields[12])) / tick
        return out


def axfr_loop(port, stop, done):
    while not stop.is_set():
        axfr_out.axfr(port, ORIGIN, False)
        done[0] += 1


def ixfr_loop(primary, port, interval, stop, done):
    while not stop.wait(interval):
        primary.bump()
        primary.notify(port)
        done[0] += 1


def served_serial(port):
    q = dns.message.make_query(ORIGIN, dns.rdatatype.SOA)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(1)
        s.sendto(q.to_wire(), (B.LOOPBACK, port))
        try:
            return dns.message.from_wire(s.recv(65535)).answer[0][0].serial
        except (socket.timeout, IndexError):
            return None


def settle(apex, primary, bound=120):
    """Wait until apexd serves the primary's serial (the IXFR a phase left
    under way is done), so that the next phase starts quiet."""
    deadline = time.monotonic() + bound
    while served_serial(apex.port) != primary.serial and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)  # the copy and the journal are written after the publication


def phase(apex, primary, name, queryfile, args):
    stop = threading.Event()
    axfrs, bumps = [0], [0]
    workers = []
    if name in ("axfr-out", "both"):
        workers.append(threading.Thread(target=axfr_loop, args=(apex.port, stop, axfrs)))
    if name in ("ixfr-in", "both"):
        workers.append(threading.Thread(target=ixfr_loop, args=(
            primary, apex.port, args.interval, stop, bumps)))
    before = apex.thread_cpu()
    ixfrs0 = primary.ixfrs
    for t in workers:
        t.start()
    res, _ = B.dnsperf(apex.port, queryfile, seconds=args.seconds, dnssec=False,
                       extra=["-Q", str(args.qps)])
    stop.set()
    for t in workers:
        t.join(120)
    settle(apex, primary)  # counted: the phase's transfers, to the end
    after = apex.thread_cpu()
    spent = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
    done = res["completed"] or 1
    return {
        "worker_us": spent.get("apexd-worker", 0.0) / done * 1e6,
        "lost": res["lost"], "completed": res["completed"], "latency_us": res["latency_us"],
        "xfr_in_cpu": spent.get("apexd-xfr", 0.0),
        # the outgoing transfer threads end with their transfer: the rest
        "xfr_out_cpu": max(0.0, spent["all"] - sum(v for k, v in spent.items()
                                                   if k not in ("all", "apexd-xfr-out"))),
        "axfrs": axfrs[0], "ixfrs": primary.ixfrs - ixfrs0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--qps", type=int, default=20000)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--changes", type=int, default=100)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--priorities", default="idle,0")
    args = ap.parse_args()
    tmp = B.scratch_dir()
    sets = [s for s in B.zone_sets(tmp) if s[0] == "nu.nsec3"]
    if not sets:
        sys.exit("the nu.nsec3 zone is needed (APEX_NU_ZONE or APEX_ZONEDIR)")
    label, zones, mix = sets[0]
    queryfile = B.query_file(tmp, label, zones, mix)
    rows = []
    for priority in args.priorities.split(","):
        rows += run(tmp, zones, queryfile, priority, args)
    print(B.table(["reload-priority", "phase", "worker CPU µs/query", "vs quiet", "lost",
                   "latency µs", "xfr-in CPU s", "IXFRs", "xfr-out CPU s", "AXFRs"], rows))


def run(tmp, zones, queryfile, priority, args):
    """The phases with apexd at reload-priority priority: the table's rows."""
    copy = os.path.join(tmp, "nu.secondary.zone")
    subprocess.run(["cp", zones[0][1], copy], check=True, timeout=600)
    primary = Primary(zones[0][1], args.changes)
    apex = SecondaryApexd(tmp, [(ORIGIN, copy)], primary.port, priority)
    phases = ["quiet", "axfr-out", "ixfr-in", "both"]
    results = {p: [] for p in phases}
    try:
        apex.start()
        for r in range(args.rounds):
            for p in phases:
                res = phase(apex, primary, p, queryfile, args)
                results[p].append(res)
                B.log("%s round %d %s: worker %.2f us/query, lost %d, latency %.0f us, "
                      "xfr-in CPU %.2f s (%d IXFR), xfr-out CPU %.2f s (%d AXFR)" % (
                          priority, r + 1, p, res["worker_us"], res["lost"],
                          res["latency_us"], res["xfr_in_cpu"], res["ixfrs"],
                          res["xfr_out_cpu"], res["axfrs"]))
    finally:
        apex.stop()
        primary.stop()
    quiet = B.median([x["worker_us"] for x in results["quiet"]])
    rows = []
    for p in phases:
        rs = results[p]
        w = B.median([x["worker_us"] for x in rs])
        rows.append([priority, p, "%.2f" % w, "%.2f" % (w / quiet if quiet else 0),
                     "%d" % B.median([x["lost"] for x in rs]),
                     "%.0f" % B.median([x["latency_us"] for x in rs]),
                     "%.2f" % B.median([x["xfr_in_cpu"] for x in rs]),
                     "%d" % B.median([x["ixfrs"] for x in rs]),
                     "%.2f" % B.median([x["xfr_out_cpu"] for x in rs]),
                     "%d" % B.median([x["axfrs"] for x in rs])])
    return rows

if __name__ == "__main__":
    main()
