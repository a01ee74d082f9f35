#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Engine scaling without sockets: contrib/bench/engine_bench on both
zones, DO=0 and DO=1.

  contrib/bench/scaling.py [--threads N] [--seconds 5] [--zones root,nu.nsec3]

For 1..N threads (default: one per CPU) every thread answers the
pre-built query messages of the deterministic mix with apex_answer(),
in process.  Reported: queries/s, the ratio to one thread, and queries
per CPU-second of each thread (flat when nothing is shared; on a machine
where other work steals CPU time, the wall-clock ratio understates the
scaling and this column does not).
"""

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--zones", default="root,nu.nsec3")
    args = ap.parse_args()
    tmp = B.scratch_dir()
    bench = os.path.join(B.BUILDDIR, "contrib", "bench", "engine_bench")
    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        qfile = B.query_file(tmp, label, zones, mix)
        for do in (0, 1):
            cmd = [bench, "-s", str(args.seconds), "-t", str(args.threads), "-q", qfile]
            cmd += ["-D"] if do else []
            for origin, path in zones:
                cmd += ["-z", "%s=%s" % (origin, path)]
            print("## %s, DO=%d" % (label, do), flush=True)
            subprocess.run(cmd, check=True,
                           timeout=600 + args.seconds * args.threads * 2)


if __name__ == "__main__":
    main()
