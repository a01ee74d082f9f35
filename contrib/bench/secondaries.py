#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Secondaries side by side: apexd, BIND 9, Knot DNS and NSD, one at a
time, as the secondary of one primary (Knot DNS, or apexd).

  contrib/bench/secondaries.py [--zones nu.nsec3,nu.nsec,scale10m]
                               [--secondaries apex,bind,knot,nsd]
                               (apex-nice0: apexd with reload-priority: 0)
                               [--changes 10,100,10000] [--rounds 10]
                               [--primary knot|apex]
                               [--primary-cpus 0] [--secondary-cpus 1]
                               [--passes 1]

For each zone the primary is started (pinned to --primary-cpus) on the
zone file, then each secondary in turn (pinned to --secondary-cpus, alone
there: never two secondaries at once), with no copy of the zone:

  AXFR in     the time from its exec to its first answer with the
              primary's serial (SOA queries every 2 ms);
  steady RSS  its resident memory --settle seconds after that (the
              largest VmRSS of its processes: NSD forks);
  rounds      for each --changes size, --rounds times: the primary's zone
              is changed (half of the changes give an existing delegation
              a new name server in place of its own, half add a new
              delegation; in an NSEC zone each new name gets an NSEC of its
              own, its place in the chain not being what this measures),
              the benchmark waits until the primary answers with the new
              serial, --primary-settle seconds more, then sends the NOTIFY
              itself (from 127.0.0.1, the primary's SOA in its answer
              section as Knot DNS 3.2 sends it; again every second while
              it is not answered, as a primary does) and times until the secondary answers
              with the new serial (SOA queries every --probe-interval ms,
              1 by default, bounded; this loop under SCHED_FIFO when
              allowed, --no-realtime not).  A round's time is therefore
              known to within the interval plus a query's round trip
              (about 1.2 ms at the default: rounds of one secondary fall
              on a few values 1.2 ms apart); 0.2 tells sub-millisecond
              differences apart, at the cost of the secondary answering
              five times as many probes on its CPU.
              Reported: median and max of the rounds, the peak RSS over the
              rounds (VmHWM, reset through /proc/PID/clear_refs before
              them), and the RSS after them (--settle seconds after the
              last).  Rounds are --pause seconds apart.  For apexd, its
              own account of the rounds' path follows on stderr (the
              medians of its log's "served ... after the NOTIFY" lines:
              the transfer, the derivation, the rest), so that a slow
              phase of the machine, felt in the derivation's copies, is
              told apart from the rest of the path; with --apex-steps
              (apexd at log-level debug), the derivation's own steps too:
              the change set's lookups, the changed owners and their node
              pages, the name index copied, the new names, the links.
              Before the next
              secondary, the primary's zone is brought back to the original
              (with a new serial) if the rounds added more than 0.1% to
              its delegations: each secondary transfers the same zone.

How the primary is changed: with Knot DNS, a knotc transaction (zone-begin,
zone-set/zone-unset, zone-commit; Knot increments the serial) up to
--knotc-max changes, else the zone file edited and `knotc zone-reload`
with zonefile-load: difference (Knot computes the IXFR); with apexd, the
file edited and `apexctl reload` (apexd fills its journal from the
difference).  The file is laid out once for this: the SOA and the records
the rounds change are in two small $INCLUDEd files, written again for
each change; the rest of the zone is the original file's, untouched.

With --passes K the secondaries are run in turn K times (apex, bind,
apex, bind, ...), each time from a fresh AXFR, and each pass's medians
are compared with the first secondary's of the same pass: this machine's
speed moves by up to half from one quarter of an hour to the next, and
two secondaries measured minutes apart are in the same phase more often
than two measured a whole run apart.

Zones: nu.nsec3 and nu.nsec (1M records, NSEC3 and NSEC; the .xz of
APEX_ZONEDIR decompressed into the scratch directory) and scale10m, the
10M-record synthetic unsigned TLD of contrib/bench/scale.py (generated
once into the scratch directory; BENCH_TMPDIR keeps it between runs).
The scratch directory is removed at the end unless BENCH_TMPDIR names it;
the servers' own directories in it are made afresh at each run (no
journal, no copy of an earlier run's).

Only loopback traffic; every process is stopped by its PID.  Markdown
table on stdout, progress on stderr.
"""

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import secondary_peers as P  # noqa: E402
import scale  # noqa: E402

TYPES = {"SOA", "NS", "A", "AAAA", "DS", "NSEC", "NSEC3", "NSEC3PARAM", "RRSIG", "DNSKEY",
         "TXT", "MX", "CNAME", "CDS", "CDNSKEY", "ZONEMD", "SRV", "CAA", "PTR"}


def records(path):
    """(owner, ttl, type, rdata, line) of each record of a simple zone
    file (one record a line, $ORIGIN/$TTL, relative names), absolute owner."""
    origin, ttl, last = None, 3600, None
    with open(path) as f:
        for line in f:
            s = line.strip()
            if ";" in s and '"' not in s:  # (a comment; none in quoted text here)
                s = s.split(";", 1)[0].strip()
            if not s:
                continue
            tok = s.split()
            if tok[0] == "$ORIGIN":
                origin = tok[1]
                continue
            if tok[0] == "$TTL":
                ttl = int(tok[1])
                continue
            if line[0] in " \t":
                owner, i = last, 0
            else:
                owner, i = tok[0], 1
                if owner == "@":
                    owner = origin
                elif not owner.endswith("."):
                    owner = owner + "." + origin
            rttl = ttl
            while i < len(tok) and tok[i] not in TYPES:
                if tok[i].isdigit():
                    rttl = int(tok[i])
                i += 1
            last = owner
            if i < len(tok):
                yield owner, rttl, tok[i], tok[i + 1:], line


class Zone:
    """The zone as the primary serves it: the original file with the SOA
    and the NS records of the delegations the rounds re-point moved into
    two $INCLUDEd files, and the changes made so far."""

    def __init__(self, tmp, label, source, origin, pool_size):
        self.origin, self.label = origin, label
        self.dir = os.path.join(tmp, "primary-zone-" + label)
        os.makedirs(self.dir, exist_ok=True)
        self.main = os.path.join(self.dir, "zone")
        self.soa_inc = os.path.join(self.dir, "soa.inc")
        self.changes_inc = os.path.join(self.dir, "changes.inc")
        delegations, self.nsec, self.soa = [], False, None
        for owner, ttl, rtype, rdata, _ in records(source):
            if rtype == "SOA" and self.soa is None:
                self.soa = (ttl, rdata)
            elif rtype == "NS" and owner != origin and (not delegations or
                                                        delegations[-1] != owner):
                delegations.append(owner)
            elif rtype == "NSEC":
                self.nsec = True
        step = max(1, len(delegations) // pool_size)
        self.pool = delegations[::step][:pool_size]  # spread over the zone
        self.delegations = len(delegations)
        pool = set(self.pool)
        self.ns = {}  # pool name -> [(ttl, target)]: what the zone has now
        with open(self.main + ".tmp", "w") as out:
            out.write("$INCLUDE %s\n" % self.soa_inc)
            for owner, ttl, rtype, rdata, line in records(source):
                if rtype == "SOA":
                    continue
                if rtype == "NS" and owner in pool:
                    self.ns.setdefault(owner, []).append((ttl, absolute(rdata[0], origin)))
                    continue
                if line[0] in " \t" or not line.split()[0].endswith("."):
                    line = "%s %d IN %s %s\n" % (owner, ttl, rtype, " ".join(
                        absolute(x, origin) if rtype in ("NS", "CNAME") else x for x in rdata))
                out.write(line)
            out.write("$INCLUDE %s\n" % self.changes_inc)
        os.rename(self.main + ".tmp", self.main)
        self.original_ns = {k: list(v) for k, v in self.ns.items()}
        self.serial = int(self.soa[1][2])
        self.added = []  # [(owner, target)]
        self.round = 0
        self.write()

    def write(self):
        ttl, rdata = self.soa
        with open(self.soa_inc + ".tmp", "w") as f:
            f.write("%s %d IN SOA %s %s %d %s\n" % (self.origin, ttl, absolute(rdata[0], self.origin),
                                                  absolute(rdata[1], self.origin), self.serial,
                                                  " ".join(rdata[3:7])))
        with open(self.changes_inc + ".tmp", "w") as f:
            for owner, sets in self.ns.items():
                for ttl, target in sets:
                    f.write("%s %d IN NS %s\n" % (owner, ttl, target))
            for owner, target in self.added:
                f.write("%s 86400 IN NS %s\n" % (owner, target))
                if self.nsec:
                    f.write("%s 3600 IN NSEC %s NS RRSIG NSEC\n" % (owner, self.origin))
        os.rename(self.changes_inc + ".tmp", self.changes_inc)
        os.rename(self.soa_inc + ".tmp", self.soa_inc)
        now = time.time()
        os.utime(self.main, (now, now))

    def revert(self):
        """The zone as it was, with the next serial (written to the file)."""
        self.ns = {k: list(v) for k, v in self.original_ns.items()}
        self.added = []
        self.serial += 1
        self.write()

    def change(self, count):
        """The next change of count records' worth (half re-pointed, half
        added), applied to the model; returns it as knotc edits."""
        self.round += 1
        repoint = count // 2
        step = max(1, len(self.pool) // max(1, repoint))
        edits = []
        target = "ns%d.bench-round.example." % self.round
        for owner in self.pool[::step][:repoint]:
            self.ns[owner] = [(86400, target)]
            edits += [("unset", owner, "NS"), ("set", owner, 86400, "NS", target)]
        for i in range(count - repoint):
            owner = "bench-%d-%d.%s" % (self.round, i, self.origin)
            ns = "ns%d.bench-new.example." % (i % 4)
            self.added.append((owner, ns))
            edits.append(("set", owner, 86400, "NS", ns))
            if self.nsec:
                edits.append(("set", owner, 3600, "NSEC", "%s NS RRSIG NSEC" % self.origin))
        self.serial += 1
        return edits


def absolute(name, origin):
    if name == "@":
        return origin
    return name if name.endswith(".") else name + "." + origin


def zone_source(tmp, label):
    """(file, origin) of a benchmark zone, made in tmp if need be."""
    if label in ("nu.nsec3", "nu.nsec"):
        path = B.synthetic_zone(tmp, label)
        if path is None:
            sys.exit("the %s zone is needed (APEX_ZONEDIR)" % label)
        return path, "nu."
    if label == "scale10m":
        path = os.path.join(tmp, "scale-10M-seed1.zone")
        if not os.path.exists(path):
            B.log("generating 10M records into %s" % path)
            scale.generate(path, 10000000, 1)
        return path, scale.ORIGIN
    sys.exit("unknown zone %s" % label)


def change_primary(primary, zone, count, knotc_max):
    edits = zone.change(count)
    if isinstance(primary, P.KnotPrimary) and count <= knotc_max:
        primary.transaction(edits)
        return "knotc"
    zone.write()
    primary.reload()
    return "file"


@contextlib.contextmanager
def realtime(on):
    """The benchmark's own timing loop under SCHED_FIFO while it runs (it
    sleeps between probes), so that other work on its CPU does not delay
    the probe that sees the new serial."""
    if not on:
        yield
        return
    old = os.sched_getscheduler(0)
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        yield
        return
    try:
        yield
    finally:
        os.sched_setscheduler(0, old, os.sched_param(0))


def mib(n):
    return "%.0f" % (n / 2**20)


PATH_LINE = re.compile(r"serial (\d+) served ([0-9.]+) ms after the NOTIFY: (.*?); after serving")
# apexd at log-level debug (--apex-steps): the derivation's steps
STEPS_LINE = re.compile(r"serial (\d+) derivation [0-9.]+ ms: (.*)$")
STEP_NAMES = {"change set read and its owners looked up": "lookups",
              "owners and node pages": "node pages",
              "name index copied": "name index", "new names": "new names", "links": "links"}


def apex_path(log_path, serials):
    """apexd's account of the path of the rounds that served serials (its
    log's "served ... after the NOTIFY" lines, and at log-level debug the
    derivation's steps): a line of medians in ms, or None when the log has
    none of them."""
    steps, derivation = {}, {}
    try:
        with open(log_path, errors="replace") as f:
            for line in f:
                s = STEPS_LINE.search(line.rstrip("\n"))
                if s is not None and int(s.group(1)) in serials:
                    for part in s.group(2).split(", "):
                        label, value = part.rsplit(" ", 1)
                        if label in STEP_NAMES:
                            derivation.setdefault(STEP_NAMES[label], []).append(float(value))
                    continue
                m = PATH_LINE.search(line)
                if m is None or int(m.group(1)) not in serials:
                    continue
                parts = dict(p.rsplit(" ", 1) for p in m.group(3).split(", "))
                steps.setdefault("to serving", []).append(float(m.group(2)))
                steps.setdefault("transfer", []).append(sum(
                    float(parts.get(k, 0)) for k in ("connect and request", "first message",
                                                      "rest of the answer")))
                steps.setdefault("derivation", []).append(float(
                    parts.get("derivation", parts.get("build", 0))))
    except OSError:
        return None
    if not steps:
        return None
    steps["the rest"] = [t - x - d for t, x, d in zip(
        steps["to serving"], steps["transfer"], steps["derivation"])]
    text = ", ".join("%s %.1f" % (k, statistics.median(v)) for k, v in steps.items())
    if derivation:
        text += "; the derivation's steps: " + ", ".join(
            "%s %.2f" % (k, statistics.median(v)) for k, v in derivation.items())
    return text


def run_secondary(args, name, primary, zone, tmp):
    """AXFR in and the rounds for one secondary; a list of table rows."""
    cls = P.SECONDARIES[name]
    workdir = os.path.join(tmp, "sec-%s-%s" % (zone.label, name))
    # with BENCH_TMPDIR kept, an earlier run's copy would spare the AXFR
    shutil.rmtree(workdir, ignore_errors=True)
    sec = cls(workdir, zone.origin, args.secondary_cpus, primary.port)
    if name.startswith("apex") and args.apex_reload_priority:
        sec.extra_server = ["    reload-priority: %s" % args.apex_reload_priority]
    if name.startswith("apex") and args.apex_steps:
        sec.extra_server = sec.extra_server + ["    log-level: debug"]
    rows = []
    try:
        axfr = sec.start_until(zone.serial, timeout=args.start_timeout)
        time.sleep(args.settle)
        steady = sec.rss()
        B.log("%s %s: AXFR in %.2f s, steady %s MiB" % (zone.label, name, axfr, mib(steady)))
        probe_primary = P.SerialProbe(primary.port, zone.origin, timeout=0.5)
        probe = P.SerialProbe(sec.port, zone.origin, timeout=0.05)
        first = True
        for count in args.changes:
            times = []
            serials = set()
            sec.reset_peak()
            for r in range(args.rounds):
                time.sleep(args.pause)
                t0 = time.monotonic()
                how = change_primary(primary, zone, count, args.knotc_max)
                if probe_primary.wait(zone.serial, args.round_timeout, 0.002) is None:
                    raise RuntimeError("the primary did not serve serial %d" % zone.serial)
                prep = time.monotonic() - t0
                time.sleep(args.primary_settle)
                soa = P.soa_rrset(primary.port, zone.origin)
                with realtime(args.realtime):
                    notify = P.Notify(sec.port, zone.origin, soa=soa)
                    took = probe.wait(zone.serial, args.round_timeout,
                                      interval=args.probe_interval / 1e3, notify=notify)
                    notify.close()
                if took is None:
                    raise RuntimeError("%s did not serve serial %d within %d s" % (
                        name, zone.serial, args.round_timeout))
                times.append(took)
                serials.add(zone.serial)
                B.log("  %s, %d changes, round %d: %.1f ms (primary: %s, %.2f s%s)" % (
                    name, count, r + 1, took * 1e3, how, prep,
                    "" if notify.sent == 1 else "; NOTIFY sent %d times" % notify.sent))
            peak = sec.peak()
            time.sleep(args.settle)
            after = sec.rss()
            rows.append([zone.label, name, "%.2f" % axfr if first else "",
                         mib(steady) if first else "", count, "%.1f" % (
                             statistics.median(times) * 1e3), "%.1f" % (max(times) * 1e3),
                         mib(peak), mib(after)])
            first = False
            B.log("  row: | %s |" % " | ".join(str(c) for c in rows[-1]))
            own = apex_path(os.path.join(sec.workdir, "log"), serials) \
                if name.startswith("apex") else None
            if own is not None:
                B.log("  %s's own account, %d changes, medians in ms: %s" % (name, count, own))
        probe.close()
        probe_primary.close()
    except RuntimeError as e:  # told in the table; the next secondary goes on
        B.log("%s %s: %s" % (zone.label, name, e))
        rows.append([zone.label, name, "failed: %s" % e, "", "", "", "", "", ""])
    finally:
        sec.stop()
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zones", default="nu.nsec3,nu.nsec,scale10m")
    ap.add_argument("--secondaries", default="apex,bind,knot,nsd")
    ap.add_argument("--changes", default="10,100,10000")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--primary", default="knot", choices=sorted(P.PRIMARIES))
    ap.add_argument("--primary-cpus", default="0")
    ap.add_argument("--secondary-cpus", default="1")
    ap.add_argument("--knotc-max", type=int, default=1000,
                    help="the most changes made by a knotc transaction (more: file + reload)")
    ap.add_argument("--pause", type=float, default=2.0, help="seconds between rounds")
    ap.add_argument("--settle", type=float, default=5.0,
                    help="seconds before a steady or after-rounds RSS is read")
    ap.add_argument("--primary-settle", type=float, default=0.2,
                    help="seconds from the primary's new serial to the NOTIFY")
    ap.add_argument("--no-realtime", dest="realtime", action="store_false",
                    help="time the rounds at normal priority (default: SCHED_FIFO, if allowed)")
    ap.add_argument("--apex-reload-priority", default=None,
                    help="apexd's reload-priority (default: its own, idle)")
    ap.add_argument("--apex-steps", action="store_true",
                    help="apexd at log-level debug, and the medians of its derivation's "
                         "steps reported with its own account")
    ap.add_argument("--probe-interval", type=float, default=1.0,
                    help="milliseconds between the SOA queries that see the new serial")
    ap.add_argument("--passes", type=int, default=1,
                    help="the secondaries in turn that many times (apex, bind, apex, bind, ...), "
                         "each pass's ratios to the first one printed")
    ap.add_argument("--round-timeout", type=float, default=300.0)
    ap.add_argument("--start-timeout", type=float, default=1200.0)
    args = ap.parse_args()
    # stopped (timeout, kill): the servers' finally clauses still stop them
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.changes = [int(c) for c in args.changes.split(",")]
    if not 1 <= args.rounds <= 1000:
        ap.error("--rounds in 1..1000")
    if not 1 <= args.passes <= 20:
        ap.error("--passes in 1..20")
    # the benchmark itself (its probes) beside the primary, off the secondary's CPUs
    os.sched_setaffinity(0, {int(c) for c in args.primary_cpus.split(",") if c.isdigit()} or
                         {0})
    keep = bool(os.environ.get("BENCH_TMPDIR"))
    tmp = B.scratch_dir()
    rows = []
    try:
        for label in args.zones.split(","):
            source, origin = zone_source(tmp, label)
            zone = Zone(tmp, label, source, origin, max(args.changes) // 2)
            workdir = os.path.join(tmp, "primary-" + label)
            # with BENCH_TMPDIR kept, an earlier run's journal would have the
            # primary serve that run's last serial, not the file's
            shutil.rmtree(workdir, ignore_errors=True)
            primary = P.PRIMARIES[args.primary](workdir, origin, args.primary_cpus, zone.main)
            try:
                t = primary.start_until(zone.serial, timeout=args.start_timeout)
                B.log("%s: %s primary serves serial %d after %.1f s" % (
                    label, args.primary, zone.serial, t))
                turns = [(p, name) for p in range(args.passes)
                         for name in args.secondaries.split(",")]
                for i, (p, name) in enumerate(turns):
                    # every secondary gets a zone of the same size, within 0.1%
                    if i and len(zone.added) > zone.delegations // 1000:
                        zone.revert()
                        primary.reload()
                        probe = P.SerialProbe(primary.port, origin, 0.5)
                        served = probe.wait(zone.serial, args.round_timeout, 0.01)
                        probe.close()
                        if served is None:
                            raise RuntimeError("the primary did not serve serial %d" % zone.serial)
                    if args.passes > 1:
                        B.log("%s: pass %d of %d, %s" % (label, p + 1, args.passes, name))
                    passed = [p + 1] if args.passes > 1 else []  # the table's pass column
                    rows += [row + passed for row in run_secondary(args, name, primary, zone, tmp)]
            finally:
                primary.stop()
            if not keep:
                shutil.rmtree(zone.dir, ignore_errors=True)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print("primary: %s (CPUs %s); each secondary alone on CPUs %s; %d rounds a size" % (
        args.primary, args.primary_cpus, args.secondary_cpus, args.rounds))
    print(B.table(["zone", "secondary", "AXFR in s", "steady RSS MiB", "changes",
                   "NOTIFY→serving median ms", "max ms", "peak RSS MiB", "RSS after MiB"] +
                  (["pass"] if args.passes > 1 else []), rows))
    if args.passes > 1:
        print(pass_ratios(rows, args.secondaries.split(",")))


def pass_ratios(rows, names):
    """The first secondary's median over each other's, pass by pass: the
    two measured minutes apart, in the same phase of the machine."""
    medians = {}
    for row in rows:
        if row[5] != "":  # a failed secondary's row has none
            medians[(row[0], row[4], row[-1], row[1])] = float(row[5])
    lines = []
    for zone, count, p, name in sorted(medians):
        if name == names[0]:
            continue
        first = medians.get((zone, count, p, names[0]))
        if first is not None:
            lines.append("%s, %s changes, pass %d: %s %.1f ms against %s %.1f ms, %.2f×" % (
                zone, count, p, names[0], first, name, medians[(zone, count, p, name)],
                first / medians[(zone, count, p, name)]))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
