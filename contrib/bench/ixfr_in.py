#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""IXFR into a large zone: time to publish and peak memory, against a
full reload of the same zone.

  contrib/bench/ixfr_in.py [--changes 100,10000] [--repeat 3] [--kind new,update]
                          [--zone nu.nsec3|nu.nsec]
  contrib/bench/ixfr_in.py --rounds 300 [--changes 100] [--pause 0.2]

--rounds N: N IXFRs of --changes new names in a row, the NOTIFY of each
sent once the one before is served (and --pause after it): NOTIFY to
serving (median, max), apexd's RSS at start and after the rounds, against
the RSS of apexd started again on the copy it wrote at stop (a fresh load
of the same content).  The issue's target: within 5%.

apexd (one worker, pinned to BENCH_SERVER_CPU) serves the 1M-record
nu.nsec3 zone (or nu.nsec, signed with NSEC: there each new name gets an
NSEC) as a secondary of the primary in queries_during_transfers.py
(--kind new: each new serial removes the delegations the one before added
and adds --changes new ones, names the zone did not have; --kind update:
each new serial gives --changes existing delegations, spread over the
zone, an NS record in place of the one the serial before gave them, a
change to existing names only, which apexd derives in place).  For each size: the primary makes a new serial and
sends a NOTIFY; measured is the time from the NOTIFY to the new serial
being answered (SOA queries every 5 ms), and apexd's peak resident memory
(VmHWM, reset before each step through /proc/PID/clear_refs) against its
resident memory before.  Each step begins --pause seconds (default 3) after
the one before, once apexd has rewritten its copy of the zone for it (about
0.7 s of the transfer thread for this zone; since 2026-11-27 written
only after copy-flush-interval, 60 s, or at stop), so that a step measures
one change alone.  The same for a reload of the zone file (SIGHUP
with a new serial in the file), the cost an IXFR must beat.  No query
load: this is the cost of the change alone.  Medians of --repeat.

The issue's targets: 100 changes published in at most 50 ms with a peak
of at most 1.2 times the steady memory.
"""

import argparse
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import queries_during_transfers as Q  # noqa: E402


def rss(pid, key):
    """Bytes of /proc/PID/status's key (VmRSS, VmHWM)."""
    return B.proc_status(pid, key)


def reset_peak(pid):
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")  # VmHWM back to the current RSS


def wait_serial(port, serial, bound=600):
    start = time.monotonic()
    while Q.served_serial(port) != serial:
        if time.monotonic() - start > bound:
            raise RuntimeError("serial %d not served within %d s" % (serial, bound))
        time.sleep(0.005)
    return time.monotonic() - start


def step(apex, trigger, serial):
    """Time to serve serial after trigger(), steady RSS before, peak."""
    settle_rss = rss(apex.proc.pid, "VmRSS")
    reset_peak(apex.proc.pid)
    trigger()
    seconds = wait_serial(apex.port, serial)
    time.sleep(0.3)  # the copy and the journal, after the publication
    return seconds, settle_rss, rss(apex.proc.pid, "VmHWM")


def reload_file(path, serial):
    """The zone file with the SOA serial replaced (the first SOA line)."""
    with open(path) as f:
        first = f.readline()
        rest = f.read()
    fields = first.split()
    fields[6] = str(serial)
    with open(path + ".new", "w") as f:
        f.write("\t".join(fields) + "\n" + rest)
    os.rename(path + ".new", path)


# src/apexd/transfers/secondary_internal.h: APEX_SECONDARY_PURGE_DELAY_MS
PURGE_DELAY_S = 3.0


def settled_rss(pid, seconds=3.0):
    """VmRSS once it holds still (a started or changed apexd returns the
    memory of its temporary arrays within a few seconds)."""
    last = rss(pid, "VmRSS")
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss(pid, "VmRSS")
        if abs(now - last) < 256 * 1024:
            return now
        last = now
    return last


def fresh_copy(tmp, source):
    """The secondary's copy of the zone, as the file, without the journal
    an earlier run left beside it (BENCH_TMPDIR)."""
    copy = os.path.join(tmp, "nu.secondary.zone")
    subprocess.run(["cp", source, copy], check=True, timeout=600)
    if os.path.exists(copy + ".jnl"):
        os.unlink(copy + ".jnl")
    return copy


def rounds(args, tmp, source):
    """--rounds N: N IXFRs of --changes new names in a row, each sent once
    the one before is served (--pause after it), the RSS after each; then
    apexd stopped (its copy written at stop: the zone after the last
    round) and started again on that copy, a fresh load of the same
    content, for its RSS."""
    changes = int(args.changes.split(",")[0])
    copy = fresh_copy(tmp, source)
    primary = Q.Primary(source, changes, None, nsec=args.zone == "nu.nsec")
    extra = ["    log-level: %s" % args.log_level]
    apex = Q.SecondaryApexd(tmp, [(Q.ORIGIN, copy)], primary.port, "0", extra).start()
    times, after = [], []
    try:
        start_rss = settled_rss(apex.proc.pid)
        for i in range(args.rounds):
            primary.bump()
            times.append(wait_after(apex, primary))
            time.sleep(args.pause)
            after.append(rss(apex.proc.pid, "VmRSS"))
            if i < 5 or (i + 1) % 50 == 0:
                B.log("round %d: %.1f ms, RSS %.1f MiB" % (i + 1, times[-1] * 1000,
                                                         after[-1] / 2**20))
        # apexd gives the allocator's free memory back 3 s after the last
        # IXFR (APEX_SECONDARY_PURGE_DELAY_MS), not after each: what the
        # rounds leave is measured once that is done
        time.sleep(PURGE_DELAY_S + 1.0)
        end_rss = settled_rss(apex.proc.pid)
    finally:
        apex.stop()
        log = os.path.join(apex.workdir, "log")
        if os.path.exists(log):  # kept beside the fresh load's
            os.replace(log, log + ".rounds")
    fresh = Q.SecondaryApexd(tmp, [(Q.ORIGIN, copy)], primary.port, "0", extra).start()
    try:
        wait_serial(fresh.port, primary.serial, 60)
        fresh_rss = settled_rss(fresh.proc.pid)
    finally:
        fresh.stop()
        primary.stop()
    times_ms = sorted(t * 1000 for t in times)
    print(B.table(["", "value"], [
        ["rounds of %d new names" % changes, "%d" % args.rounds],
        ["NOTIFY to serving, median ms", "%.1f" % B.median(times_ms)],
        ["NOTIFY to serving, max ms", "%.1f" % times_ms[-1]],
        ["RSS at start, MiB", "%.1f" % (start_rss / 2**20)],
        ["RSS after the rounds (settled), MiB", "%.1f" % (end_rss / 2**20)],
        ["RSS after a round, max, MiB", "%.1f" % (max(after) / 2**20)],
        ["RSS of a fresh load of the same zone, MiB", "%.1f" % (fresh_rss / 2**20)],
        ["after the rounds / fresh load", "%.3f" % (end_rss / fresh_rss)],
    ]))


def wait_after(apex, primary):
    """NOTIFY apexd of the primary's serial; seconds until it is served."""
    start = time.monotonic()
    primary.notify(apex.port)
    wait_serial(apex.port, primary.serial)
    return time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--changes", default="100,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kind", default="new,update")
    ap.add_argument("--pause", type=float, default=3.0)
    ap.add_argument("--zone", default="nu.nsec3", choices=["nu.nsec3", "nu.nsec"])
    ap.add_argument("--rounds", type=int, default=0,
                    help="N IXFRs in a row (new names), RSS after them against a fresh load")
    ap.add_argument("--log-level", default="info")
    args = ap.parse_args()
    tmp = B.scratch_dir()
    source = B.synthetic_zone(tmp, args.zone)
    if source is None:
        sys.exit("the %s zone is needed (APEX_ZONEDIR)" % args.zone)
    if args.rounds > 0:
        rounds(args, tmp, source)
        return
    rows = []
    sizes = [int(c) for c in args.changes.split(",")]
    kinds = args.kind.split(",")
    existing = Q.delegation_names(source, max(sizes)) if "update" in kinds else None
    for kind, changes in [(k, c) for k in kinds for c in sizes]:
        copy = fresh_copy(tmp, source)
        primary = Q.Primary(source, changes, existing if kind == "update" else None,
                            nsec=args.zone == "nu.nsec")
        apex = Q.SecondaryApexd(tmp, [(Q.ORIGIN, copy)], primary.port, "0").start()
        try:
            times, ratios = [], []
            for _ in range(args.repeat):
                time.sleep(args.pause)
                primary.bump()
                seconds, steady, peak = step(
                    apex, lambda: primary.notify(apex.port), primary.serial)
                times.append(seconds)
                ratios.append(peak / steady)
                B.log("IXFR of %d changes (%s): %.3f s, peak %.0f MiB over %.0f MiB (%.2fx)" % (
                    changes, kind, seconds, peak / 2**20, steady / 2**20, peak / steady))
            rows.append(["IXFR, %d %s" % (changes, "new names" if kind == "new" else
                                          "updates"), "%.3f" % B.median(times),
                         "%.2f" % B.median(ratios)])
        finally:
            apex.stop()
            primary.stop()
    # the full reload of the same zone, the cost to beat
    path = os.path.join(tmp, "nu.reload.zone")
    subprocess.run(["cp", source, path], check=True, timeout=600)
    apex = B.Apexd(tmp, [(Q.ORIGIN, path)]).start()
    serial = Q.zone_soa(source)[2]
    try:
        times, ratios = [], []
        for _ in range(args.repeat):
            serial += 1
            reload_file(path, serial)
            seconds, steady, peak = step(
                apex, lambda: apex.proc.send_signal(signal.SIGHUP), serial)
            times.append(seconds)
            ratios.append(peak / steady)
            B.log("reload: %.3f s, peak %.0f MiB over %.0f MiB (%.2fx)" % (
                seconds, peak / 2**20, steady / 2**20, peak / steady))
        rows.append(["full reload", "%.3f" % B.median(times), "%.2f" % B.median(ratios)])
    finally:
        apex.stop()
    print(B.table(["change", "seconds to publish", "peak / steady memory"], rows))


if __name__ == "__main__":
    main()
