# SPDX-License-Identifier: BSD-3-Clause
"""Shared pieces of the apex benchmarks (contrib/bench/*.py).

Servers run on free loopback ports with their own files in a private
temporary directory, pinned with taskset, and are stopped by PID.
Every wait is bounded.  Paths come from the environment:

  APEX_BUILDDIR   where apexd and contrib/bench/* were built (default:
                  the source tree this file is in)
  APEX_ZONEDIR    where the *.synthetic.zone.xz files are (default:
                  ../shared/zones next to the source tree)
  BENCH_TMPDIR    scratch directory (default: a new one under $TMPDIR)
"""

import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILDDIR = os.path.abspath(os.environ.get("APEX_BUILDDIR", SRCDIR))
ZONEDIR = os.path.abspath(os.environ.get("APEX_ZONEDIR",
                                         os.path.join(SRCDIR, "..", "shared", "zones")))
LOOPBACK = "127.0.0.1"
CLK_TCK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 600.0   # the 1M-record zone under valgrind takes a while
STOP_TIMEOUT = 15.0
SERVER_CPU = os.environ.get("BENCH_SERVER_CPU", "0")
CLIENT_CPU = os.environ.get("BENCH_CLIENT_CPU", "1")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def scratch_dir():
    d = os.environ.get("BENCH_TMPDIR")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    return tempfile.mkdtemp(prefix="apex-bench-")


def free_port():
    for _ in range(50):
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            tcp.bind((LOOPBACK, 0))
            port = tcp.getsockname()[1]
            try:
                udp.bind((LOOPBACK, port))
            except OSError:
                continue
            return port
        finally:
            tcp.close()
            udp.close()
    raise RuntimeError("no free loopback port")


def soa_query(origin):
    """A minimal SOA query for origin (no EDNS), as bytes."""
    wire = b""
    for label in [l for l in origin.rstrip(".").split(".") if l]:
        wire += bytes([len(label)]) + label.encode()
    wire += b"\0"
    return struct.pack("!HHHHHH", 0x4242, 0, 1, 0, 0, 0) + wire + struct.pack("!HH", 6, 1)


def answers(port, origin, timeout=0.3):
    """True if 127.0.0.1:port answers an SOA query for origin with NOERROR."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(soa_query(origin), (LOOPBACK, port))
            data, _ = s.recvfrom(65535)
        except OSError:
            return False
    return len(data) >= 12 and data[:2] == b"\x42\x42" and (data[3] & 0xf) == 0 \
        and (data[2] & 0x80) != 0


def proc_cpu_seconds(pid, which="both"):
    """utime + stime of a process (all its threads), in seconds; which:
    "user", "system" or "both"."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    user, system = int(fields[11]), int(fields[12])
    return {"user": user, "system": system, "both": user + system}[which] / CLK_TCK


def proc_status(pid, key):
    """A kB value from /proc/PID/status (VmHWM, VmRSS), in bytes."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return 0


def children(pid):
    """Direct child PIDs of pid (NSD's server processes)."""
    out = []
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            out = [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


class Server:
    """One server on 127.0.0.1:port for zones [(origin, file)]."""

    name = "server"

    def __init__(self, workdir, zones, wrapper=(), cpus=None):
        self.cpus = cpus or SERVER_CPU  # taskset CPU list
        self.workdir = os.path.join(workdir, self.name)
        os.makedirs(self.workdir, exist_ok=True)
        self.zones = zones
        self.wrapper = list(wrapper)  # e.g. valgrind
        self.port = None
        self.proc = None
        self.ready_seconds = None

    def command(self):
        raise NotImplementedError

    def launcher(self):
        """What the command runs under: pinned to its CPUs."""
        return ["taskset", "-c", self.cpus]

    def pick_port(self):
        return free_port()

    def ready(self, origin):
        """Whether the server answers the SOA query of origin."""
        return answers(self.port, origin, timeout=0.05)

    def start(self, timeout=START_TIMEOUT):
        """Start pinned to SERVER_CPU; returns when every zone answers."""
        self.port = self.pick_port()
        cmd = self.launcher() + self.wrapper + self.command()
        self.log = open(os.path.join(self.workdir, "log"), "wb")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, cwd=self.workdir)
        pending = [origin for origin, _ in self.zones]
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited at start-up (%s); see %s/log" % (
                    self.name, self.proc.returncode, self.workdir))
            while pending and self.ready(pending[0]):
                pending.pop(0)
            if not pending:
                self.ready_seconds = time.monotonic() - t0
                return self
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("%s did not answer within %.0f s" % (self.name, timeout))

    def pids(self):
        """Every process of the server (NSD forks its workers)."""
        pids = [self.proc.pid]
        for _ in range(3):
            pids += [c for p in pids for c in children(p) if c not in pids]
        return pids

    def cpu_seconds(self, which="both"):
        total = 0.0
        for pid in self.pids():
            try:
                total += proc_cpu_seconds(pid, which)
            except OSError:
                pass
        return total

    def memory_peak(self):
        """Largest VmHWM among the server's processes (forked children share)."""
        return max(proc_status(p, "VmHWM") for p in self.pids())

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT)
        self.log.close()


class Apexd(Server):
    name = "apexd"

    workers = 1

    def command(self):
        cmd = [os.path.join(BUILDDIR, "apexd"), "-f", "-n", str(self.workers),
               "-l", "%s@%d" % (LOOPBACK, self.port)]
        for origin, path in self.zones:
            cmd += ["-z", "%s=%s" % (origin, os.path.abspath(path))]
        return cmd


class ApexdBuild(Apexd):
    """apexd of another build, "apexd=BUILDDIR": two builds side by side in
    one run (the ratios are given for each)."""

    def __init__(self, workdir, zones, spec):
        self.builddir = os.path.abspath(spec.partition("=")[2])
        self.name = "apexd-" + re.sub(r"[^A-Za-z0-9_-]+", "_", self.builddir)  # its directory
        super().__init__(workdir, zones)
        self.name = spec

    def command(self):
        cmd = super().command()
        cmd[0] = os.path.join(self.builddir, "apexd")
        return cmd


class Nsd(Server):
    """NSD, one server process, response rate limiting off."""

    name = "nsd"

    def command(self):
        d = self.workdir
        conf = os.path.join(d, "nsd.conf")
        lines = ["server:", "    ip-address: %s@%d" % (LOOPBACK, self.port),
                 "    do-ip6: no", "    server-count: 1", '    username: ""',
                 '    chroot: ""', '    zonesdir: "%s"' % d, '    database: ""',
                 '    pidfile: "%s/nsd.pid"' % d, '    xfrdfile: "%s/xfrd.state"' % d,
                 '    xfrdir: "%s"' % d, '    zonelistfile: "%s/zone.list"' % d,
                 "    verbosity: 0", "    rrl-ratelimit: 0",
                 "    rrl-whitelist-ratelimit: 0", "remote-control:",
                 "    control-enable: no"]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin,
                      '    zonefile: "%s"' % os.path.abspath(path)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]


class Knot(Server):
    """Knot DNS, one UDP worker, serving the files as they are."""

    name = "knot"

    def command(self):
        d = self.workdir
        conf = os.path.join(d, "knot.conf")
        os.makedirs(os.path.join(d, "db"), exist_ok=True)
        lines = ["server:", '    rundir: "%s"' % d,
                 "    listen: %s@%d" % (LOOPBACK, self.port)]
        if os.geteuid() == 0:
            lines.append("    user: root:root")
        lines += ["    udp-workers: 1", "    tcp-workers: 1", "    background-workers: 1",
                  "database:", '    storage: "%s/db"' % d,
                  "control:", '    listen: "%s/knot.sock"' % d,
                  "log:", "  - target: stderr", "    any: warning",
                  "template:", "  - id: default", '    storage: "%s"' % d,
                  "    zonefile-sync: -1", "    zonefile-load: whole",
                  "    journal-content: none", "    semantic-checks: off",
                  "    dnssec-signing: off", "zone:"]
        for origin, path in self.zones:
            lines += ["  - domain: %s" % origin, '    file: "%s"' % os.path.abspath(path)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("knotd") or "/usr/sbin/knotd", "-c", conf]


class Reflector(Server):
    """contrib/bench/reflector: the floor.  It answers anything, so the
    readiness probe's SOA query comes back as a 'NOERROR' echo."""

    name = "reflector"

    def command(self):
        return [os.path.join(BUILDDIR, "contrib", "bench", "reflector"), LOOPBACK,
                str(self.port), "3600"]


class ApexdDnstap(Apexd):
    """apexd logging every query and response with dnstap to an
    fstrm_capture (package fstrm-bin) that throws them away: what dnstap
    costs the server, its writer thread included."""

    name = "apexd-dnstap"

    def command(self):
        sock = os.path.join(self.workdir, "dnstap.sock")
        conf = os.path.join(self.workdir, "dnstap.conf")
        with open(conf, "w") as f:
            f.write("dnstap:\n    dnstap-enable: yes\n    dnstap-socket-path: \"%s\"\n"
                    "    dnstap-log-auth-query-messages: yes\n"
                    "    dnstap-log-auth-response-messages: yes\n" % sock)
        return super().command() + ["-c", conf]

    def start(self, timeout=START_TIMEOUT):
        sock = os.path.join(self.workdir, "dnstap.sock")
        if os.path.exists(sock):
            os.unlink(sock)
        self.capture = subprocess.Popen(["fstrm_capture", "-t", "protobuf:dnstap.Dnstap",
                                         "-u", sock, "-w", "/dev/null"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        return super().start(timeout)

    def stop(self):
        super().stop()
        if self.capture.poll() is None:
            self.capture.send_signal(signal.SIGINT)
            try:
                self.capture.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.capture.kill()
                self.capture.wait(STOP_TIMEOUT)


SERVERS = {"apexd": Apexd, "apexd-dnstap": ApexdDnstap, "nsd": Nsd, "knot": Knot,
           "reflector": Reflector}


def dnsperf(port, queryfile, seconds=None, dnssec=False, runs=None, stats_interval=None,
            outstanding=100, timeout_s=2, extra=()):
    """Run dnsperf pinned to CLIENT_CPU; returns (parsed results, output)."""
    cmd = ["taskset", "-c", CLIENT_CPU, "dnsperf", "-s", LOOPBACK, "-p", str(port),
           "-d", queryfile, "-q", str(outstanding), "-t", str(timeout_s)]
    cmd += ["-D"] if dnssec else ["-e"]
    if seconds is not None:
        cmd += ["-l", str(seconds)]
    if runs is not None:
        cmd += ["-n", str(runs)]
    if stats_interval is not None:
        cmd += ["-S", str(stats_interval)]
    cmd += list(extra)
    bound = (seconds or 0) + 120 if runs is None else 3600
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=bound).stdout.decode("utf-8", "replace")
    return parse_dnsperf(out), out


def parse_dnsperf(out):
    def num(pattern, default=0.0):
        m = re.search(pattern, out)
        return float(m.group(1)) if m else default
    return {
        "sent": num(r"Queries sent:\s+(\d+)"),
        "completed": num(r"Queries completed:\s+(\d+)"),
        "lost": num(r"Queries lost:\s+(\d+)"),
        "qps": num(r"Queries per second:\s+([\d.]+)"),
        "latency_us": num(r"Average Latency \(s\):\s+([\d.]+)") * 1e6,
        "intervals": [float(x) for x in re.findall(r"\[Status\].*?([\d.]+) qps", out)],
    }


def measure(server, queryfile, seconds, dnssec):
    """One dnsperf run against a running server; adds the server's CPU time."""
    user0, sys0 = server.cpu_seconds("user"), server.cpu_seconds("system")
    res, out = dnsperf(server.port, queryfile, seconds=seconds, dnssec=dnssec)
    user = server.cpu_seconds("user") - user0
    system = server.cpu_seconds("system") - sys0
    done = res["completed"]
    res["cpu_s"] = user + system
    res["cpu_us_per_q"] = (user + system) / done * 1e6 if done else 0
    res["user_us_per_q"] = user / done * 1e6 if done else 0
    res["sys_us_per_q"] = system / done * 1e6 if done else 0
    return res


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else 0.0


def synthetic_zone(tmp, label):
    """The synthetic 1M-record zone label (nu.nsec3, nu.nsec) decompressed
    once into tmp (APEX_NU_ZONE overrides nu.nsec3's), or None."""
    nu = os.path.join(tmp, "%s.zone" % label)
    if label == "nu.nsec3" and os.environ.get("APEX_NU_ZONE"):
        nu = os.environ["APEX_NU_ZONE"]
    if not os.path.exists(nu):
        xz = os.path.join(ZONEDIR, "%s.synthetic.zone.xz" % label)
        if not os.path.exists(xz):
            log("no %s: skipping the %s zone (set APEX_ZONEDIR or APEX_NU_ZONE)" % (xz, label))
            return None
        log("decompressing %s" % xz)
        with open(nu + ".tmp", "wb") as f:
            subprocess.run(["xz", "-dc", xz], stdout=f, check=True, timeout=600)
        os.rename(nu + ".tmp", nu)
    return nu


def zone_sets(tmp):
    """The benchmark zones: [(label, [(origin, file)], mix)], decompressing
    the synthetic zone once into tmp."""
    sets = [("root", [(".", os.path.join(SRCDIR, "zones", "root.zone"))], "root")]
    nu = synthetic_zone(tmp, "nu.nsec3")
    if nu is not None:
        sets.append(("nu.nsec3", [("nu.", nu)], "tld"))
    return sets


def query_file(tmp, label, zones, mix, count=200000):
    """The deterministic query file of a zone set (generated once)."""
    path = os.path.join(tmp, "%s.queries" % label)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "querygen.py"), mix, zones[0][1],
                        str(count), path], check=True, timeout=600)
    return path


def table(headers, rows):
    """A plain text table (also valid Markdown)."""
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(str(c).rjust(w) for c, w in zip(cells, widths)) + " |"
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    return "\n".join(out)
