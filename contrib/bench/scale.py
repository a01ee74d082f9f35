#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""TLD scale: start-to-answer time and memory of a large unsigned TLD,
apexd vs Knot DNS vs NSD, side by side.

  contrib/bench/scale.py [--sizes 1,3,10,20] [--servers apexd,knot,nsd]
                         [--repeat 1] [--seed 1]

For each size (millions of records) a synthetic unsigned TLD is generated
once into the scratch directory (BENCH_TMPDIR to keep it between runs),
seeded, shaped as issue "TLD scale" describes a large TLD: every
delegation has two NS records; one in five has a DS; one in 33 has its
name servers inside the delegated name, with an A record of glue each;
the others point to name servers of a few thousand hosting domains
outside the zone.  That is about 2.26 records per delegation.

Each server loads the zone alone, free to use every CPU (apexd -n 2,
Knot with a background worker per CPU, NSD with one server process), and
is polled with an SOA query every 20 ms: the time from exec to the first
answer is the load time.  Then its peak (VmHWM) and steady (VmRSS) memory
are read, divided by the records for bytes per record; µs/record is the
load time per record.  apexd runs with -v, so its log gives the parse
time, where the build's time went step by step (lib/zone/build_profile.h),
and the precomputation after it, printed in a second table.  Sizes are run in order; a server that does
not answer within 20 minutes is reported as such.

--memory says what the memory a load asks for has been doing before it.
On a virtual machine whose host takes back the guest's free memory (a
balloon with free page reporting, as on the machines of
doc/performance.md), a page the guest has not used for some seconds
costs the host a fault of its own on first touch: about 0.7 GB/s
against 8 to 15 GB/s for memory freed a moment before.  A load writes
gigabytes, so which it gets can double its time, and the order of the
runs would decide it (a small zone loaded just after a large one gets
warm memory, the large one after it cold).  So before each load:
  warm  (the default) touch and free more memory than the load will
        write (512 bytes a record and at least 1 GiB, at most half of
        what is available; apexd writes about 310 bytes a record):
        what a machine without such a host always gives;
  cold  wait --cold-seconds (20) idle: what a server starting on such a
        virtual machine gets;
  as-is do nothing.
"""

import argparse
import ctypes
import mmap
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

ORIGIN = "scale-tld."
RECORDS_PER_DELEGATION = 2 + 0.2 + 2.0 / 33


def generate(path, records, seed, origin=ORIGIN):
    """Write the synthetic TLD of about `records` records to path, under
    origin; returns the exact count."""
    rnd = random.Random(seed)
    delegations = int(records / RECORDS_PER_DELEGATION)
    hosts = ["dns%d.%s.example." % (i, "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz")
                                                  for _ in range(8))) for i in range(4000)]
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    count = 0
    with open(path + ".tmp", "w") as f:
        f.write("$ORIGIN %s\n$TTL 86400\n" % origin)
        f.write("@ SOA a.nic hostmaster 1 1800 900 604800 86400\n@ NS a.nic\n@ NS b.nic\n"
                "a.nic A 192.0.2.1\nb.nic A 192.0.2.2\n")
        count += 5
        out = []
        for i in range(delegations):
            # distinct names: a seeded random stem and the index in base 36
            n, idx = i, ""
            while True:
                idx = letters[n % 36] + idx
                n //= 36
                if n == 0:
                    break
            name = "".join(rnd.choice(letters[:26]) for _ in range(rnd.randint(3, 10))) + idx
            if i % 33 == 0:
                out.append("%s NS ns1.%s\n%s NS ns2.%s\nns1.%s A 10.%d.%d.1\n"
                           "ns2.%s A 10.%d.%d.2\n" % (name, name, name, name, name,
                                                       (i >> 8) & 255, i & 255, name,
                                                       (i >> 8) & 255, i & 255))
                count += 4
            else:
                a, b = rnd.sample(hosts, 2)
                out.append("%s NS %s\n%s NS %s\n" % (name, a, name, b))
                count += 2
            if i % 5 == 0:
                out.append("%s DS %d 13 2 %064x\n" % (name, 1 + i % 65000, rnd.getrandbits(256)))
                count += 1
            if len(out) >= 100000:
                f.write("".join(out))
                out = []
        f.write("".join(out))
    os.rename(path + ".tmp", path)
    return count


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def warm_memory(nbytes):
    """Write nbytes of fresh memory (in huge pages where the kernel gives
    them) and free it, so that the next load's pages are ones this machine
    has just used."""
    m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        m.madvise(mmap.MADV_HUGEPAGE)
    buf = (ctypes.c_char * nbytes).from_buffer(m)
    ctypes.memset(ctypes.addressof(buf), 1, nbytes)
    del buf
    m.close()


def prepare_memory(mode, records, cold_seconds):
    if mode == "warm":
        warm_memory(min(max(512 * records, 1 << 30), available_bytes() // 2))
    elif mode == "cold":
        time.sleep(cold_seconds)


class ApexdVerbose(B.Apexd):
    """apexd -n 2 -v: its log says how the load went."""

    workers = 2

    def command(self):
        return super().command() + ["-v"]

    def profile(self):
        with open(os.path.join(self.workdir, "log"), errors="replace") as f:
            text = f.read()
        m = re.search(r"records parsed in ([0-9.]+) s \((\d+) thread\(s\), \d+ MB\), "
                      r"built in ([0-9.]+) s \(([^)]*)\)", text)
        if m is None:
            return None
        steps = dict(zip(m.group(4).split()[0::2], map(float, m.group(4).split()[1::2])))
        pre = re.search(r"answers precomputed and ZONEMD checked in ([0-9.]+) s", text)
        steps["precompute"] = float(pre.group(1)) if pre else 0.0
        return float(m.group(1)), float(m.group(3)), steps


class KnotAllCores(B.Knot):
    """Knot DNS loading with a background worker per CPU (its default)."""

    def command(self):
        cmd = super().command()
        conf = cmd[-1]
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("    background-workers: 1\n", ""))
        return cmd


SERVERS = {"apexd": ApexdVerbose, "knot": KnotAllCores, "nsd": B.Nsd}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1,3,10,20", help="millions of records")
    ap.add_argument("--servers", default="apexd,knot,nsd")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpus", default="0-%d" % (os.cpu_count() - 1))
    ap.add_argument("--memory", choices=["warm", "cold", "as-is"], default="warm",
                    help="the memory's state before each load (see above)")
    ap.add_argument("--cold-seconds", type=float, default=20.0)
    args = ap.parse_args()
    if not 1 <= args.repeat <= 5:
        ap.error("--repeat in 1..5")
    tmp = B.scratch_dir()
    rows, profiles = [], []
    for size in [float(s) for s in args.sizes.split(",")]:
        path = os.path.join(tmp, "scale-%gM-seed%d.zone" % (size, args.seed))
        count_path = path + ".count"
        if not os.path.exists(count_path):
            B.log("generating %gM records into %s" % (size, path))
            with open(count_path, "w") as f:
                f.write("%d\n" % generate(path, int(size * 1e6), args.seed))
        with open(count_path) as f:
            records = int(f.read())
        for name in args.servers.split(","):
            times, peaks, rss = [], [], []
            for _ in range(args.repeat):
                prepare_memory(args.memory, records, args.cold_seconds)
                server = SERVERS[name](tmp, [(ORIGIN, path)], cpus=args.cpus)
                try:
                    server.start(timeout=1200)
                except RuntimeError as e:
                    B.log("%gM %s: %s" % (size, name, e))
                    break
                try:
                    times.append(server.ready_seconds)
                    peaks.append(server.memory_peak())
                    rss.append(max(B.proc_status(p, "VmRSS") for p in server.pids()))
                    if name == "apexd":
                        profiles.append((size, records, server.profile()))
                finally:
                    server.stop()
                B.log("%gM %s: %.1f s, peak %.0f MB" % (size, name, times[-1], peaks[-1] / 2**20))
            if not times:
                rows.append(["%gM" % size, records, name, "no answer", "", "", "", "", ""])
                continue
            t, m, r = B.median(times), B.median(peaks), B.median(rss)
            rows.append(["%gM" % size, records, name, "%.1f" % t, "%.2f" % (t * 1e6 / records),
                         "%.0f" % (m / 2**20), "%.0f" % (m / records), "%.0f" % (r / 2**20),
                         "%.0f" % (r / records)])
    print("memory before each load: %s" % args.memory)
    print(B.table(["size", "records", "server", "start-to-answer s", "µs/record", "peak MB",
                   "peak B/record", "steady MB", "steady B/record"], rows))
    steps = ["sort", "check", "layout", "fill", "index", "hashes", "node-table", "rdata-links",
             "dnssec", "precompute"]
    prow = []
    for size, records, p in profiles:
        if p is None:
            continue
        parse, build, st = p
        prow.append(["%gM" % size, "%.2f" % parse, "%.2f" % build] +
                    ["%.2f" % st.get(s, 0) for s in steps])
    if prow:
        print()
        print(B.table(["size", "parse s", "build s"] + ["%s s" % s for s in steps], prow))


if __name__ == "__main__":
    main()
