# SPDX-License-Identifier: BSD-3-Clause
"""The soak's run, in order:

 1. a private temporary directory: the 1M-record nu. zone decompressed
    there, or generated and signed there when it is absent
    (signed_zone.py), the root zone and apexd's own zone (soak.example.)
    beside it;
 2. a dnstap collector (dnstap_collector.py), Knot DNS as the primary of
    nu. and the root zone (primary.py), apexd -n 2 as their secondary and
    the primary of soak.example. (secondary.py);
 3. apexd's capacity over UDP measured for 5 s (or --qps given); the load
    is half of it over UDP, and a twentieth of that over TCP (load.py);
 4. the baseline phase (a tenth of the duration, 20 to 300 s): the load
    and the checks, no churn;
 5. the churn phase (the rest): the same, with every task of churn.py;
 6. apexd must then serve the last serial of each zone, stop cleanly, and
    the table is printed.

Every process is stopped by its PID and the directory removed at the end,
also on a failure or Ctrl-C (--keep keeps the directory).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import checks, churn, content, dnsutil, load, primary, procs, signed_zone
from .dnstap_collector import read_counts
from .periodic import Periodic
from .report import report
from .secondary import SecondaryApexd

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
import benchlib as B  # noqa: E402

OWN_ZONE = "soak.example."


def seconds(text):
    """300, 300s, 5m, 1h -> seconds."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", text.strip())
    if not m:
        raise argparse.ArgumentTypeError("a duration: 300, 300s, 5m or 1h")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


def arguments(argv):
    ap = argparse.ArgumentParser(prog="soak", description="apexd with everything at once.")
    ap.add_argument("duration_pos", nargs="?", type=seconds, metavar="DURATION")
    ap.add_argument("--duration", type=seconds, help="300, 5m, 1h (default 5m)")
    ap.add_argument("--qps", type=float, help="UDP queries per second (default: half of "
                    "apexd's capacity, measured)")
    ap.add_argument("--ixfr-interval", type=float, default=4.0)
    ap.add_argument("--reload-interval", type=float, default=30.0)
    ap.add_argument("--reconfig-interval", type=float, default=60.0)
    ap.add_argument("--rss-bound", type=float, default=32.0,
                    help="how far apexd's RSS may rise after warm-up, in MiB: the rise of "
                         "its least-squares line over the seconds fitted (default 32)")
    ap.add_argument("--fd-bound", type=float, default=8.0,
                    help="how far its open descriptors may rise after warm-up, the same "
                         "way (default 8)")
    ap.add_argument("--loss-bound", type=float, default=1.0,
                    help="answers lost under churn at most this many percentage points "
                         "above the baseline's (default 1)")
    ap.add_argument("--samples", help="write apexd's RSS and descriptors, one line a "
                    "second, to this CSV file")
    ap.add_argument("--generate", action="store_true", help="generate and sign the nu. "
                    "zone even when the synthetic one is there")
    ap.add_argument("--generate-records", type=int, default=1000000, metavar="N",
                    help="records of the nu. zone generated (default 1000000)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args(argv)
    args.duration = args.duration or args.duration_pos or 300.0
    if args.duration < 60:
        ap.error("the soak needs at least 60 s")
    if args.generate_records < 1000:
        ap.error("--generate-records: at least 1000")
    return args


def zone_ns(path, origin):
    """The sorted NS targets of origin in a zone file."""
    out = []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[0] == origin and fields[3] == "NS":
                out.append(fields[4].lower())
            elif out and fields and fields[0] != origin:
                break
    return sorted(out)


class Soak:
    def __init__(self, args, tmp, processes):
        self.args = args
        self.tmp = tmp
        self.procs = processes
        self.stop = threading.Event()
        self.threads = []

    def setup(self):
        nu_source, self.nu_zone = signed_zone.nu_zone(self.tmp, self.args.generate,
                                                      self.args.generate_records)
        root_source = os.path.join(B.SRCDIR, "zones", "root.zone")
        secondary_dir = os.path.join(self.tmp, "copies")
        os.makedirs(secondary_dir)
        nu_copy = os.path.join(secondary_dir, "nu.zone")
        root_copy = os.path.join(secondary_dir, "root.zone")
        shutil.copyfile(nu_source, nu_copy)
        shutil.copyfile(root_source, root_copy)
        own_path = os.path.join(self.tmp, "soak.example.zone")
        self.histories = {
            "nu.": content.ZoneHistory("nu.", primary.soa_fields(nu_source)[3]),
            ".": content.ZoneHistory(".", primary.soa_fields(root_source)[3]),
            OWN_ZONE: content.ZoneHistory(OWN_ZONE, 1),
        }
        churn.own_zone_start(self.histories[OWN_ZONE], own_path)
        self.ns_sets = {"nu.": zone_ns(nu_source, "nu."), ".": zone_ns(root_source, "."),
                        OWN_ZONE: ["ns1." + OWN_ZONE]}
        B.log("soak: query file")
        self.queryfile = load.query_file(self.tmp, nu_source, root_source)

        apex_port, knot_port, metrics_port = B.free_port(), B.free_port(), B.free_port()
        self.apexd = SecondaryApexd(self.procs, self.tmp, B.BUILDDIR, apex_port, metrics_port,
                                    knot_port)
        self.apexd.secondaries = [("nu.", nu_copy, True), (".", root_copy, False)]
        self.apexd.primaries = [(OWN_ZONE, own_path)]
        self.collector_counts = os.path.join(self.tmp, "dnstap.counts")
        self.collector = self.procs.start(
            [sys.executable, "-B", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "dnstap_collector.py"),
             self.apexd.dnstap_sock, self.collector_counts],
            log_path=os.path.join(self.tmp, "dnstap.log"))
        if not procs.wait_until(lambda: os.path.exists(self.apexd.dnstap_sock), 30):
            raise RuntimeError("the dnstap collector did not listen")
        B.log("soak: Knot DNS, the primary")
        self.knot = primary.KnotPrimary(self.procs, self.tmp,
                                        [("nu.", nu_source), (".", root_source)],
                                        knot_port, apex_port).start()
        B.log("soak: apexd -n 2")
        t0 = time.monotonic()
        self.apexd.start()
        self.load_seconds = time.monotonic() - t0
        B.log("soak: apexd serves every zone after %.1f s" % self.load_seconds)
        self.churn = churn.Churn(self.apexd, self.knot, self.histories, OWN_ZONE, own_path,
                                 self.tmp)

    def rates(self):
        if self.args.qps:
            self.capacity = None
            udp = self.args.qps
        else:
            self.capacity = load.capacity(self.procs, self.tmp, self.apexd.port,
                                          self.queryfile)
            if self.capacity <= 0:
                raise RuntimeError("dnsperf measured no capacity")
            udp = self.capacity / 2
        self.udp_qps, self.tcp_qps = udp, max(50.0, udp / 20)
        B.log("soak: capacity %s q/s; load %.0f q/s UDP, %.0f q/s TCP" % (
            "%.0f" % self.capacity if self.capacity else "not measured", self.udp_qps,
            self.tcp_qps))

    def start_checks(self):
        self.sampler = checks.Sampler(self.apexd.port, self.histories, self.ns_sets)
        self.prober = checks.GapProber(self.apexd.port, "nu.", self.stop)
        self.resources = checks.Resources(self.apexd)
        self.threads += [Periodic("sampler", 1.0, self.sampler.sample, self.stop),
                         Periodic("resources", 1.0, self.resources.sample, self.stop),
                         self.prober]
        for t in self.threads:
            t.start()

    def start_churn(self):
        a = self.args
        c = self.churn
        self.tasks = {
            "IXFR (nu. every interval, root every second)": Periodic("ixfr", a.ixfr_interval,
                                                                     c.ixfr, self.stop),
            "zone-file reload of %s" % OWN_ZONE: Periodic("reload", a.reload_interval,
                                                          c.reload, self.stop, 5.0),
            "reconfig adding and removing %s" % churn.RECONFIG_ZONE: Periodic(
                "reconfig", a.reconfig_interval, c.reconfig, self.stop, 10.0),
            "metrics scrape": Periodic("metrics", 5.0, c.scrape, self.stop),
            "vanishing TCP clients": Periodic("vanishing", 1.0, c.vanishing_clients, self.stop),
        }
        for t in self.tasks.values():
            t.start()
        self.threads += list(self.tasks.values())

    def phase(self, name, length, loadgen):
        self.prober.phase = name
        self.resources.phase = name
        loadgen.start(name, length)
        deadline = time.monotonic() + length
        while time.monotonic() < deadline:
            if not self.apexd.alive():
                raise RuntimeError("apexd exited (%s) during the %s phase" % (
                    self.apexd.proc.returncode, name))
            time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        return loadgen.finish(60)

    def run(self):
        self.setup()
        self.rates()
        loadgen = load.Load(self.procs, self.tmp, self.apexd.port, self.queryfile,
                            self.udp_qps, self.tcp_qps)
        self.baseline_s = min(300.0, max(20.0, self.args.duration / 10))
        self.churn_s = self.args.duration - self.baseline_s
        self.start_checks()
        B.log("soak: baseline, %.0f s without churn" % self.baseline_s)
        self.results = {"baseline": self.phase("baseline", self.baseline_s, loadgen)}
        self.churn_t0 = self.resources.samples[-1][0] if self.resources.samples else 0.0
        B.log("soak: churn, %.0f s" % self.churn_s)
        self.start_churn()
        self.results["churn"] = self.phase("churn", self.churn_s, loadgen)
        self.stop.set()
        for t in self.threads:
            t.join(120)
        self.caught_up = self.wait_caught_up()
        self.final_metrics = self.churn.metrics
        rc = procs.Processes.stop(self.apexd.proc)
        self.apexd_exit = rc
        procs.Processes.stop(self.collector)
        self.dnstap = read_counts(self.collector_counts)
        self.explained, self.unexplained = checks.log_lines(self.apexd.log)

    def wait_caught_up(self, bound=120):
        """{origin: (served serial, last made)} once apexd serves the last
        serial of every zone, or after bound seconds."""
        def state():
            return {o: (dnsutil.soa_serial(self.apexd.port, o), h.latest())
                    for o, h in self.histories.items()}
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            s = state()
            if all(served == last for served, last in s.values()):
                return s
            time.sleep(0.5)
        return state()


def main(argv):
    args = arguments(argv)
    procs.raise_on_signals()
    tmp = tempfile.mkdtemp(prefix="apex-soak-")
    processes = procs.Processes()
    soak = Soak(args, tmp, processes)
    try:
        soak.run()
    except (procs.Interrupted, RuntimeError, OSError, subprocess.SubprocessError) as e:
        B.log("soak: stopped: %s" % e)
        return 2
    finally:
        procs.ignore_signals()  # a second Ctrl-C must not cut the clean-up short
        soak.stop.set()
        processes.stop_all()
        if args.keep:
            B.log("soak: kept %s" % tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.samples and getattr(soak, "resources", None) is not None:
        with open(args.samples, "w") as f:
            f.write("seconds,phase,rss_bytes,fds\n")
            f.writelines("%.1f,%s,%d,%d\n" % s for s in soak.resources.samples)
    table, failures = report(soak)
    print(table)
    for f in failures:
        print("FAIL: %s" % f)
    print("soak: %s" % ("FAILED" if failures else "passed"))
    return 1 if failures else 0
