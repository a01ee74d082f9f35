#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""User-space instructions per answered query, under callgrind.

  contrib/bench/instructions.py [--queries 10000] [--servers apexd,nsd,knot]
                                [--zones root] [--do 0,1]

Each server runs twice under valgrind --tool=callgrind: once loading
its zones and answering one pass of the fixed query file (dnsperf -n 1,
the first --queries lines of the deterministic mix), once with a second
pass of the same file.  The difference of the instructions executed
(Ir, every thread and process of the server) divided by the answers of
the second pass is the figure: user-space instructions per answered
query, warm, independent of what else runs on the machine.  The profile files stay in the scratch
directory (callgrind_annotate FILE shows where the instructions go).
"""

import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def total_ir(pattern):
    total = 0
    for path in glob.glob(pattern):
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"totals:\s+(\d+)", line)
                if m:
                    total += int(m.group(1))
                    break
    return total


def run_once(cls, tmp, zones, qfile, dnssec, tag, measured):
    """One server run under callgrind: start (load), a warm-up pass over
    qfile, and, if measured, a second pass.  Returns (Ir of every process
    of the server, answers of the second pass)."""
    outdir = os.path.join(tmp, "callgrind", tag)
    os.makedirs(outdir, exist_ok=True)
    for old in glob.glob(os.path.join(outdir, "callgrind.out.*")):
        os.unlink(old)
    wrapper = ["valgrind", "--tool=callgrind",
               "--callgrind-out-file=%s/callgrind.out.%%p" % outdir]
    server = cls(os.path.join(tmp, "callgrind"), zones, wrapper=wrapper)
    server.start()
    res = {"completed": 0, "lost": 0}
    try:
        B.dnsperf(server.port, qfile, runs=1, dnssec=dnssec, outstanding=20, timeout_s=10)
        if measured:
            res, _ = B.dnsperf(server.port, qfile, runs=1, dnssec=dnssec, outstanding=20,
                               timeout_s=10)
    finally:
        server.stop()
    return total_ir(os.path.join(outdir, "callgrind.out.*")), res


def measure(cls, tmp, zones, qfile, dnssec):
    """Instructions of the second pass: the difference between a run with
    one pass and a run with two (start-up, zone load, the first-touch
    costs of the warm-up pass and shutdown cancel out).  NSD's forked
    server processes cannot be switched on and off with callgrind_control,
    hence the difference rather than toggling instrumentation."""
    tag = "%s-do%d" % (cls.name, int(dnssec))
    base, _ = run_once(cls, tmp, zones, qfile, dnssec, tag + "-base", False)
    total, res = run_once(cls, tmp, zones, qfile, dnssec, tag, True)
    return total - base, res["completed"], res["lost"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--zones", default="root")
    ap.add_argument("--do", default="0,1")
    args = ap.parse_args()
    if not 100 <= args.queries <= 200000:
        ap.error("--queries in 100..200000")
    tmp = B.scratch_dir()
    rows = []
    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        full = B.query_file(tmp, label, zones, mix)
        qfile = os.path.join(tmp, "%s.first%d" % (label, args.queries))
        with open(full) as src, open(qfile, "w") as dst:
            for i, line in enumerate(src):
                if i >= args.queries:
                    break
                dst.write(line)
        for do in [int(x) for x in args.do.split(",")]:
            for name in args.servers.split(","):
                B.log("%s DO=%d: %s under callgrind" % (label, do, name))
                ir, done, lost = measure(B.SERVERS[name], tmp, zones, qfile, bool(do))
                per = ir / done if done else 0
                B.log("%s DO=%d %s: %d instructions, %d answered, %d lost: %.0f per query" % (
                    label, do, name, ir, done, lost, per))
                rows.append([label, do, name, "%d" % done, "%d" % lost, "%.0f" % per])
    print(B.table(["zone", "DO", "server", "answered", "lost", "instructions/query"], rows))


if __name__ == "__main__":
    main()
