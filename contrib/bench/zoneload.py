#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Zone load: time to serve and peak resident memory, apexd vs NSD vs Knot.

  contrib/bench/zoneload.py [--servers apexd,nsd,knot] [--zones root,nu.nsec3]
                            [--repeat 3] [--cpus 0,1]

Each server is started on the zone alone, free to use --cpus (every CPU
by default: loading may use several threads) and polled with an SOA
query every 20 ms; the time from exec to the first answer is the load
time, and the CPU time (user + system, every thread) the server has
used by then is its load CPU time: on a machine shared with other work
the wall-clock time moves with what else runs, the CPU time much less.
Peak memory is VmHWM of the server process that holds the zone
(the largest of its processes), and serving memory its VmRSS, both read
once it serves; per record they are divided by the records in the file.  Medians of --repeat runs.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def count_records(path):
    """Records in a master file written one record per line."""
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if line.strip() and line[:1] not in (b";", b"$"):
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpus", default="0-%d" % (os.cpu_count() - 1))
    args = ap.parse_args()
    if not 1 <= args.repeat <= 10:
        ap.error("--repeat in 1..10")
    tmp = B.scratch_dir()
    rows = []
    for label, zones, _ in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        records = count_records(zones[0][1])
        for name in args.servers.split(","):
            times, cpus, peaks, rss = [], [], [], []
            for _ in range(args.repeat):
                cls = B.SERVERS[name]
                server = cls(tmp, zones, cpus=args.cpus)
                if name == "apexd":
                    server.workers = 2
                server.start()
                try:
                    times.append(server.ready_seconds)
                    cpus.append(server.cpu_seconds())
                    peaks.append(server.memory_peak())
                    rss.append(max(B.proc_status(p, "VmRSS") for p in server.pids()))
                finally:
                    server.stop()
                B.log("%s %s: %.2f s, %.2f CPU s, %.0f MB" % (label, name, times[-1], cpus[-1],
                                                             peaks[-1] / 2**20))
            t, m, r = B.median(times), B.median(peaks), B.median(rss)
            rows.append([label, records, name, "%.2f (%.2f-%.2f)" % (t, min(times), max(times)),
                         "%.2f" % B.median(cpus), "%.0f" % (m / 2**20),
                         "%.0f" % (m / records), "%.0f" % (r / 2**20), "%.0f" % (r / records)])
    print(B.table(["zone", "records", "server", "load s (range)", "load CPU s", "peak RSS MB", "peak B/record",
                   "RSS serving MB", "serving B/record"], rows))


if __name__ == "__main__":
    main()
