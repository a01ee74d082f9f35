#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Warm-up: queries per second in each of the first seconds after start
and after a reload, against steady state.

  contrib/bench/warmup.py [--servers apexd,nsd,knot] [--zones root,nu.nsec3]
                          [--do 0] [--seconds 16] [--reload-at 8]
                          [--after 6] [--runs 1] [--set KEY=VALUE ...]

As soon as a server answers (it is polled every 20 ms while it loads),
dnsperf starts (pinned to CPU 1, statistics every second).  For apexd,
the zone file (a copy in the scratch directory, touched first) is
reloaded with SIGHUP at --reload-at seconds; dnsperf then runs until the
reload has finished (the "loaded from" line in apexd's log) and --after
seconds more, at most 180 s.  Each second's QPS and the server's CPU
time per query in that second (from /proc/PID/stat, sampled about every
second) are reported; steady state is the median of the seconds before
the reload, leaving out the first three, and of those after it has
finished, leaving out the first (other load on a shared machine drifts).
On this two-core set-up dnsperf caps the QPS, so the CPU per query is
the more sensitive sign of a cold start (page faults, cold caches, lazy
initialisation); with --do 1 on nu.nsec3 apexd's worker is the one
saturated, the case in which a reload's priority shows.

For apexd, every second until the reload has finished is listed, with
the CPU per query of the serving threads alone (every live thread but
apexd-reload and the loader threads it starts, which inherit its name;
the process's figure counts the reload's own work), their run-queue wait
per query (from /proc/PID/task/TID/schedstat: time runnable but not
running, which a reload at a too high priority adds to) and the share of
a CPU the reload threads had.  The reload's duration is given from the
SIGHUP to apexd's log line, and as apexd reports it.  While the reload
runs, the threads are sampled from /proc/PID/task: how many load, and at
which nice value and scheduling policy.

--set KEY=VALUE (repeatable) puts apex.conf(5) server settings in a
configuration file for apexd, e.g. --set reload-priority=10 to compare
with the default (idle); --runs repeats everything and gives the spread.
On a machine shared with other load, --paired SECONDS compares the two
within one run (as root): after --reload-at seconds of steady state,
apexd reloads back to back for SECONDS while the reload threads are
switched between SCHED_IDLE and nice 10 every 3 s.
"""

import argparse
import calendar
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

RELOAD_THREAD = "apexd-reload"
RELOAD_MAX_SECONDS = 180
POLICIES = {0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle", 6: "deadline"}


class ApexdWarm(B.Apexd):
    """apexd with a configuration file holding --set's server settings."""

    settings = []

    def command(self):
        cmd = super().command()
        if self.settings:
            conf = os.path.join(self.workdir, "apex.conf")
            with open(conf, "w") as f:
                f.write("server:\n" + "".join("    %s: %s\n" % kv for kv in self.settings))
            cmd[1:1] = ["-c", conf]
        return cmd + ["-s", "none"]


def threads(pid):
    """[(comm, cpu seconds, nice, policy, run-queue wait seconds)] of the
    live threads of pid."""
    out = []
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                text = f.read()
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                wait = int(f.read().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            continue  # ended meanwhile
        comm = text[text.index("(") + 1:text.rindex(")")]
        fields = text.rsplit(")", 1)[1].split()  # fields[0] is field 3 of proc(5)
        cpu = (int(fields[11]) + int(fields[12])) / B.CLK_TCK
        out.append((comm, cpu, int(fields[16]), int(fields[38]), wait))
    return out


def log_loaded(path):
    """Times (unix) of apexd's "zone ... loaded from" lines, and the load
    seconds each one reports."""
    try:
        with open(path, errors="replace") as f:
            text = f.read()
    except OSError:
        return []
    found = []
    for stamp, ms, secs in re.findall(
            r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z apexd \w+: zone \S+ loaded from .*?"
            r"([\d.]+) s, [\d.]+ MiB$", text, re.M):
        t = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S")) + int(ms) / 1000
        found.append((t, float(secs)))
    return found


def run(server, qfile, seconds, dnssec, reload_at, reload_file, after):
    """One dnsperf run; returns (per second [(end s, qps, cpu us/q, serving
    cpu us/q, serving threads' run-queue wait us/q, CPU share of the reload
    threads)], reload info or None)."""
    limit = seconds if not reload_at else reload_at + RELOAD_MAX_SECONDS + after
    cmd = ["taskset", "-c", B.CLIENT_CPU, "dnsperf", "-s", B.LOOPBACK, "-p", str(server.port),
           "-d", qfile, "-l", str(limit), "-S", "1", "-t", "2", "-D" if dnssec else "-e"]
    pid = server.proc.pid
    per_thread = isinstance(server, B.Apexd)
    log_path = os.path.join(server.workdir, "log")

    def sample():
        ts = [t for t in threads(pid) if t[0] != RELOAD_THREAD] if per_thread else []
        total = server.cpu_seconds()
        serving = sum(t[1] for t in ts) if per_thread else total
        return (time.time(), total, serving, sum(t[4] for t in ts), total - serving)

    cpu = [sample()]
    perf = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    reload = None
    loaded_before = 0
    seen = set()      # (comm, nice, policy) of threads while the reload ran
    most = 0          # most threads named apexd-reload at once
    t0 = time.time()
    stop_at = t0 + seconds
    while perf.poll() is None and time.time() - t0 < limit + 30:
        time.sleep(0.25)
        now = time.time()
        if now - cpu[-1][0] >= 1.0:
            cpu.append(sample())
        if reload_at and reload is None and now - t0 >= reload_at:
            loaded_before = len(log_loaded(log_path))
            os.utime(reload_file)
            server.proc.send_signal(signal.SIGHUP)
            reload = {"start": time.time()}
            stop_at = reload["start"] + RELOAD_MAX_SECONDS
        if reload is not None and "end" not in reload:
            ts = threads(pid)
            seen.update((t[0], t[2], t[3]) for t in ts)
            most = max(most, sum(1 for t in ts if t[0] == RELOAD_THREAD))
            loads = log_loaded(log_path)
            if len(loads) > loaded_before:
                reload["end"], reload["apexd_s"] = loads[loaded_before]
                stop_at = max(reload["end"] + after, t0 + seconds)
        if now >= stop_at:
            perf.send_signal(signal.SIGINT)  # dnsperf prints what it has and ends
            break
    try:
        out = perf.communicate(timeout=30)[0].decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        perf.kill()
        out = perf.communicate()[0].decode("utf-8", "replace")
    if reload is not None:
        reload["threads"] = sorted(seen)
        reload["loaders"] = most
    # "<unix time>: <qps>" once a second; the first line is the start
    ticks = [(float(a), float(b)) for a, b in
             re.findall(r"^(\d+\.\d+): ([\d.]+)$", out, re.M)]
    seconds_out = []
    for i in range(1, len(ticks)):
        t_end, qps = ticks[i]
        t_start = ticks[i - 1][0]
        # server CPU in [t_start, t_end], interpolated from the samples
        queries = qps * (t_end - t_start)
        per_q = [cpu_between(cpu, k, t_start, t_end) / queries * 1e6 if queries > 0 else 0
                 for k in (1, 2, 3)]
        share = cpu_between(cpu, 4, t_start, t_end) / (t_end - t_start) * 100
        seconds_out.append((t_end - ticks[0][0], qps, per_q[0], per_q[1], per_q[2], share))
    if reload is not None and ticks:
        reload["at"] = reload["start"] - ticks[0][0]
        if "end" in reload:
            reload["end_at"] = reload["end"] - ticks[0][0]
    return seconds_out, reload


def set_reload_priority(pid, state):
    """Put the reload threads of pid under SCHED_IDLE ("idle") or
    SCHED_OTHER at nice 10 ("nice10"); needs root (CAP_SYS_NICE)."""
    for tid in [t for t in os.listdir("/proc/%d/task" % pid)]:
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                if f.read().strip() != RELOAD_THREAD:
                    continue
            if state == "idle":
                os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
            else:
                os.sched_setscheduler(int(tid), os.SCHED_OTHER, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, int(tid), 10)
        except (FileNotFoundError, ProcessLookupError):
            pass  # ended meanwhile


def run_paired(server, qfile, dnssec, steady_s, seconds, period=3):
    """steady_s seconds of queries, then reloads back to back for seconds,
    the reload threads switched every period seconds between SCHED_IDLE and
    nice 10, then steady again until the last reload has finished and
    steady_s more.  Returns {state: [QPS % of steady of each dnsperf second
    inside one window]} and the QPS ratios nice10/idle of adjacent windows."""
    pid = server.proc.pid
    log_path = os.path.join(server.workdir, "log")
    limit = 2 * steady_s + seconds + RELOAD_MAX_SECONDS
    perf = subprocess.Popen(["taskset", "-c", B.CLIENT_CPU, "dnsperf", "-s", B.LOOPBACK, "-p",
                             str(server.port), "-d", qfile, "-l", str(limit), "-S", "1",
                             "-t", "2", "-D" if dnssec else "-e"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    windows = []  # (start, end, state)
    try:
        t0 = time.time()
        time.sleep(steady_s)
        pending = len(log_loaded(log_path)) + 1
        state, t_state = "idle", time.time()
        set_reload_priority(pid, state)
        server.proc.send_signal(signal.SIGHUP)
        while time.time() - t0 < steady_s + seconds:
            time.sleep(0.05)
            if len(log_loaded(log_path)) >= pending:
                pending += 1
                server.proc.send_signal(signal.SIGHUP)
            set_reload_priority(pid, state)  # loader threads started meanwhile
            if time.time() - t_state >= period:
                windows.append((t_state, time.time(), state))
                state, t_state = ("nice10" if state == "idle" else "idle"), time.time()
                set_reload_priority(pid, state)
        windows.append((t_state, time.time(), state))
        set_reload_priority(pid, "nice10")  # finish the last load soon
        deadline = time.time() + RELOAD_MAX_SECONDS
        while len(log_loaded(log_path)) < pending and time.time() < deadline:
            time.sleep(0.1)
        t_after = time.time() + 1
        time.sleep(steady_s + 1)
    finally:
        perf.send_signal(signal.SIGINT)
        out = perf.communicate(timeout=60)[0].decode("utf-8", "replace")
    ticks = [(float(a), float(b)) for a, b in
             re.findall(r"^(\d+\.\d+): ([\d.]+)$", out, re.M)]
    secs = [(ticks[i - 1][0], ticks[i][0], ticks[i][1]) for i in range(1, len(ticks))]
    steady = B.median([q for a, b, q in secs
                       if (t0 + 3 < a and b <= windows[0][0]) or a >= t_after])
    per_state, means = {"idle": [], "nice10": []}, []
    for w0, w1, st in windows:
        qs = [q for a, b, q in secs if w0 <= a and b <= w1]
        per_state[st] += [pct(q, steady) for q in qs]
        if qs:
            means.append((st, sum(qs) / len(qs)))
    ratios = [b[1] / a[1] for a, b in zip(means, means[1:])
              if a[0] == "idle" and b[0] == "nice10" and a[1] > 0]
    return per_state, ratios


def cpu_between(samples, k, a, b):
    def at(t):
        for s1, s2 in zip(samples, samples[1:]):
            t1, c1, t2, c2 = s1[0], s1[k], s2[0], s2[k]
            if t1 <= t <= t2:
                return c1 + (c2 - c1) * (t - t1) / (t2 - t1) if t2 > t1 else c1
        return samples[-1][k] if t > samples[-1][0] else samples[0][k]
    return at(b) - at(a)


def pct(q, steady):
    return 100 * q / steady if steady else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--do", type=int, default=0)
    ap.add_argument("--seconds", type=int, default=16,
                    help="dnsperf's length at least (a reload lengthens it)")
    ap.add_argument("--reload-at", type=float, default=8)
    ap.add_argument("--after", type=int, default=6,
                    help="seconds measured after the reload has finished")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="an apex.conf server setting for apexd (repeatable)")
    ap.add_argument("--paired", type=int, default=0, metavar="SECONDS",
                    help="instead: reload apexd back to back for SECONDS, switching the "
                         "reload threads between idle and nice 10 every 3 s (root only)")
    args = ap.parse_args()
    if not 8 <= args.seconds <= 120:
        ap.error("--seconds in 8..120")
    if not 5 <= args.reload_at < args.seconds:
        ap.error("--reload-at in 5..seconds (steady state is measured before it)")
    if not 1 <= args.runs <= 10 or not 1 <= args.after <= 30:
        ap.error("--runs in 1..10, --after in 1..30")
    ApexdWarm.settings = [tuple(s.split("=", 1)) for s in args.set if "=" in s]
    if len(ApexdWarm.settings) != len(args.set):
        ap.error("--set KEY=VALUE")
    servers = dict(B.SERVERS, apexd=ApexdWarm)
    tmp = B.scratch_dir()
    rows, series, spread = [], [], {}
    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        qfile = B.query_file(tmp, label, zones, mix)
        # a private copy of the zone file, so that a reload sees a change
        copy = os.path.join(tmp, "warmup-" + os.path.basename(zones[0][1]))
        if not os.path.exists(copy):
            shutil.copyfile(zones[0][1], copy)
        zcopy = [(zones[0][0], copy)]
        for run_no in range(1, args.runs + 1):
            if args.paired:
                server = servers["apexd"](tmp, zcopy)
                server.start()
                try:
                    per_state, ratios = run_paired(server, qfile, bool(args.do),
                                                   args.reload_at, args.paired)
                finally:
                    server.stop()
                q = lambda v, fmt="%.0f%%": " ".join(fmt % x for x in statistics.quantiles(
                    v, n=4)) if len(v) >= 2 else "-"
                rows.append([label, run_no, len(per_state["idle"]), q(per_state["idle"]),
                             len(per_state["nice10"]), q(per_state["nice10"]), len(ratios),
                             q(ratios, "%.2f")])
                continue
            for name in args.servers.split(","):
                server = servers[name](tmp, zcopy)
                server.start()
                try:
                    per_second, reload = run(server, qfile, args.seconds, bool(args.do),
                                             args.reload_at if name == "apexd" else 0, copy,
                                             args.after)
                finally:
                    server.stop()
                cut = reload["at"] if reload else args.seconds + 1
                before = [x for x in per_second if 3 < x[0] <= cut]
                # and the seconds after the reload has finished (the first
                # one left out): other load on the machine drifts
                if reload is not None and "end_at" in reload:
                    before += [x for x in per_second if x[0] - 1 > reload["end_at"] + 1]
                sq = B.median([x[1] for x in before])
                sc = B.median([x[2] for x in before])
                ss = B.median([x[3] for x in before]) if name == "apexd" else None
                sw = B.median([x[4] for x in before]) if name == "apexd" else None
                B.log("%s %s run %d: ready %.2f s; per second: %s" % (
                    label, name, run_no, server.ready_seconds,
                    " ".join("%.0f" % x[1] for x in per_second)))
                parts = [("start", per_second[:5], None)]
                if reload is not None and "at" in reload:
                    end = reload.get("end_at", per_second[-1][0] if per_second else 0)
                    # every second that overlaps the reload, and the next one
                    during = [x for x in per_second if x[0] > reload["at"] and x[0] - 1 < end]
                    upto = [x for x in per_second if x[0] > reload["at"]][:len(during) + 1]
                    parts.append(("reload", upto, (reload, during, end - reload["at"])))
                    B.log("%s %s run %d: threads while reloading: %s; %d loading at most" % (
                        label, name, run_no, ", ".join(
                            "%s nice %d %s" % (c, n, POLICIES.get(p, p))
                            for c, n, p in reload["threads"]), reload["loaders"]))
                for what, xs, rl in parts:
                    if not xs:
                        continue
                    cells = ["%.0f%%/%.1f" % (pct(x[1], sq), x[2]) for x in xs[:5]]
                    cells += [""] * (5 - len(cells))
                    during_min = during_mean = during_wait = duration = apexd_s = ""
                    if rl is not None:
                        reload, during, duration = rl
                        qs = [pct(x[1], sq) for x in during]
                        if qs:
                            during_min = "%.0f%%" % min(qs)
                            during_mean = "%.0f%%" % (sum(qs) / len(qs))
                            wait = sum(x[4] for x in during) / len(during)
                            during_wait = "%.2f" % wait
                            key = (label, name, what)
                            spread.setdefault(key, []).append(
                                (pct(xs[0][1], sq), min(qs), sum(qs) / len(qs), duration,
                                 wait - sw))
                        duration = "%.1f" % duration if "end" in reload else "> %.0f" % duration
                        apexd_s = "%.1f" % reload["apexd_s"] if "apexd_s" in reload else "-"
                    elif xs:
                        spread.setdefault((label, name, what), []).append(
                            (pct(xs[0][1], sq), None, None, None, None))
                    rows.append([label, name, run_no, what, "%.0f" % sq] + cells +
                                [during_min, during_mean, "%.2f" % sc,
                                 "%.2f" % ss if ss is not None else "-",
                                 "%.2f" % sw if sw is not None else "-", during_wait, duration,
                                 apexd_s])
                    if rl is not None:
                        series += [[label, name, run_no, "%.0f" % (x[0] - reload["at"]),
                                    "%.0f%%" % pct(x[1], sq), "%.1f" % x[2], "%.1f" % x[3],
                                    "%.1f" % x[4], "%.0f%%" % x[5]] for x in xs]
    if args.paired:
        print("Reloads back to back, the reload threads switched between SCHED_IDLE and\n"
              "nice 10 every 3 s: QPS % of steady (quartiles) of the seconds inside a\n"
              "window, and the QPS ratio nice10/idle of each window and the one before")
        print(B.table(["zone", "run", "idle s", "idle QPS %", "nice10 s", "nice10 QPS %",
                       "pairs", "nice10/idle"], rows))
        return
    print("Each second after start/reload: QPS as % of steady / server CPU us per query;\n"
          "min and mean QPS % over the seconds the reload overlaps; steady CPU us/q of the\n"
          "process and of its serving threads, and the serving threads' run-queue wait\n"
          "us/q, steady and while reloading; reload seconds (SIGHUP to the log line) and\n"
          "as apexd reports it")
    print(B.table(["zone", "server", "run", "after", "steady QPS", "s1", "s2", "s3", "s4",
                   "s5", "min reloading", "mean reloading", "steady us/q",
                   "serving us/q", "wait us/q", "wait reloading", "reload s", "apexd s"], rows))
    if series:
        print("\nEvery second after the reload (s: end of the second after SIGHUP; wait:\n"
              "the serving threads' time runnable but not running; reload CPU: the share of\n"
              "a CPU the reload threads had)")
        print(B.table(["zone", "server", "run", "s", "QPS %", "process us/q",
                       "serving us/q", "wait us/q", "reload CPU"], series))
    if args.runs > 1:
        out = []
        for (label, name, what), vals in spread.items():
            def rng(i, fmt):
                v = [x[i] for x in vals if x[i] is not None]
                return (fmt % min(v)) + " to " + (fmt % max(v)) if v else "-"
            out.append([label, name, what, len(vals), rng(0, "%.0f%%"), rng(1, "%.0f%%"),
                        rng(2, "%.0f%%"), rng(4, "%+.2f"), rng(3, "%.1f")])
        print("\nSpread over the runs (extra wait: wait us/q while reloading minus steady)")
        print(B.table(["zone", "server", "after", "runs", "s1", "min reloading",
                       "mean reloading", "extra wait us/q", "reload s"], out))


if __name__ == "__main__":
    main()
