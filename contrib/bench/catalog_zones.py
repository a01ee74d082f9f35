#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Catalog zone consumers side by side (RFC 9432): apexd, Knot DNS and
BIND 9, one at a time, behind one Knot DNS primary.

  contrib/bench/catalog_zones.py [--members 10000] [--add 1000] [--quick]
                                 [--consumers apexd,knot,bind,nsd]
                                 (apexd-nice0: apexd with reload-priority: 0)
                                 [--xfr-concurrency 10] [--server-defaults]
                                 [--primary-cpus 0] [--consumer-cpus 1]
                                 [--settle 0] [--timeout 600]

The primary, Knot DNS (pinned to --primary-cpus, with the benchmark's own
process), serves a hand-written catalog zone catalog.invalid. and
--members + --add member zones: the zones of contrib/bench/many_zones.py
(tld00000. ..., 20 to 200 records each, the same seed).  The catalog
lists the first --members of them (unique ids m00000 ...; version "2";
SOA refresh an hour, so that only the benchmark's NOTIFY moves a
consumer).  Knot DNS keeps the catalog's changes in its journal
(zonefile-load: difference) and so answers IXFR of it; it sends no
NOTIFY.

Each consumer in turn (pinned to --consumer-cpus, alone there), started
with an empty directory and the catalog alone in its configuration:

  a  start     exec to every member answering its SOA (NOERROR with the
               SOA; the members polled one after another in catalog order,
               every 20 ms: the wait for the last answers to within a
               poll; the time the catalog itself was first answered is
               noted too: Knot DNS answers no query for a catalog it
               interprets, only transfers of it).  Then its memory: PSS
               (smaps_rollup) and RSS (VmRSS) of its processes, once its
               CPU is quiet (below 0.02 s of CPU a second, at most 60 s);
               with --settle S, PSS again S seconds later (what the
               allocators return on their own by then: jemalloc's decay,
               apexd's purge 3 s after its last transfer).
  b  add       --add members appended to the catalog (serial + 1): the
               catalog file written again and `knotc zone-reload`; once
               the primary answers the new serial the benchmark sends the
               NOTIFY itself (the primary's SOA in its answer section, as
               Knot DNS sends it; again every second while unanswered, at
               most 5 times) and times until every new member answers.
  c  remove    the same --add members taken out again (serial + 2):
               NOTIFY to every one of them answering as the consumer
               answers a zone it does not have (asked before phase b: the
               rcode of one of the members not yet listed; REFUSED for all
               three here).
  CPU          utime + stime of the consumer's processes (/proc/PID/stat)
               over each phase: to the last member answering, and to the
               consumer being quiet again (writing copies, journals,
               catalog databases after the last answer).  On a shared
               2-core machine that is the steadier figure.  One thread of
               Knot DNS sets its own affinity to CPU 0 (Knot pins its
               query workers itself), beside the primary; its CPU time
               counts in Knot's like every other thread's.

After b and c every one of the --members first members is checked to be
answered still (untimed); a member lost is reported.  Lines of the
consumer's log with "error", "warning", "critical" or "assert" are
counted and the first few printed on stderr; the logs stay in the
scratch directory (BENCH_TMPDIR keeps it).

The settings that could throttle a consumer are lifted, the same for
every one (--server-defaults: each server's own defaults instead), with
--xfr-concurrency K (default 10, apexd's default xfr-in-max):
  apexd  xfr-in-max: K (zones refreshed at once), 1 worker; member copies
         in its directory (pattern zonefile "%s.zone").
  Knot   background-workers: K (its zone events, transfers included, run
         on them; default: the number of CPUs, 2 here), 1 UDP and 1 TCP
         worker; catalog-role: interpret, catalog-template with the
         primary and the NOTIFY ACL; its defaults otherwise (zone files
         written after each transfer, the catalog database), its log at
         its default level, info, as apexd's and BIND's (at notice it
         writes none of the lines each member's transfer logs at info).
  BIND   transfers-in K and transfers-per-ns K (defaults 10 and 2),
         serial-query-rate 10000 (default 20 SOA queries a second: a new
         member's refresh starts with one, so 10,000 members would take
         at least 500 s), `named -n 1`; catalog-zones { zone
         "catalog.invalid" default-primaries { primary } zone-directory
         "members" in-memory no min-update-interval 0; } (its default
         of 5 s defers a catalog's new version that comes sooner than
         that after the last: by 3 s in phases b and c of a --quick run).
NSD 4.6 (Debian 12) consumes no catalog (NSD's catalog support came with
4.9); it is listed as such.

Only loopback traffic; every process is stopped by its PID; every wait
is bounded (--timeout) and a time-out is reported as such.  Markdown
table on stdout, progress on stderr.
"""

import argparse
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import many_zones  # noqa: E402
import secondary_peers as P  # noqa: E402  (Notify, soa_rrset, knot_server_lines)

CATALOG = "catalog.invalid."
POLL = 0.02
QUIET_CPU = 0.02   # CPU seconds a second below which a consumer is quiet
QUIET_BOUND = 60.0
LOG_RE = re.compile(r"error|warning|critical|assert|fatal|abort", re.IGNORECASE)
LOG_IGNORE = re.compile(r"built with")  # BIND's configure line (-Werror=...)
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP",
          5: "REFUSED", 9: "NOTAUTH"}


def bare(name):
    return name.rstrip(".")


def write_file(path, text):
    """Write a zone file with a modification time later than its last one
    and than now (Knot DNS skips a reload of a file whose time it has
    seen)."""
    old = os.stat(path).st_mtime if os.path.exists(path) else 0
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)
    t = max(time.time(), old) + 1
    os.utime(path, (t, t))


def catalog_text(serial, members):
    lines = ["$ORIGIN " + CATALOG, "$TTL 300",
             "@ SOA invalid. invalid. %d 3600 600 2147483646 0" % serial,
             "@ NS invalid.", 'version TXT "2"']
    lines += ["m%05d.zones PTR %s" % (i, origin) for i, origin in members]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ probes

class Probe:
    """SOA queries to 127.0.0.1:port on one socket: the rcode and whether
    the answer holds an SOA, or None when nothing came in time."""

    def __init__(self, port, timeout=0.2):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.connect((B.LOOPBACK, port))
        self.sock.settimeout(timeout)

    def ask(self, origin):
        qid = random.getrandbits(16)
        query = struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + P.name_wire(origin) + \
            struct.pack("!HH", 6, 1)
        try:
            self.sock.send(query)
            deadline = time.monotonic() + self.sock.gettimeout()
            while True:
                r = self.sock.recv(65535)
                if len(r) >= 12 and r[:2] == query[:2] and r[2] & 0x80:
                    return r[3] & 0xF, struct.unpack("!H", r[6:8])[0] > 0
                if time.monotonic() > deadline:
                    return None
        except OSError:
            return None

    def serves(self, origin):
        a = self.ask(origin)
        return a is not None and a[0] == 0 and a[1]

    def serial(self, origin):
        """The SOA serial answered for origin, or None."""
        try:
            return P.soa_serial(self.sock, P.name_wire(origin))
        except (IndexError, struct.error):  # an answer cut short
            return None

    def close(self):
        self.sock.close()


def wait_all(server, names, cond, timeout, catalog_serial=None, notify=None):
    """Poll names one after another (the first not yet cond() every POLL
    seconds) until cond holds for all.  Returns (seconds or None on a
    time-out, names still pending, seconds to the catalog answering
    catalog_serial (any, if 0) or None)."""
    probe = Probe(server.port)
    pending = list(names)
    t0 = time.monotonic()
    cat_at = None
    try:
        while True:
            if notify is not None:
                notify.poll()
            if catalog_serial is not None and cat_at is None:
                s = probe.serial(CATALOG)
                if s is not None and (catalog_serial == 0 or s == catalog_serial):
                    cat_at = time.monotonic() - t0
            while pending and cond(probe, pending[0]):
                pending.pop(0)
            now = time.monotonic() - t0
            if not pending:
                return now, [], cat_at
            if server.proc.poll() is not None:
                raise RuntimeError("%s exited (status %s) with %d zones pending; see %s" % (
                    server.name, server.proc.returncode, len(pending), server.logpath))
            if now > timeout:
                return None, pending, cat_at
            time.sleep(POLL)
    finally:
        probe.close()


def quiesce(server):
    """Wait (at most QUIET_BOUND s) until the server uses less than
    QUIET_CPU seconds of CPU a second; seconds waited."""
    t0 = time.monotonic()
    last = server.cpu_seconds()
    while time.monotonic() - t0 < QUIET_BOUND:
        time.sleep(1.0)
        now = server.cpu_seconds()
        if now - last < QUIET_CPU:
            break
        last = now
    return time.monotonic() - t0


# ----------------------------------------------------------------- primary

class KnotPrimary(B.Server):
    """Knot DNS serving the catalog and every member zone, AXFR to
    127.0.0.0/8; the catalog's changes kept in its journal (IXFR)."""

    name = "knot-primary"

    def __init__(self, workdir, catalog_path, members, cpus):
        super().__init__(workdir, [(CATALOG, catalog_path)] + list(members), cpus=cpus)
        self.sock = os.path.join(self.workdir, "knot.sock")

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = P.knot_server_lines(d, self.port)
        # tcp-io-timeout: a consumer slow to read must not be cut off
        lines += ["    tcp-io-timeout: 60000", "    background-workers: 2",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s"' % self.sock, "    timeout: 600",
                  "log:", "  - target: stderr", "    any: warning",
                  "acl:", "  - id: xfr", "    address: 127.0.0.0/8", "    action: transfer",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: whole",
                  "    journal-content: none", "    semantic-checks: off",
                  "    dnssec-signing: off", "    acl: xfr",
                  "zone:", "  - domain: %s" % CATALOG, '    file: "%s"' % self.zones[0][1],
                  "    zonefile-load: difference", "    journal-content: changes"]
        for origin, path in self.zones[1:]:
            lines += ["  - domain: %s" % origin, '    file: "%s"' % os.path.abspath(path)]
        conf = os.path.join(d, "knot.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]

    def reload_catalog(self, serial, timeout):
        r = subprocess.run([shutil.which("knotc") or "/usr/sbin/knotc", "-s", self.sock,
                            "zone-reload", CATALOG], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=120)
        if r.returncode != 0:
            raise RuntimeError("knotc zone-reload: %s" % r.stdout.decode(errors="replace"))
        probe = Probe(self.port)
        t0 = time.monotonic()
        try:
            while probe.serial(CATALOG) != serial:
                if time.monotonic() - t0 > timeout:
                    raise RuntimeError("the primary does not serve the catalog's serial %d "
                                       "within %.0f s" % (serial, timeout))
                time.sleep(0.05)
        finally:
            probe.close()


# --------------------------------------------------------------- consumers

class Consumer(B.Server):
    """A catalog consumer with an empty directory, started without waiting
    (the benchmark times its start); tuned: throttles lifted (see the
    module's text), k: the zones it refreshes at once."""

    def __init__(self, workdir, primary_port, cpus, tuned, k):
        d = os.path.join(workdir, self.name)
        if os.path.exists(d):
            shutil.rmtree(d)
        super().__init__(workdir, [], cpus=cpus)
        self.primary_port = primary_port
        self.tuned, self.k = tuned, k
        self.logpath = os.path.join(self.workdir, "log")

    def launch(self):
        self.port = self.pick_port()
        cmd = self.launcher() + self.command()
        self.log = open(self.logpath, "wb")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir)
        return t0

    def write(self, name, lines):
        path = os.path.join(self.workdir, name)
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def log_problems(self):
        self.log.flush()
        with open(self.logpath, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        return [l for l in text.splitlines() if LOG_RE.search(l) and not LOG_IGNORE.search(l)]


class ApexdConsumer(Consumer):
    name = "apexd"
    label = "apexd"
    extra = []

    def command(self):
        lines = ["server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
                 '    control-socket: "%s"' % os.path.join(self.workdir, "apexd.sock")]
        if self.tuned:
            lines.append("    xfr-in-max: %d" % self.k)
        lines += self.extra
        primary = "%s@%d NOKEY" % (B.LOOPBACK, self.primary_port)
        lines += ["pattern:", '    name: "members"', '    zonefile: "%s.zone"',
                  "    request-xfr: " + primary, "    allow-notify: 127.0.0.1 NOKEY",
                  "zone:", '    name: "%s"' % bare(CATALOG), '    file: "%s.zone"' % bare(CATALOG),
                  "    catalog: consumer", '    catalog-member-pattern: "members"',
                  "    request-xfr: " + primary, "    allow-notify: 127.0.0.1 NOKEY"]
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", self.write("apex.conf", lines)]


class ApexdNice0Consumer(ApexdConsumer):
    """apexd with its transfer threads at the workers' priority rather than
    SCHED_IDLE (which waits for every other runnable thread of its CPU)."""

    name = "apexd-nice0"
    label = "apexd (reload-priority: 0)"
    extra = ["    reload-priority: 0"]


class KnotConsumer(Consumer):
    name = "knot"
    label = "Knot DNS 3.2"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = P.knot_server_lines(d, self.port)
        lines += ["    udp-workers: 1", "    tcp-workers: 1"]
        if self.tuned:
            lines.append("    background-workers: %d" % self.k)
        lines += ["database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s/knot.sock"' % d,
                  "log:", "  - target: stderr", "    any: info",
                  "remote:", "  - id: primary",
                  "    address: %s@%d" % (B.LOOPBACK, self.primary_port),
                  "acl:", "  - id: notify", "    address: 127.0.0.0/8", "    action: notify",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    semantic-checks: off",
                  "  - id: members", '    storage: "%s"' % d, '    file: "%s.zone"',
                  "    master: primary", "    acl: notify", "    semantic-checks: off",
                  "zone:", "  - domain: %s" % CATALOG, '    file: "%s.zone"' % bare(CATALOG),
                  "    master: primary", "    acl: notify",
                  "    catalog-role: interpret", "    catalog-template: members"]
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", self.write("knot.conf", lines)]


class BindConsumer(Consumer):
    name = "bind"
    label = "BIND 9.18"

    def command(self):
        d = self.workdir
        os.makedirs(os.path.join(d, "members"), exist_ok=True)
        primary = "%s port %d" % (B.LOOPBACK, self.primary_port)
        opts = ["options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
                "    listen-on port %d { %s; };" % (self.port, B.LOOPBACK),
                "    listen-on-v6 { none; };", "    recursion no;", "    notify no;"]
        if self.tuned:
            opts += ["    transfers-in %d;" % self.k, "    transfers-per-ns %d;" % self.k,
                     "    serial-query-rate 10000;"]
        opts += ['    catalog-zones { zone "%s" default-primaries { %s; } '
                 'zone-directory "members" in-memory no%s; };' % (
                     bare(CATALOG), primary, " min-update-interval 0" if self.tuned else ""),
                 "};", "controls { };",
                 'zone "%s" { type secondary; primaries { %s; }; file "%s.db"; '
                 "allow-notify { 127.0.0.1; }; };" % (bare(CATALOG), primary, bare(CATALOG))]
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-n", "1", "-c",
                self.write("named.conf", opts)]


CONSUMERS = {"apexd": ApexdConsumer, "apexd-nice0": ApexdNice0Consumer,
             "knot": KnotConsumer, "bind": BindConsumer}


# ---------------------------------------------------------------- the run

def mib(b):
    return "%.0f" % (b / 2**20)


def rss(server):
    total = 0
    for pid in server.pids():
        try:
            total += B.proc_status(pid, "VmRSS")
        except OSError:
            pass
    return total


def secs(x, timeout):
    return "timeout (%.0f s)" % timeout if x is None else "%.2f" % x


def still_served(server, names):
    """The names among names the server no longer answers (untimed)."""
    probe = Probe(server.port, timeout=1.0)
    try:
        return [n for n in names if not probe.serves(n)]
    finally:
        probe.close()


def run_consumer(cls, tmp, primary, members, added, args):
    """One consumer through phases a, b, c; a dict of results."""
    cons = cls(tmp, primary.port, args.consumer_cpus, not args.server_defaults,
               args.xfr_concurrency)
    res = {"name": cls.label}
    base = [o for o, _ in members]
    new = [o for o, _ in added]
    serial = primary.serial
    t_start = cons.launch()
    try:
        # a: start with an empty directory
        seconds, pending, cat_at = wait_all(cons, base, lambda p, n: p.serves(n),
                                            args.timeout - (time.monotonic() - t_start),
                                            catalog_serial=0)
        if seconds is not None:
            seconds = time.monotonic() - t_start  # from exec
        res["a"] = seconds
        res["a_cat"] = cat_at
        res["a_cpu"] = cons.cpu_seconds()
        res["a_pending"] = len(pending)
        B.log("%s: a: %s s, %d pending, CPU %.2f s" % (cons.name, secs(seconds, args.timeout),
                                                        len(pending), res["a_cpu"]))
        res["a_quiet"] = quiesce(cons)
        res["a_cpu_quiet"] = cons.cpu_seconds()
        res["pss"], res["rss"] = many_zones.pss(cons), rss(cons)
        B.log("%s: quiet after %.1f s more, CPU %.2f s, PSS %s MiB, RSS %s MiB" % (
            cons.name, res["a_quiet"], res["a_cpu_quiet"], mib(res["pss"]), mib(res["rss"])))
        if args.settle > 0:
            time.sleep(args.settle)
            res["pss_settled"] = many_zones.pss(cons)
            B.log("%s: %.0f s later, PSS %s MiB" % (cons.name, args.settle,
                                                    mib(res["pss_settled"])))
        if seconds is None:
            res["problems"] = cons.log_problems()
            return res
        probe = Probe(cons.port, timeout=1.0)
        answer = probe.ask(new[0])
        probe.close()
        res["unknown"] = "no answer" if answer is None else RCODES.get(answer[0], answer[0])
        unknown_rcode = None if answer is None else answer[0]

        def gone(p, n):
            a = p.ask(n)
            return a is not None and a[0] == unknown_rcode

        # b: the members added; c: removed again
        for phase, listed, names, cond in (
                ("b", members + added, new, lambda p, n: p.serves(n)),
                ("c", members, new, gone)):
            serial += 1
            write_file(primary.catalog_path, catalog_text(serial, [
                (i, o) for i, (o, _) in enumerate(listed)]))
            primary.reload_catalog(serial, args.timeout)
            primary.serial, primary.listed = serial, len(listed)
            soa = P.soa_rrset(primary.port, CATALOG)
            cpu0 = cons.cpu_seconds()
            notify = P.Notify(cons.port, CATALOG, soa=soa)
            try:
                seconds, pending, cat_at = wait_all(cons, names, cond, args.timeout,
                                                    catalog_serial=serial, notify=notify)
            finally:
                notify.close()
            res[phase], res[phase + "_cat"] = seconds, cat_at
            res[phase + "_pending"] = len(pending)
            res[phase + "_cpu"] = cons.cpu_seconds() - cpu0
            res[phase + "_notify_sent"] = notify.sent
            B.log("%s: %s: %s s (catalog at the new serial after %s s; NOTIFY sent %d "
                  "time(s)), %d pending, CPU %.2f s" % (
                      cons.name, phase, secs(seconds, args.timeout),
                      "-" if cat_at is None else "%.2f" % cat_at, notify.sent, len(pending),
                      res[phase + "_cpu"]))
            res[phase + "_quiet"] = quiesce(cons)
            res[phase + "_cpu_quiet"] = cons.cpu_seconds() - cpu0
            lost = still_served(cons, base)
            res[phase + "_lost"] = len(lost)
            if lost:
                B.log("%s: after %s, %d of the first members not answered, e.g. %s" % (
                    cons.name, phase, len(lost), lost[:5]))
            if seconds is None:
                break
        res["pss_end"], res["rss_end"] = many_zones.pss(cons), rss(cons)
        res["problems"] = cons.log_problems()
        return res
    finally:
        cons.stop()
        res["status"] = cons.proc.returncode
        res["log"] = cons.logpath
        if primary.listed != len(members):  # b without c: back to the first members
            primary.serial = serial = max(serial, primary.serial) + 1
            write_file(primary.catalog_path, catalog_text(serial, [
                (i, o) for i, (o, _) in enumerate(members)]))
            primary.reload_catalog(serial, args.timeout)
            primary.listed = len(members)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--members", type=int, default=10000)
    ap.add_argument("--add", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="--members 500 --add 100")
    ap.add_argument("--consumers", default="apexd,knot,bind,nsd")
    ap.add_argument("--xfr-concurrency", type=int, default=10)
    ap.add_argument("--server-defaults", action="store_true",
                    help="each consumer at its own defaults (no throttle lifted)")
    ap.add_argument("--primary-cpus", default="0")
    ap.add_argument("--consumer-cpus", default="1")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds to wait after a's quiet memory reading for a second one "
                         "(allocators' delayed returns done)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="bound of each phase, seconds")
    args = ap.parse_args()
    if args.quick:
        args.members, args.add = 500, 100
    if not 2 <= args.members <= 100000 or not 1 <= args.add <= 100000 \
            or not 1 <= args.xfr_concurrency <= 1000 or not 1 <= args.timeout <= 3600:
        ap.error("--members in 2..100000, --add in 1..100000, --xfr-concurrency in "
                 "1..1000, --timeout in 1..3600")
    names = args.consumers.split(",")
    for n in names:
        if n not in CONSUMERS and n != "nsd":
            ap.error("unknown consumer %s (one of %s, nsd)" % (n, ",".join(CONSUMERS)))
    os.sched_setaffinity(0, {int(c) for c in args.primary_cpus.split(",") if c.isdigit()}
                         or {0})
    tmp = B.scratch_dir()
    zones, records = many_zones.generate(tmp, args.members + args.add)
    members, added = zones[:args.members], zones[args.members:]
    B.log("%d member zones and %d more, %d records in all" % (
        len(members), len(added), records))
    catalog_path = os.path.join(tmp, "catalog.invalid.zone")
    if os.path.exists(catalog_path):
        os.unlink(catalog_path)
    write_file(catalog_path, catalog_text(1, [(i, o) for i, (o, _) in enumerate(members)]))
    primary = KnotPrimary(tmp, catalog_path, zones, args.primary_cpus)
    primary.catalog_path = catalog_path
    primary.serial, primary.listed = 1, len(members)
    shutil.rmtree(os.path.join(primary.workdir, "db"), ignore_errors=True)
    B.log("starting the primary (Knot DNS, %d zones)" % (len(zones) + 1))
    primary.start(timeout=args.timeout)
    B.log("primary ready after %.1f s" % primary.ready_seconds)
    results = []
    try:
        for n in names:
            if n == "nsd":
                results.append({"name": "NSD 4.6", "none": True})
                B.log("nsd: NSD 4.6 has no catalog consumer: skipped")
                continue
            B.log("%s: start with an empty directory, %d members" % (n, len(members)))
            try:
                res = run_consumer(CONSUMERS[n], tmp, primary, members, added, args)
            except RuntimeError as e:  # the consumer exited, or the primary failed
                B.log("%s: %s" % (n, e))
                res = {"name": CONSUMERS[n].label, "failed": str(e)}
            results.append(res)
            probs = res.get("problems", [])
            B.log("%s: exit status %s; %d log line(s) with error/warning/...%s" % (
                n, res.get("status"), len(probs),
                "".join("\n    " + l for l in probs[:10])))
    finally:
        primary.stop()

    t = args.timeout
    rows = []
    for r in results:
        if r.get("none"):
            rows.append([r["name"]] + ["no catalog consumer"] + [""] * 9)
            continue
        if r.get("failed"):
            rows.append([r["name"]] + ["failed (see stderr)"] + [""] * 9)
            continue

        def cell(phase):
            s = secs(r.get(phase), t) if phase in r else "-"
            if r.get(phase + "_pending"):
                s += " (%d left)" % r[phase + "_pending"]
            return s

        def cpu(phase):
            if phase + "_cpu" not in r:
                return "-"
            return "%.2f / %.2f" % (r[phase + "_cpu"], r[phase + "_cpu_quiet"])

        rows.append([r["name"], cell("a"),
                     "not answered" if r.get("a_cat") is None else "%.2f" % r["a_cat"],
                     cpu("a"),
                     (mib(r["pss"]) if "pss" in r else "-") +
                     (" / %s" % mib(r["pss_settled"]) if "pss_settled" in r else ""),
                     mib(r["rss"]) if "rss" in r else "-",
                     cell("b"), cpu("b"), cell("c"), cpu("c"), r.get("unknown", "-")])
    print("%d members, then %d added and removed; primary Knot DNS on CPU %s, consumer on "
          "CPU %s, %s" % (args.members, args.add, args.primary_cpus, args.consumer_cpus,
                          "each server's defaults" if args.server_defaults else
                          "throttles lifted, %d zones at once" % args.xfr_concurrency))
    print(B.table(["consumer", "a: start to all (s)", "catalog first answered (s)",
                   "a: CPU s (to all / to quiet)",
                   "PSS MiB (quiet / settled)" if args.settle > 0 else "PSS MiB", "RSS MiB",
                   "b: +%d, NOTIFY to all (s)" % args.add, "b: CPU s",
                   "c: -%d, NOTIFY to all gone (s)" % args.add, "c: CPU s",
                   "unknown zone"], rows))
    lost = [(r["name"], p, r[p + "_lost"]) for r in results for p in "bc"
            if r.get(p + "_lost")]
    for name, p, n in lost:
        print("%s: after phase %s, %d of the first members no longer answered" % (name, p, n))


if __name__ == "__main__":
    main()
