#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""AXFR in: a secondary's time from its start to answering a whole zone
received from a primary, apexd beside BIND, Knot DNS and NSD.

  contrib/bench/axfr_in.py [--repeat 3] [--zone nu.nsec3|nu.nsec]
                           [--servers apexd,bind,knot,nsd]

A Knot DNS primary on loopback serves the 1M-record synthetic zone
(decompressed from APEX_ZONEDIR into a scratch directory).  Each
secondary starts with no copy of the zone, one at a time (never two at
once, and never beside another run), on every CPU of the machine
(BENCH_CPUS), as does the primary.  Measured per run: the seconds from
the secondary's start to its first answer with the zone's serial (SOA
queries every 20 ms), the CPU time of the secondary's processes until
then (utime + stime: less noisy than the time on a shared machine), its
peak resident memory (VmHWM) and its resident memory once its copy of the
zone is on disk (1 s after; NSD, which writes none by default: 5 s after
the answer).  Medians of --repeat runs,
the servers taken in turn within each round.
"""

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import peers as P  # noqa: E402

ORIGINS = {"nu.nsec3": "nu.", "nu.nsec": "nu."}


def zone_serial(path):
    """The serial of the zone file's SOA (the first record, as written by
    the synthetic zones' generator: owner TTL class SOA mname rname serial)."""
    with open(path) as f:
        for line in f:
            fields = line.split()
            if "SOA" in fields:
                return int(fields[fields.index("SOA") + 3])
    raise RuntimeError("no SOA in %s" % path)


def one_run(kind, tmp, origin, primary_port, serial, run):
    workdir = os.path.join(tmp, "%s-%d" % (kind, run))
    shutil.rmtree(workdir, ignore_errors=True)
    server = P.SECONDARIES[kind](workdir, origin, primary_port)
    server.wait_serial = serial
    server.start(timeout=300)
    try:
        seconds = server.ready_seconds
        cpu = server.cpu_seconds()
        peak = server.memory_peak()
        # steady: once the secondary has written its copy of the zone
        # (NSD does not by default: 5 s), and a second more
        deadline = time.monotonic() + (5 if kind == "nsd" else 30)
        while not os.path.exists(server.copy) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)
        steady = max(B.proc_status(p, "VmRSS") for p in server.pids())
        peak = max(peak, server.memory_peak())
    finally:
        server.stop()
    shutil.rmtree(workdir, ignore_errors=True)
    B.log("%s run %d: %.3f s, CPU %.2f s, peak %.0f MiB, steady %.0f MiB" % (
        kind, run, seconds, cpu, peak / 2**20, steady / 2**20))
    return seconds, cpu, peak, steady


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--zone", default="nu.nsec3", choices=sorted(ORIGINS))
    ap.add_argument("--servers", default="apexd,bind,knot,nsd")
    args = ap.parse_args()
    kinds = args.servers.split(",")
    for kind in kinds:
        if kind not in P.SECONDARIES:
            sys.exit("unknown server %s (one of %s)" % (kind, ", ".join(P.SECONDARIES)))
    tmp = B.scratch_dir()
    path = B.synthetic_zone(tmp, args.zone)
    if path is None:
        sys.exit("the %s zone is needed (APEX_ZONEDIR)" % args.zone)
    origin = ORIGINS[args.zone]
    serial = zone_serial(path)
    primary = P.KnotPrimary(tmp, [(origin, path)]).start()
    results = {k: [] for k in kinds}
    try:
        for run in range(args.repeat):
            for kind in kinds:
                results[kind].append(one_run(kind, tmp, origin, primary.port, serial, run))
    finally:
        primary.stop()
    rows = []
    for kind in kinds:
        cols = list(zip(*results[kind]))
        rows.append([kind, "%.3f" % B.median(cols[0]),
                     " ".join("%.2f" % s for s in cols[0]), "%.2f" % B.median(cols[1]),
                     "%.0f" % (B.median(cols[2]) / 2**20), "%.0f" % (B.median(cols[3]) / 2**20)])
    print("AXFR in of %s, medians of %d runs" % (args.zone, args.repeat))
    print(B.table(["secondary", "start to answer (s)", "runs (s)", "CPU (s)",
                   "peak RSS (MiB)", "steady RSS (MiB)"], rows))


if __name__ == "__main__":
    main()
