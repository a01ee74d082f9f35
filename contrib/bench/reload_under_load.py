#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Reloads under load: queries lost at the server's sockets, side by side.

For apexd (reload-priority idle and 0; and with the kernel's default
receive buffers, apexd-kbuf), NSD and Knot DNS, each with two
workers on a loopback port, for each zone:

  fj.  (NSEC3, 13k records, the bundled zones/fj.zone): dnsperf sends the
       TLD query mix at --fj-qps (default 20,000) for --seconds (default 12)
       while the zone is reloaded --fj-reloads times (default 10), each time
       from a new version of the file (the next serial);
  nu.  (NSEC3, 1M records, ../shared/zones/nu.nsec3.synthetic.zone.xz):
       the same with --nu-reloads (default 3) at --nu-qps (default 10,000,
       about half of what two workers answer on a 2-core machine with
       dnsperf beside them).

and the same runs without reloads.  Per run: the datagrams the kernel
dropped at the server's UDP sockets (the `drops` column of /proc/net/udp
for its port, before and after), the queries dnsperf lost, how long each
reload took under the load (from the request to the new serial being
answered), and the server's peak resident memory (VmHWM, summed over its
processes).  For apexd, what its statistics say too: the kernel drops it
counted, its longest stall and the time its workers spent picking up new
zone versions (the only lock they take).

    /usr/bin/python3 contrib/bench/reload_under_load.py [--servers apexd,apexd-nice0,nsd,knot]
                                                        [--zones fj,nu]

APEX_BUILDDIR (default: the source tree) names where apexd and apexctl
are; APEX_ZONES (default ../shared/zones) where the nu. zone is.  Only
loopback traffic; every process started is stopped by its PID.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRCDIR, "contrib", "bench-reload"))
import reload_bench as R  # noqa: E402

BUILDDIR = os.environ.get("APEX_BUILDDIR", SRCDIR)
ZONES = os.environ.get("APEX_ZONES", os.path.join(SRCDIR, "..", "shared", "zones"))


class ApexdIdle(R.Apexd):
    """apexd as shipped: reload-priority idle, 8 MiB receive buffers."""
    name = "apexd"
    priority = "idle"
    receive_buffer = None  # the default

    def command(self):
        cmd = super().command()
        conf = os.path.join(self.dir, "apex.conf")
        with open(conf, "w") as f:
            f.write("server:\n    reload-priority: %s\n" % self.priority)
            if self.receive_buffer is not None:
                f.write("    receive-buffer-size: %d\n" % self.receive_buffer)
        return cmd[:1] + ["-c", conf] + cmd[1:]

    def stats(self):
        out = subprocess.run([os.path.join(BUILDDIR, "apexctl"), "-s", self.sock, "--json",
                              "stats"], capture_output=True, text=True, timeout=60)
        return json.loads(out.stdout)["total"] if out.returncode == 0 else {}


class ApexdNice0(ApexdIdle):
    name = "apexd-nice0"
    priority = "0"


class ApexdKernelBuffers(ApexdIdle):
    """apexd with the kernel's default receive buffers (receive-buffer-size: 0)."""
    name = "apexd-kbuf"
    receive_buffer = 0


SERVERS = {"apexd": ApexdIdle, "apexd-nice0": ApexdNice0, "apexd-kbuf": ApexdKernelBuffers,
           "nsd": R.Nsd, "knot": R.Knot}


def udp_drops(port):
    """The drops of the UDP sockets bound to port (IPv4), summed."""
    total = 0
    with open("/proc/net/udp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if int(fields[1].split(":")[1], 16) == port:
                total += int(fields[12])
    return total


def peak_rss(pid):
    """VmHWM in bytes of pid and its children (NSD forks its servers)."""
    total = 0
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                                    text=True).stdout.split()]
    for p in pids:
        try:
            with open("/proc/%d/status" % p) as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def set_serial(text, serial):
    """The zone text with its SOA serial replaced (the first SOA record)."""
    return re.sub(r"(\sSOA\s+\S+\s+\S+\s+)(\d+)", lambda m: m.group(1) + str(serial), text, count=1)


def versions(path, count):
    """The zone's text and its serial, then count more versions (serial + i)."""
    with open(path) as f:
        text = f.read()
    serial = int(re.search(r"\sSOA\s+\S+\s+\S+\s+(\d+)", text).group(1))
    return text, serial, [set_serial(text, serial + i) for i in range(1, count + 1)]


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def dnsperf(port, queryfile, qps, seconds, out):
    with open(out, "w") as f:
        return subprocess.Popen(["dnsperf", "-s", "127.0.0.1", "-p", str(port), "-d", queryfile,
                                 "-l", str(seconds), "-Q", str(qps), "-c", "4", "-q", "500",
                                 "-t", "2"], stdout=f, stderr=subprocess.STDOUT)


def lost(out):
    text = open(out).read()
    m = re.search(r"Queries lost:\s+(\d+)", text)
    sent = re.search(r"Queries sent:\s+(\d+)", text)
    return int(m.group(1)) if m else -1, int(sent.group(1)) if sent else 0


def one_run(server, origin, queryfile, qps, seconds, reloads, texts, first_serial):
    """dnsperf for `seconds`, reloading `reloads` times spread over it."""
    drops0 = udp_drops(server.port)
    out = os.path.join(server.dir, "dnsperf-%d.out" % reloads)
    perf = dnsperf(server.port, queryfile, qps, seconds, out)
    times = []
    if reloads:
        gap = seconds / (reloads + 1)
        for i in range(reloads):
            time.sleep(gap * 0.5)
            serial = first_serial + i + 1
            write_atomically(server.zonefile, texts[i])
            t0 = time.monotonic()
            ctl = server.reload()
            deadline = t0 + R.RELOAD_TIMEOUT
            while R.soa_serial(server.port, 1.0, origin) != serial and time.monotonic() < deadline:
                time.sleep(0.01)
            times.append(time.monotonic() - t0)
            ctl.wait(60)
            time.sleep(max(0.0, gap * 0.5 - times[-1]))
    perf.wait(seconds + 60)
    queries_lost, sent = lost(out)
    return {"drops": udp_drops(server.port) - drops0, "lost": queries_lost, "sent": sent,
            "reload_s": times}


def measure(cls, workdir, origin, zonefile, queryfile, qps, seconds, reloads):
    base, serial, texts = versions(zonefile, reloads)
    d = os.path.join(workdir, "%s-%s" % (cls.name, origin.strip(".") or "root"))
    os.makedirs(d, exist_ok=True)
    served = os.path.join(d, "zone")
    write_atomically(served, base)
    server = cls(d, served, origin)
    server.start()
    try:
        quiet = one_run(server, origin, queryfile, qps, seconds, 0, [], serial)
        loaded = one_run(server, origin, queryfile, qps, seconds, reloads, texts, serial)
        stats = server.stats() if hasattr(server, "stats") else {}
        rss = peak_rss(server.proc.pid)
    finally:
        server.stop()
    return quiet, loaded, stats, rss


def zone_file(label, tmp):
    if label == "fj":
        return "fj.", os.path.join(SRCDIR, "zones", "fj.zone")
    path = os.path.join(tmp, "nu.zone")
    if not os.path.exists(path):
        with open(path, "wb") as f:
            subprocess.run(["xz", "-dc", os.path.join(ZONES, "nu.nsec3.synthetic.zone.xz")],
                           stdout=f, check=True, timeout=600)
    return "nu.", path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", default="apexd,apexd-nice0,nsd,knot")
    ap.add_argument("--zones", default="fj,nu")
    ap.add_argument("--seconds", type=int, default=12)
    ap.add_argument("--fj-qps", type=int, default=20000)
    ap.add_argument("--fj-reloads", type=int, default=10)
    ap.add_argument("--nu-qps", type=int, default=10000)
    ap.add_argument("--nu-reloads", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="apex-reload-load-")
    rows = []
    for label in args.zones.split(","):
        origin, path = zone_file(label, tmp)
        queryfile = os.path.join(tmp, "%s.queries" % label)
        subprocess.run([sys.executable, os.path.join(HERE, "querygen.py"), "tld", path, "100000",
                        queryfile], check=True, timeout=600)
        qps = args.fj_qps if label == "fj" else args.nu_qps
        reloads = args.fj_reloads if label == "fj" else args.nu_reloads
        for name in args.servers.split(","):
            print("%s: %s, %d reloads at %d queries/s" % (label, name, reloads, qps),
                  file=sys.stderr, flush=True)
            quiet, loaded, stats, rss = measure(SERVERS[name], tmp, origin, path, queryfile, qps,
                                                args.seconds, reloads)
            times = loaded["reload_s"]
            apex = ""
            if stats:
                apex = "%d / %.1f ms / %.3f ms" % (stats.get("kernel_drops", 0),
                                                   stats.get("stall_max_ns", 0) / 1e6,
                                                   stats.get("lock_wait_ns", 0) / 1e6)
            rows.append([label, name, quiet["drops"], quiet["lost"], loaded["drops"],
                         loaded["lost"], "%d of %d" % (loaded["lost"], loaded["sent"]),
                         "%.2f–%.2f" % (min(times), max(times)) if times else "-",
                         "%.0f" % (rss / 2**20), apex])
    headers = ["zone", "server", "socket drops, no reload", "lost, no reload",
               "socket drops, reloads", "lost, reloads", "lost of sent", "reload s (min–max)",
               "peak RSS MiB", "apexd: kernel drops / longest stall / lock wait"]
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")


if __name__ == "__main__":
    main()
