#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Many small zones on one server: start time and memory per zone, apexd
vs NSD vs Knot DNS, one server at a time.

  contrib/bench/many_zones.py [--zones 10000] [--servers apexd,nsd,knot]
                              [--repeat 3] [--cpu SECONDS]

--zones generated zones (a registry back-end's TLDs: each an SOA, two
name servers and their addresses, a web and a mail host, and 6 to 96
delegations with glue, 20 to 200 records; the same seed every run) are
given to each server in its configuration.  Start: the time from exec
until the first, a middle and the last zone answer an SOA query (polled
every 20 ms); then every zone is checked to answer, untimed.  Memory:
the proportional set size (PSS, /proc/PID/smaps_rollup) of the server's
processes once every zone answers; per zone, beyond one zone: the PSS of
the run with every zone less that of a run with the first zone alone,
over the zones added.  Medians of --repeat runs.

--cpu SECONDS: in each run, once the memory is read, dnsperf (pinned to
the other CPU) sends a fixed mix for SECONDS, four queries a zone (its
SOA, the web host's A, an A below a delegation: a referral, and a name
that does not exist), every zone's shuffled together; the run with one
zone gets that zone's four.  The server's CPU time (user + system) per
answered query is reported for both: with queries spread over every
zone, and the single-zone case.
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def generate(tmp, count):
    """count zone files in tmp/many-zones; [(origin, path)] and the records."""
    d = os.path.join(tmp, "many-zones-%d" % count)
    os.makedirs(d, exist_ok=True)
    rng = random.Random(9432)
    zones, records = [], 0
    for i in range(count):
        origin = "tld%05d." % i
        path = os.path.join(d, origin + "zone")
        lines = ["$ORIGIN " + origin, "$TTL 3600",
                 "@ SOA ns1 hostmaster 1 3600 900 604800 300", "@ NS ns1", "@ NS ns2",
                 "ns1 A 192.0.2.1", "ns2 A 192.0.2.2", "www A 192.0.2.80", "@ MX 10 mail",
                 "mail A 192.0.2.25"]
        for n in range(rng.randint(6, 96)):
            lines += ["d%d NS ns.d%d" % (n, n), "ns.d%d A 198.51.100.%d" % (n, n % 250 + 1)]
        records += len(lines) - 2
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        zones.append((origin, path))
    return zones, records


def pss(server):
    total = 0
    for pid in server.pids():
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def probing(cls):
    """cls, configured with every zone but waited for on three (a first, a
    middle and the last: polling thousands would be most of the time
    measured)."""

    class Probing(cls):
        def __init__(self, tmp, zones):
            super().__init__(tmp, zones)
            self.every_zone = zones
            self.zones = [zones[0], zones[len(zones) // 2], zones[-1]]
            if self.name == "apexd":
                self.workers = 2

        def command(self):
            probes, self.zones = self.zones, self.every_zone
            try:
                return super().command()
            finally:
                self.zones = probes

    return Probing


def query_file(tmp, zones):
    """dnsperf's input: four queries for each of zones, shuffled with a
    fixed seed (see --cpu)."""
    path = os.path.join(tmp, "many-zones-queries-%d" % len(zones))
    lines = []
    for origin, _ in zones:
        lines += ["%s SOA" % origin, "www.%s A" % origin, "x.d1.%s A" % origin,
                  "none.%s A" % origin]
    random.Random(9433).shuffle(lines)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def run(cls, tmp, zones, cpu_seconds):
    """Start to answering (s), PSS once every zone answers (bytes), and
    with cpu_seconds the server's CPU per answered query (µs) under a
    mix spread over the zones, else None."""
    server = probing(cls)(tmp, zones)
    server.start(timeout=600)
    try:
        missing = [o for o, _ in zones if not B.answers(server.port, o, timeout=1)]
        if missing:
            raise RuntimeError("%s: %d zones not answering, e.g. %s" % (
                server.name, len(missing), missing[0]))
        time.sleep(0.5)
        memory, cpu = pss(server), None
        if cpu_seconds > 0:
            res = B.measure(server, query_file(tmp, zones), cpu_seconds, False)
            if res["completed"] == 0 or res["lost"] > res["completed"] / 100:
                raise RuntimeError("%s: %d answered, %d lost" % (
                    server.name, res["completed"], res["lost"]))
            cpu = res["cpu_us_per_q"]
        return server.ready_seconds, memory, cpu
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zones", type=int, default=10000)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cpu", type=float, default=0)
    args = ap.parse_args()
    if not 2 <= args.zones <= 100000 or not 1 <= args.repeat <= 10 or not 0 <= args.cpu <= 60:
        ap.error("--zones in 2..100000, --repeat in 1..10, --cpu in 0..60")
    tmp = B.scratch_dir()
    zones, records = generate(tmp, args.zones)
    B.log("%d zones, %d records" % (len(zones), records))
    rows = []
    for name in args.servers.split(","):
        starts, mems, ones, cpus, cpus_one = [], [], [], [], []
        for _ in range(args.repeat):
            _, one, cpu_one = run(B.SERVERS[name], tmp, zones[:1], args.cpu)
            seconds, memory, cpu = run(B.SERVERS[name], tmp, zones, args.cpu)
            starts.append(seconds)
            mems.append(memory)
            ones.append(one)
            cpus.append(cpu)
            cpus_one.append(cpu_one)
            B.log("%s: %.2f s, PSS %.0f MiB (one zone: %.1f MiB)%s" % (
                name, seconds, memory / 2**20, one / 2**20,
                ", CPU %.2f µs/query (one zone: %.2f)" % (cpu, cpu_one) if args.cpu else ""))
        s, m, o = B.median(starts), B.median(mems), B.median(ones)
        row = [name, len(zones), "%.2f (%.2f-%.2f)" % (s, min(starts), max(starts)),
               "%.0f" % (m / 2**20), "%.0f" % ((m - o) / (len(zones) - 1)),
               "%.0f" % ((m - o) / records)]
        if args.cpu:
            row += ["%.2f (%.2f-%.2f)" % (B.median(cpus), min(cpus), max(cpus)),
                    "%.2f (%.2f-%.2f)" % (B.median(cpus_one), min(cpus_one), max(cpus_one))]
        rows.append(row)
    headers = ["server", "zones", "start to all answering s (range)", "PSS MiB",
               "bytes per zone beyond one", "bytes per record beyond one"]
    if args.cpu:
        headers += ["CPU µs/query, every zone (range)", "CPU µs/query, one zone (range)"]
    print(B.table(headers, rows))


if __name__ == "__main__":
    main()
