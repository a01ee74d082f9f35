#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side by side: apexd, NSD, Knot DNS and the reflector floor under the
same dnsperf load.

  contrib/bench/side-by-side.py [--seconds 10] [--rounds 3]
                                [--servers apexd,nsd,knot,reflector]
                                [--zones root,nu.nsec3] [--do 0,1]

A reflector variant (contrib/bench/reflector.c, reflector_uring.c) is
a server named PROGRAM=OPTIONS, measured next to the others, e.g.
  --servers "reflector,reflector=-m block,reflector_uring=-o send -k"
apexd of another build is "apexd=BUILDDIR", e.g. the build before a
change beside this one:
  --servers "apexd,apexd=/path/to/the/other/build,reflector"

Each server runs with one worker pinned to CPU 0 (taskset), dnsperf is
pinned to CPU 1.  For every zone and DO setting the servers are measured
in turn, the order rotating each round, for --rounds rounds of
--seconds each.  Reported per server: median QPS, queries lost, average
latency, and the server's CPU time (utime + stime of all its processes,
from /proc/PID/stat) per answered query, and its user and system
parts; then apexd's CPU per query as a
multiple of the better of NSD and Knot and of the reflector.  Build
first (make), see contrib/bench/benchlib.py for the environment.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


class ReflectorVariant(B.Reflector):
    """The reflector or reflector_uring with options: "PROGRAM=OPTIONS"."""

    def __init__(self, workdir, zones, spec):
        program, _, options = spec.partition("=")
        if program not in ("reflector", "reflector_uring"):
            raise ValueError("not a reflector: %s" % spec)
        self.program = program
        self.options = options.split()
        self.name = re.sub(r"[^A-Za-z0-9_-]+", "_", spec)  # its directory
        super().__init__(workdir, zones)
        self.name = spec

    def command(self):
        return ([os.path.join(B.BUILDDIR, "contrib", "bench", self.program)] + self.options +
                [B.LOOPBACK, str(self.port), "3600"])


def make_server(name, tmp, zones):
    if name in B.SERVERS:
        return B.SERVERS[name](tmp, zones)
    if name.startswith("apexd="):
        return B.ApexdBuild(tmp, zones, name)
    return ReflectorVariant(tmp, zones, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--servers", default="apexd,nsd,knot,reflector")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--do", default="0,1")
    args = ap.parse_args()
    if not (0 < args.seconds <= 120 and 0 < args.rounds <= 20):
        ap.error("--seconds in (0, 120], --rounds in 1..20")
    names = args.servers.split(",")
    tmp = B.scratch_dir()
    results = []  # (zone, do, server, median dict)

    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        qfile = B.query_file(tmp, label, zones, mix)
        servers = []
        try:
            for n in names:
                s = make_server(n, tmp, zones)
                B.log("%s: starting %s" % (label, n))
                s.start()
                B.log("%s: %s ready in %.2f s on port %d" % (label, n, s.ready_seconds, s.port))
                servers.append(s)
            for do in [int(x) for x in args.do.split(",")]:
                runs = {s.name: [] for s in servers}
                for r in range(args.rounds):
                    order = servers[r % len(servers):] + servers[:r % len(servers)]
                    for s in order:
                        res = B.measure(s, qfile, args.seconds, bool(do))
                        B.log("%s DO=%d round %d %-9s qps %8.0f lost %6d cpu/q %6.2f us" % (
                            label, do, r + 1, s.name, res["qps"], res["lost"],
                            res["cpu_us_per_q"]))
                        runs[s.name].append(res)
                for s in servers:
                    rs = runs[s.name]
                    med = {k: B.median([x[k] for x in rs])
                           for k in ("qps", "lost", "latency_us", "cpu_us_per_q",
                                     "user_us_per_q", "sys_us_per_q")}
                    results.append((label, do, s.name, med))
        finally:
            for s in servers:
                s.stop()

    rows = []
    for label, do, name, med in results:
        rows.append([label, do, name, "%.0f" % med["qps"], "%.0f" % med["lost"],
                     "%.0f" % med["latency_us"], "%.2f" % med["cpu_us_per_q"],
                     "%.2f" % med["user_us_per_q"], "%.2f" % med["sys_us_per_q"]])
    print(B.table(["zone", "DO", "server", "QPS", "lost", "latency us", "CPU us/query",
                   "user us/q", "system us/q"], rows))

    # apexd against the others, same zone and DO
    ratio_rows = []
    for label, do, name, med in results:
        if name != "apexd" and not name.startswith("apexd="):
            continue
        peers = {n: m["cpu_us_per_q"] for l, d, n, m in results if l == label and d == do}
        best = min([peers[n] for n in ("nsd", "knot") if n in peers and peers[n] > 0],
                   default=0)
        floor = peers.get("reflector", 0)
        ratio_rows.append([label, do, name, "%.2f" % med["cpu_us_per_q"],
                           "%.2f" % best if best else "-",
                           "%.2f" % (med["cpu_us_per_q"] / best) if best else "-",
                           "%.2f" % floor if floor else "-",
                           "%.2f" % (med["cpu_us_per_q"] / floor) if floor else "-"])
    if ratio_rows:
        print()
        print(B.table(["zone", "DO", "server", "apexd us/q", "best peer us/q", "x best peer (<= 0.70)",
                       "reflector us/q", "x reflector (<= 1.25)"], ratio_rows))


if __name__ == "__main__":
    main()
