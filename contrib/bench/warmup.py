#!/usr/bin/python3
"""Warm-up: queries per second in each of the first seconds after start
and after a reload, against steady state.

  contrib/bench/warmup.py [--servers apexd,nsd,knot] [--zones root,nu.nsec3]
                          [--do 0] [--seconds 16] [--reload-at 8]

As soon as a server answers (it is polled every 20 ms while it loads),
dnsperf starts (pinned to CPU 1, statistics every second).  For apexd,
the zone file (a copy in the scratch directory, touched first) is
reloaded with SIGHUP at --reload-at seconds.  Each second's QPS and the
server's CPU time per query in that second (from /proc/PID/stat, sampled
every second) are reported; steady state is the median of the seconds
before the reload, leaving out the first three.  On this two-core
set-up dnsperf caps the QPS, so the CPU per query is the more sensitive
sign of a cold start (page faults, cold caches, lazy initialisation).
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402


def run(server, qfile, seconds, dnssec, reload_at, reload_file):
    cmd = ["taskset", "-c", B.CLIENT_CPU, "dnsperf", "-s", B.LOOPBACK, "-p", str(server.port),
           "-d", qfile, "-l", str(seconds), "-S", "1", "-t", "2", "-D" if dnssec else "-e"]
    cpu = [(time.time(), server.cpu_seconds())]
    perf = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reload_time = None
    t0 = time.time()
    while perf.poll() is None and time.time() - t0 < seconds + 30:
        time.sleep(0.25)
        now = time.time()
        if now - cpu[-1][0] >= 1.0:
            cpu.append((now, server.cpu_seconds()))
        if reload_at and reload_time is None and now - t0 >= reload_at:
            os.utime(reload_file)
            server.proc.send_signal(signal.SIGHUP)
            reload_time = time.time()
    if perf.poll() is None:
        perf.kill()
    out = perf.communicate()[0].decode("utf-8", "replace")
    # "<unix time>: <qps>" once a second; the first line is the start
    ticks = [(float(a), float(b)) for a, b in
             re.findall(r"^(\d+\.\d+): ([\d.]+)$", out, re.M)]
    seconds_out = []
    for i in range(1, len(ticks)):
        t_end, qps = ticks[i]
        t_start = ticks[i - 1][0]
        # server CPU in [t_start, t_end], interpolated from the samples
        used = cpu_between(cpu, t_start, t_end)
        queries = qps * (t_end - t_start)
        seconds_out.append((t_end - ticks[0][0], qps,
                            used / queries * 1e6 if queries > 0 else 0))
    return seconds_out, (reload_time - ticks[0][0]) if reload_time and ticks else None


def cpu_between(samples, a, b):
    def at(t):
        for (t1, c1), (t2, c2) in zip(samples, samples[1:]):
            if t1 <= t <= t2:
                return c1 + (c2 - c1) * (t - t1) / (t2 - t1) if t2 > t1 else c1
        return samples[-1][1] if t > samples[-1][0] else samples[0][1]
    return at(b) - at(a)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--do", type=int, default=0)
    ap.add_argument("--seconds", type=int, default=16)
    ap.add_argument("--reload-at", type=float, default=8)
    args = ap.parse_args()
    if not 8 <= args.seconds <= 120:
        ap.error("--seconds in 8..120")
    tmp = B.scratch_dir()
    rows = []
    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        qfile = B.query_file(tmp, label, zones, mix)
        # a private copy of the zone file, so that a reload sees a change
        copy = os.path.join(tmp, "warmup-" + os.path.basename(zones[0][1]))
        if not os.path.exists(copy):
            shutil.copyfile(zones[0][1], copy)
        zcopy = [(zones[0][0], copy)]
        for name in args.servers.split(","):
            server = B.SERVERS[name](tmp, zcopy)
            server.start()
            try:
                per_second, reload_t = run(server, qfile, args.seconds, bool(args.do),
                                           args.reload_at if name == "apexd" else 0, copy)
            finally:
                server.stop()
            cut = reload_t if reload_t is not None else args.seconds + 1
            steady = [q for t, q, c in per_second if 3 < t <= cut]
            steady_cpu = [c for t, q, c in per_second if 3 < t <= cut]
            sq, sc = B.median(steady), B.median(steady_cpu)
            B.log("%s %s: ready %.2f s; per second: %s" % (
                label, name, server.ready_seconds,
                " ".join("%.0f" % q for _, q, _ in per_second)))
            first = per_second[:5]
            after = [x for x in per_second if reload_t is not None and x[0] > reload_t][:5]
            for what, xs in (("start", first), ("reload", after)):
                if not xs:
                    continue
                rows.append([label, name, what, "%.0f" % sq] +
                            ["%.0f%%/%.1f" % (100 * q / sq if sq else 0, c) for _, q, c in xs] +
                            [""] * (5 - len(xs)) + ["%.2f" % sc])
    print("Each second after start/reload: QPS as % of steady / server CPU us per query")
    print(B.table(["zone", "server", "after", "steady QPS", "s1", "s2", "s3", "s4", "s5",
                   "steady CPU us/q"], rows))


if __name__ == "__main__":
    main()
