#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reload benchmark: apexd, NSD and Knot DNS reloading the largest zone.

For each server, on a loopback port, serving the synthetic nu. zone
(NSEC3, about a million records; ../shared/zones/nu.nsec3.synthetic.zone.xz,
decompressed into a temporary directory):

  steady   dnsperf, unthrottled, for STEADY seconds: QPS and p99 latency,
           and the resident memory of the server (PSS summed over its
           processes, so that NSD's forked children are counted fairly);
  reload   a second copy of the zone with the next serial is put in place,
           dnsperf runs again, the reload is asked for (apexctl reload,
           nsd-control reload, knotc zone-reload) and dnsperf stops when
           the new serial is answered: QPS and p99 over that window, the
           queries lost, the peak memory sampled every 50 ms, as a multiple
           of the steady memory, and how long the reload took.

    /usr/bin/python3 contrib/bench-reload/reload_bench.py [--servers apexd,nsd,knot]

With --mode edits, instead: the memory of a reload without query load,
for each --sizes zone (1M: nu.nsec3; 10M: the synthetic unsigned TLD of
contrib/bench/scale.py, generated into BENCH_TMPDIR if set, else the
scratch directory) and each
--edits kind, each server started afresh for each:

  unchanged  the same file written again (same serial, same bytes);
  reformatted  the same records written as other text (relative owners
             made absolute; same serial);
  N          N changes (half the delegations' name servers replaced, half
             new delegations) and the next serial;
  P%         as many changes as P% of the zone's records.

Reported: the steady PSS before the reload, the peak sampled every 20 ms
from the request until the reload is over (the new serial answered; for
an unchanged file, the control command returned, and for NSD its log
saying the zone was read) and, as the peak, on until --after seconds
later (the compaction apexd may run after the reload), both / steady,
and the PSS after.

    /usr/bin/python3 contrib/bench-reload/reload_bench.py --mode edits \
        [--sizes 1M,10M] [--edits unchanged,reformatted,100,10%] [--servers apexd,knot,nsd]

APEX_BUILDDIR (default: the source tree) names where apexd and apexctl are;
APEX_ZONES (default: ../shared/zones next to the source tree) where the .xz is.
Every process started is stopped by its PID.  The figures go to stdout,
as a Markdown table (doc/reload.md holds a run).
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRCDIR, "contrib", "bench"))
import secondaries  # noqa: E402  (the zone file reader)
import scale  # noqa: E402  (the 10M-record TLD)
BUILDDIR = os.environ.get("APEX_BUILDDIR", SRCDIR)
ZONES = os.environ.get("APEX_ZONES", os.path.join(SRCDIR, "..", "shared", "zones"))
ORIGIN = "nu."
START_TIMEOUT = 600
RELOAD_TIMEOUT = 600


def free_port():
    for _ in range(50):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            t.bind(("127.0.0.1", 0))
            port = t.getsockname()[1]
            try:
                u.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port")


def wire_name(origin):
    out = b""
    for label in origin.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\x00"


def soa_serial(port, timeout=0.5, origin=ORIGIN):
    """The SOA serial of origin served on port, or None."""
    qid = os.getpid() & 0xFFFF
    q = (qid.to_bytes(2, "big") + b"\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
         + wire_name(origin) + b"\x00\x06\x00\x01")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(q, ("127.0.0.1", port))
            r, _ = s.recvfrom(65535)
        except OSError:
            return None
    if len(r) < 12 or r[:2] != q[:2] or (r[3] & 15) != 0 or int.from_bytes(r[6:8], "big") == 0:
        return None
    # question is echoed: skip it, then the answer's owner (a pointer or the name)
    pos = 12 + len(q) - 12
    if r[pos] & 0xC0 == 0xC0:
        pos += 2
    else:
        while r[pos] != 0:
            pos += r[pos] + 1
        pos += 1
    rdlen = int.from_bytes(r[pos + 8:pos + 10], "big")
    rdata = r[pos + 10:pos + 10 + rdlen]
    # rdata: mname, rname (possibly compressed), then serial
    i = 0
    for _ in range(2):
        while True:
            if rdata[i] & 0xC0 == 0xC0:
                i += 2
                break
            if rdata[i] == 0:
                i += 1
                break
            i += rdata[i] + 1
    return int.from_bytes(rdata[i:i + 4], "big")


def tree_pss(pid):
    """PSS in bytes of pid and all its descendants."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            with open("/proc/%d/smaps_rollup" % p) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


class Server:
    name = "?"

    def __init__(self, workdir, zonefile, origin=ORIGIN):
        self.dir = os.path.join(workdir, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.zonefile = zonefile
        self.origin = origin
        self.port = free_port()
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.dir, "server.log"), "wb")
        self.proc = subprocess.Popen(self.command(), stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.dir)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start-up (see %s)" % (self.name, self.log.name))
            if soa_serial(self.port, origin=self.origin) is not None:
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("%s did not start within %d s" % (self.name, START_TIMEOUT))

    def stop(self):
        # NSD's main process, in the middle of a reload, can outlive the one
        # started: every process below it is stopped too, by its PID
        below = descendants(self.proc.pid) if self.proc is not None else []
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.proc is not None:
            self.log.close()
        for pid in below:
            try:  # still one of this server's (its directory in the command)
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if self.dir.encode() in f.read():
                        os.kill(pid, signal.SIGTERM)
            except OSError:
                pass


class Apexd(Server):
    name = "apexd"

    def command(self):
        self.sock = os.path.join(self.dir, "apexd.sock")
        return [os.path.join(BUILDDIR, "apexd"), "-f", "-n", "2", "-l", "127.0.0.1@%d" % self.port,
                "-z", "%s=%s" % (self.origin, self.zonefile), "-s", self.sock]

    def reload(self):
        return subprocess.Popen([os.path.join(BUILDDIR, "apexctl"), "-s", self.sock, "reload",
                                 self.origin], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


class Nsd(Server):
    name = "nsd"

    def command(self):
        d = self.dir
        self.conf = os.path.join(d, "nsd.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join([
                "server:", "    ip-address: 127.0.0.1@%d" % self.port, "    do-ip6: no",
                "    server-count: 2", '    username: ""', '    chroot: ""',
                '    zonesdir: "%s"' % d, '    database: ""', '    pidfile: "%s/nsd.pid"' % d,
                '    xfrdfile: "%s/xfrd.state"' % d, '    xfrdir: "%s"' % d,
                '    zonelistfile: "%s/zone.list"' % d, "    verbosity: 1",
                "    rrl-ratelimit: 0", "    rrl-whitelist-ratelimit: 0",
                "remote-control:", "    control-enable: yes",
                '    control-interface: "%s/nsd.ctl"' % d,
                "zone:", '    name: "%s"' % self.origin, '    zonefile: "%s"' % self.zonefile, ""]))
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", self.conf]

    def reload(self):
        return subprocess.Popen(["nsd-control", "-c", self.conf, "reload", self.origin],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


class Knot(Server):
    name = "knot"

    def command(self):
        d = self.dir
        self.conf = os.path.join(d, "knot.conf")
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = ["server:", '    rundir: "%s"' % d, "    listen: 127.0.0.1@%d" % self.port]
        if os.geteuid() == 0:
            lines.append("    user: root:root")
        lines += ["    udp-workers: 2", "    tcp-workers: 1", "    background-workers: 1",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s/knot.sock"' % d,
                  "log:", "  - target: stderr", "    any: notice",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: whole", "    journal-content: none",
                  "    semantic-checks: off", "    dnssec-signing: off",
                  "zone:", "  - domain: %s" % self.origin, '    file: "%s"' % self.zonefile, ""]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines))
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", self.conf]

    def reload(self):
        return subprocess.Popen(["knotc", "-c", self.conf, "-b", "zone-reload", self.origin],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


SERVERS = {"apexd": Apexd, "nsd": Nsd, "knot": Knot}


class Dnsperf:
    """dnsperf -v in the background, its output in a file (a pipe that
    nobody reads while it runs would fill up and stall it)."""

    def __init__(self, port, datafile, seconds, outfile):
        self.outfile = outfile
        self.out = open(outfile, "w")
        self.proc = subprocess.Popen(
            ["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", datafile, "-l", str(seconds),
             "-c", "2", "-q", "200", "-t", "5", "-v"],
            stdout=self.out, stderr=subprocess.STDOUT)

    def finish(self, timeout, interrupt=False):
        if interrupt:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        self.out.close()
        with open(self.outfile) as f:
            return f.read()


def dnsperf_result(out):
    lat, unanswered = [], 0
    for line in out.splitlines():
        if not line.startswith("> "):
            continue
        try:
            lat.append(float(line.rsplit(None, 1)[1]))
        except ValueError:  # "> T name type": timed out, or still pending when stopped
            unanswered += 1
    lat.sort()
    qps = re.search(r"Queries per second:\s+([\d.]+)", out)
    lost = re.search(r"Queries lost:\s+(\d+)", out)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")
    return {"qps": float(qps.group(1)) if qps else 0.0, "p99_ms": p99 * 1000,
            "lost": int(lost.group(1)) if lost else -1, "answers": len(lat),
            "unanswered": unanswered}


def measure(server_cls, workdir, zone_a, zone_b, serial_b, datafile, steady_seconds):
    live = os.path.join(workdir, "nu.zone")
    if os.path.lexists(live):
        os.unlink(live)
    os.symlink(zone_a, live)
    s = server_cls(workdir, live)
    t0 = time.monotonic()
    s.start()
    startup = time.monotonic() - t0
    try:
        time.sleep(2)
        steady_mem = tree_pss(s.proc.pid)
        out = Dnsperf(s.port, datafile, steady_seconds, os.path.join(s.dir, "steady.out")).finish(
            steady_seconds + 60)
        steady = dnsperf_result(out)

        # the next version in place, then load and reload together
        tmp = live + ".new"
        os.symlink(zone_b, tmp)
        os.rename(tmp, live)
        peak = [tree_pss(s.proc.pid)]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], tree_pss(s.proc.pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        perf = Dnsperf(s.port, datafile, RELOAD_TIMEOUT, os.path.join(s.dir, "reload.out"))
        sampler.start()
        time.sleep(0.5)
        t0 = time.monotonic()
        ctl = s.reload()
        deadline = t0 + RELOAD_TIMEOUT
        while soa_serial(s.port, timeout=1.0) != serial_b and time.monotonic() < deadline:
            time.sleep(0.02)
        reload_seconds = time.monotonic() - t0
        ctl_out = ctl.communicate(timeout=RELOAD_TIMEOUT)[0].decode(errors="replace").strip()
        time.sleep(0.2)
        out = perf.finish(60, interrupt=True)
        stop.set()
        sampler.join(5)
        during = dnsperf_result(out)
        after_mem = tree_pss(s.proc.pid)
        return {"server": s.name, "startup_s": startup, "steady": steady, "during": during,
                "reload_s": reload_seconds, "steady_mem": steady_mem, "peak_mem": peak[0],
                "after_mem": after_mem, "ctl": ctl_out, "ctl_rc": ctl.returncode}
    finally:
        s.stop()


def prepare(workdir):
    xz = os.path.join(ZONES, "nu.nsec3.synthetic.zone.xz")
    zone_a = os.path.join(workdir, "nu.a.zone")
    with open(zone_a, "wb") as out:
        subprocess.run(["xz", "-dc", xz], stdout=out, check=True)
    # version b: the same data with the next serial
    zone_b = os.path.join(workdir, "nu.b.zone")
    serial_b = None
    with open(zone_a) as src, open(zone_b, "w") as dst:
        for line in src:
            if serial_b is None and re.search(r"\sSOA\s", line):
                fields = line.split()
                i = fields.index("SOA") + 3
                serial_b = int(fields[i]) + 1
                fields[i] = str(serial_b)
                line = " ".join(fields) + "\n"
            dst.write(line)
    # queries: delegations (referrals), their DS, and names that do not exist
    names = []
    with open(zone_a) as src:
        for line in src:
            f = line.split()
            if len(f) >= 4 and f[3] == "NS" and f[0] != ORIGIN and len(names) < 40000:
                if not names or names[-1] != f[0]:
                    names.append(f[0])
    datafile = os.path.join(workdir, "queries.txt")
    with open(datafile, "w") as q:
        for i, n in enumerate(names):
            q.write("%s %s\n" % (n, "DS" if i % 3 == 0 else "A"))
            if i % 5 == 0:
                q.write("nx%d-%s A\n" % (i, n))
    return zone_a, zone_b, serial_b, datafile


def absolute_line(owner, ttl, rtype, rdata, origin):
    if rtype in ("NS", "CNAME", "SOA"):
        n = 2 if rtype == "SOA" else 1
        rdata = [secondaries.absolute(x, origin) for x in rdata[:n]] + list(rdata[n:])
    return "%s %d IN %s %s\n" % (owner, ttl, rtype, " ".join(rdata))


def write_edited(src, dst, origin, changes):
    """dst: src with changes changes (half the delegations, spread over the
    zone, given one new name server in place of theirs; half new
    delegations, each with an NSEC in an NSEC zone) and the next serial;
    with changes None, src as it is (same serial).  Returns the serial."""
    delegations, nsec = [], False
    for owner, _, rtype, _, _ in secondaries.records(src):
        if rtype == "NS" and owner != origin and (not delegations or delegations[-1] != owner):
            delegations.append(owner)
        nsec = nsec or rtype == "NSEC"
    repoint = (changes or 0) // 2
    chosen = set(delegations[::max(1, len(delegations) // repoint)][:repoint]) if repoint else set()
    serial, done = None, set()
    with open(dst + ".tmp", "w") as out:
        for owner, ttl, rtype, rdata, line in secondaries.records(src):
            if rtype == "SOA" and serial is None:
                serial = int(rdata[2]) + (1 if changes is not None else 0)
                rdata = rdata[:2] + [str(serial)] + rdata[3:]
            elif rtype == "NS" and owner in chosen:
                if owner in done:
                    continue
                done.add(owner)
                rdata = ["ns.edited.example."]
            elif line.split()[0].endswith("."):  # as it was (quoted text kept whole)
                out.write(line)
                continue
            out.write(absolute_line(owner, ttl, rtype, rdata, origin))
        for i in range((changes or 0) - repoint):
            out.write("edit-%d.%s 86400 IN NS ns%d.edit-new.example.\n" % (i, origin, i % 4))
            if nsec:
                out.write("edit-%d.%s 3600 IN NSEC %s NS RRSIG NSEC\n" % (i, origin, origin))
    os.rename(dst + ".tmp", dst)
    return serial


def count_records(path):
    return sum(1 for _ in secondaries.records(path))


def edits_zone(workdir, size):
    """(file, origin) of the --sizes zone."""
    if size == "1M":
        path = os.path.join(workdir, "nu.a.zone")
        if not os.path.exists(path):
            with open(path, "wb") as out:
                subprocess.run(["xz", "-dc", os.path.join(ZONES, "nu.nsec3.synthetic.zone.xz")],
                               stdout=out, check=True)
        return path, ORIGIN
    if size == "10M":  # the one of contrib/bench/scale.py, kept in BENCH_TMPDIR if set
        path = os.path.join(os.environ.get("BENCH_TMPDIR", workdir), "scale-10M-seed1.zone")
        if not os.path.exists(path):
            scale.generate(path, 10000000, 1)
        return path, scale.ORIGIN
    raise SystemExit("--sizes: 1M or 10M, not %s" % size)


def descendants(pid):
    """PIDs of the processes below pid (NSD's main and server processes)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                kids = [int(x) for x in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def nsd_servers(server):
    """NSD's server processes: the children of its main process (the
    first child of the process started), which a reload replaces."""
    first = descendants(server.proc.pid)[:1]
    return set(descendants(first[0])) if first else set()


def compaction_lines(server):
    """apexd's log lines of the compaction that followed the reload (how
    long it took, in parts or whole), or [] for the other servers."""
    if server.name != "apexd":
        return []
    server.log.flush()
    with open(server.log.name, errors="replace") as f:
        return [line.split(" apexd ", 1)[-1].strip() for line in f
                if re.search(r"built (again in \d+ parts|compact) in", line)]


def measure_edit(server_cls, workdir, base, edited, origin, serial_b, unchanged, after_s=1.0):
    """One server started on base, then asked to reload edited in its place; the
    peak sampled until after_s seconds after the reload is over (apexd builds a
    chain of derived versions compact after the reload that crosses its rule)."""
    live = os.path.join(workdir, "live.zone")
    shutil.copyfile(base, live + ".tmp")
    os.rename(live + ".tmp", live)
    s = server_cls(workdir, live, origin)
    t0 = time.monotonic()
    s.start()
    startup = time.monotonic() - t0
    try:
        time.sleep(3)
        steady = tree_pss(s.proc.pid)
        servers = nsd_servers(s) if s.name == "nsd" else set()
        shutil.copyfile(edited, live + ".tmp")
        os.rename(live + ".tmp", live)
        peak = [steady]
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                peak[0] = max(peak[0], tree_pss(s.proc.pid))
                time.sleep(0.02)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.monotonic()
        ctl = s.reload()
        ctl_out = ctl.communicate(timeout=RELOAD_TIMEOUT)[0].decode(errors="replace").strip()
        deadline = t0 + RELOAD_TIMEOUT
        if not unchanged:
            while soa_serial(s.port, timeout=1.0, origin=origin) != serial_b and \
                    time.monotonic() < deadline:
                time.sleep(0.02)
        elif s.name == "nsd":  # nsd-control returns before NSD has read the file:
            # the reload is over when new server processes replace the old
            while servers & nsd_servers(s) and time.monotonic() < deadline:
                time.sleep(0.02)
        seconds = time.monotonic() - t0
        served = max(peak[0], tree_pss(s.proc.pid))  # the reload's own peak
        time.sleep(after_s)  # the old version released, a compaction over
        stop.set()
        sampler.join(5)
        after = tree_pss(s.proc.pid)
        return {"server": s.name, "startup_s": startup, "reload_s": seconds, "steady": steady,
                "served": served, "peak": peak[0], "after": after, "ctl": ctl_out,
                "ctl_rc": ctl.returncode, "compaction": compaction_lines(s)}
    finally:
        s.stop()


def run_edits(args, workdir):
    rows = []
    for size in args.sizes.split(","):
        base, origin = edits_zone(workdir, size)
        total = count_records(base)
        for kind in args.edits.split(","):
            if kind in ("unchanged", "reformatted"):
                changes = None
            elif kind.endswith("%"):
                changes = int(total * float(kind[:-1]) / 100)
            else:
                changes = int(kind)
            edited = os.path.join(workdir, "edited.zone")
            serial_b = write_edited(base, edited, origin, changes)
            if kind == "unchanged":  # the same bytes, not only the same records
                shutil.copyfile(base, edited)
            for name in args.servers.split(","):
                r = measure_edit(SERVERS[name], workdir, base, edited, origin, serial_b,
                                 changes is None, args.after)
                print("%s %s %s: %r" % (size, kind, name, r), file=sys.stderr, flush=True)
                rows.append((size, total, kind if changes is None else "%s (%d)" % (kind, changes),
                             r))
            os.unlink(edited)
    print("| zone | records | reload of | server | reload (s) | steady (MiB) "
          "| peak until served / steady | peak (MiB) | peak / steady | after (MiB) |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for size, total, kind, r in rows:
        print("| %s | %d | %s | %s | %.1f | %.0f | %.2f | %.0f | %.2f | %.0f |" % (
            size, total, kind, r["server"], r["reload_s"], r["steady"] / 2**20,
            r["served"] / max(1, r["steady"]), r["peak"] / 2**20,
            r["peak"] / max(1, r["steady"]), r["after"] / 2**20))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--steady", type=int, default=8, help="seconds of steady-state load")
    ap.add_argument("--mode", choices=["load", "edits"], default="load")
    ap.add_argument("--sizes", default="1M,10M", help="--mode edits: 1M, 10M")
    ap.add_argument("--edits", default="unchanged,reformatted,100,10%",
                    help="--mode edits: unchanged, reformatted, a number of changes, or P%% "
                         "of the records")
    ap.add_argument("--after", type=float, default=1.0,
                    help="--mode edits: seconds the peak is still sampled after the reload is "
                    "over, and the 'after' read then")
    args = ap.parse_args()
    # stopped (timeout, kill): the servers' finally clauses still stop them
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workdir = tempfile.mkdtemp(prefix="apex-reload-bench-")
    try:
        if args.mode == "edits":
            run_edits(args, workdir)
            return
        zone_a, zone_b, serial_b, datafile = prepare(workdir)
        results = []
        for name in args.servers.split(","):
            r = measure(SERVERS[name], workdir, zone_a, zone_b, serial_b, datafile, args.steady)
            results.append(r)
            print("%s: %r" % (name, r), file=sys.stderr, flush=True)
        print("| server | load at start (s) | reload (s) | QPS steady | QPS during reload | "
              "p99 steady (ms) | p99 during reload (ms) | lost during reload | memory steady (MiB) "
              "| peak during reload (MiB) | peak / steady | after reload (MiB) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in results:
            print("| %s | %.1f | %.1f | %.0f | %.0f | %.2f | %.2f | %d | %.0f | %.0f | %.2f | %.0f |" % (
                r["server"], r["startup_s"], r["reload_s"], r["steady"]["qps"], r["during"]["qps"],
                r["steady"]["p99_ms"], r["during"]["p99_ms"], r["during"]["lost"],
                r["steady_mem"] / 2**20, r["peak_mem"] / 2**20, r["peak_mem"] / max(1, r["steady_mem"]),
                r["after_mem"] / 2**20))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
