#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The AF_XDP path side by side: apexd and Knot DNS through XDP, and
apexd, Knot DNS and NSD on sockets, under the same kxdpgun load.

  contrib/bench/xdp.py [--seconds 10] [--rounds 3] [--rates 60000,max]
                       [--servers apexd-xdp,knot-xdp,xdp-reflector,apexd,knot,nsd,reflector]
                       [--zones root,nu.nsec3] [--do 0,1]

Needs root.  It creates two network namespaces joined by a veth pair
(removed at the end): the server runs in one with one worker pinned to
CPU 0, kxdpgun (knot-dnsutils) in the other pinned to CPU 1, sending the
zone's query mix (contrib/bench/querygen.py; with EDNS, and DO for
--do 1) at each rate of --rates for --seconds ("max": as fast as
kxdpgun goes, to saturate the server).  apexd-xdp is apexd with
xdp-interface on the server's end of the pair, knot-xdp Knot DNS with
its xdp: listen on it; xdp-reflector (contrib/bench/xdp_reflector.c)
is the AF_XDP path's floor, apexd's ring and frame handling answering
each query with its own bytes, and reflector (reflector.c) the socket
path's.  Two builds of apexd side by side: "apexd=BUILDDIR" on sockets,
"apexd-xdp=build: BUILDDIR" through XDP.  Each (zone, DO, rate) measures every server in
turn, the order rotating each round, starting and stopping it each time
(one XDP program per interface).  Reported per server: the median of
the rounds of the answered share, the answers per second, and the
server's CPU time (utime + stime of its processes, /proc/PID/stat) per
answered query; then apexd-xdp's CPU per query as a multiple of
knot-xdp's, of the better of Knot DNS and NSD on sockets, of apexd's
own on sockets and of xdp-reflector's, and apexd's on sockets as a
multiple of reflector's.  "xdp-reflector=-a auto" and "reflector=-a
auto" are the floors with answers as large as apexd's (the mean size of
apexd-xdp's answers to the same queries in a 3 s run before each zone
and DO): they move the bytes apexd moves, which the plain reflectors,
echoing each query, do not.  veth runs a packet's receive path on the sender's CPU, so the kernel's receive work of both
paths is outside the server's CPU time on this setup; its send path is
inside it.  Build first (make); see contrib/bench/benchlib.py for the
environment.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
# the namespaces and veth pair, shared with the system tests
sys.path.insert(0, os.path.join(B.SRCDIR, "tests", "system"))
from veth_pair import VethPair  # noqa: E402

# benchlib's servers listen on B.LOOPBACK: here the server's end of the pair
B.LOOPBACK = "198.18.0.1"

SERVER4, CLIENT4 = B.LOOPBACK, "198.18.0.2"  # RFC 2544's benchmarking range
PORT = 53
MAX_RATE = 5000000  # kxdpgun's rate for "max": beyond what one CPU answers


class Net(VethPair):
    """The pair of this run, IPv4 only."""

    def __init__(self):
        super().__init__("b", (SERVER4, CLIENT4))

    def answers_soa(self, origin):
        r = subprocess.run(["ip", "netns", "exec", self.client_ns, "kdig", "+short",
                            "+timeout=1", "+retry=0", "@" + SERVER4, "-p", str(PORT),
                            origin, "SOA"], capture_output=True, text=True, timeout=10)
        return r.returncode == 0 and r.stdout.strip() != ""


    def answers(self, origin):
        """Whether anything answers on SERVER4@PORT (a reflector's echo)."""
        r = subprocess.run(["ip", "netns", "exec", self.client_ns, "kdig", "+timeout=1",
                            "+retry=0", "@" + SERVER4, "-p", str(PORT), origin, "SOA"],
                           capture_output=True, text=True, timeout=10)
        return r.returncode == 0 and "status: NOERROR" in r.stdout


class InNamespace:
    """A benchlib server run in the server namespace on SERVER4@PORT (set
    net before starting one), its readiness asked from the client side."""

    net = None

    def launcher(self):
        return ["nsenter", "--net=/run/netns/" + self.net.server_ns] + super().launcher()

    def pick_port(self):
        return PORT

    def ready(self, origin):
        return self.net.answers_soa(origin)


class ApexdXdp(InNamespace, B.Apexd):
    """apexd with xdp-interface; "apexd-xdp=xdp-busy-poll: 20" adds server:
    lines (separated by ';'), except "build: DIR", the apexd of another
    build."""

    name = "apexd-xdp"

    def __init__(self, workdir, zones, options=""):
        self.options = [o.strip() for o in options.split(";") if o.strip()]
        builds = [o for o in self.options if o.startswith("build:")]
        self.builddir = (os.path.abspath(builds[-1].partition(":")[2].strip()) if builds
                         else B.BUILDDIR)
        self.options = [o for o in self.options if not o.startswith("build:")]
        if options:
            self.name = "apexd-xdp_" + re.sub(r"[^A-Za-z0-9_-]+", "_", options)
        super().__init__(workdir, zones)

    def start(self, timeout=B.START_TIMEOUT):
        super().start(timeout)
        with open(os.path.join(self.workdir, "log"), errors="replace") as f:
            if "XDP program attached" not in f.read():
                self.stop()
                raise RuntimeError("apexd-xdp: XDP not attached; see %s/log" % self.workdir)
        return self

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        lines = ["server:", "    listen: %s@%d" % (SERVER4, self.port), "    workers: 1",
                 "    control-socket: none", "    xdp-interface: %s" % self.net.server_if]
        lines += ["    " + o for o in self.options]
        for origin, path in self.zones:
            lines += ["zone:", "    name: %s" % origin, "    file: %s" % os.path.abspath(path)]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [os.path.join(self.builddir, "apexd"), "-f", "-c", conf]


class KnotXdp(InNamespace, B.Knot):
    name = "knot-xdp"

    def command(self):
        cmd = super().command()
        with open(os.path.join(self.workdir, "knot.conf")) as f:
            conf = f.read()
        # one UDP worker: it serves XDP queue 0
        conf = conf.replace("database:", "xdp:\n    listen: %s@%d\ndatabase:" % (
            self.net.server_if, self.port), 1)
        with open(os.path.join(self.workdir, "knot.conf"), "w") as f:
            f.write(conf)
        return cmd


class FloorOptions:
    """A floor run with command-line options ("xdp-reflector=-p 20",
    "reflector=-a 600"), in a directory named after them."""

    def __init__(self, workdir, zones, options=""):
        self.options = options.split()
        if options:
            self.name += "_" + re.sub(r"[^A-Za-z0-9_-]+", "_", options)
        super().__init__(workdir, zones)

    def ready(self, origin):
        return self.net.answers(origin)


class XdpReflector(FloorOptions, InNamespace, B.Server):
    """contrib/bench/xdp_reflector: the AF_XDP path's floor (apexd's XDP
    program, socket and frame handling, no DNS work)."""

    name = "xdp-reflector"

    def command(self):
        return ([os.path.join(B.BUILDDIR, "contrib", "bench", "xdp_reflector")] + self.options
                + [self.net.server_if, str(self.port), "3600"])


class Reflector(FloorOptions, InNamespace, B.Reflector):
    """The UDP reflector: the socket path's floor."""

    def command(self):
        cmd = super().command()
        return cmd[:1] + self.options + cmd[1:]


SERVERS = {
    "apexd-xdp": ApexdXdp,
    "xdp-reflector": XdpReflector,
    "reflector": Reflector,
    "knot-xdp": KnotXdp,
    "apexd": type("Apexd", (InNamespace, B.Apexd), {}),
    "knot": type("Knot", (InNamespace, B.Knot), {}),
    "nsd": type("Nsd", (InNamespace, B.Nsd), {}),
}


def make_server(spec, tmp, zones):
    """SERVERS[name], or "xdp-reflector=OPTIONS", "apexd-xdp=OPTIONS",
    "apexd=BUILDDIR" (apexd of another build, on sockets)."""
    name, _, options = spec.partition("=")
    if options and name in ("xdp-reflector", "apexd-xdp", "reflector"):
        return SERVERS[name](tmp, zones, options)
    if options and name == "apexd":
        return type("ApexdBuild", (InNamespace, B.ApexdBuild), {})(tmp, zones, spec)
    return SERVERS[name](tmp, zones)


def kxdpgun_file(tmp, label, dnsperf_file, do):
    """The dnsperf query file in kxdpgun's form: EDNS, or EDNS with DO."""
    path = os.path.join(tmp, "%s.kxdpgun.do%d" % (label, do))
    if not os.path.exists(path):
        flag = "D" if do else "E"
        with open(dnsperf_file) as f, open(path + ".tmp", "w") as out:
            for line in f:
                fields = line.split()
                if len(fields) >= 2:
                    out.write("%s %s %s\n" % (fields[0], fields[1], flag))
        os.rename(path + ".tmp", path)
    return path


def kxdpgun(net, queries, seconds, rate):
    cmd = ["ip", "netns", "exec", net.client_ns, "taskset", "-c", B.CLIENT_CPU, "kxdpgun",
           "-t", str(int(seconds)), "-Q", str(rate), "-i", queries, "-p", str(PORT),
           "-I", net.client_if, "-F", B.CLIENT_CPU,
           "-L", net.mac(net.client_ns, net.client_if),
           "-R", net.mac(net.server_ns, net.server_if), SERVER4]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=seconds + 60).stdout.decode("utf-8", "replace")
    sent = re.search(r"total queries:\s+(\d+)", out)
    got = re.search(r"total replies:\s+(\d+)", out)
    size = re.search(r"average DNS reply size:\s+(\d+)", out)
    if sent is None or got is None:
        raise RuntimeError("kxdpgun: %s" % out)
    return int(sent.group(1)), int(got.group(1)), int(size.group(1)) if size else 0


def measure(net, server, queries, seconds, rate):
    user0, sys0 = server.cpu_seconds("user"), server.cpu_seconds("system")
    sent, answered, reply_bytes = kxdpgun(net, queries, seconds, rate)
    cpu = server.cpu_seconds("user") - user0 + server.cpu_seconds("system") - sys0
    return {"sent": sent, "answered": answered, "reply_bytes": reply_bytes,
            "answered_pct": 100.0 * answered / sent if sent else 0.0,
            "aps": answered / seconds,
            "cpu_us_per_q": cpu / answered * 1e6 if answered else 0.0}


CALIBRATION_SECONDS, CALIBRATION_RATE = 3, 20000
AUTO_SIZE = re.compile(r"-a\s+auto\b")


def sized_floor(spec):
    """Whether spec is a floor told to answer with apexd's bytes."""
    name, _, options = spec.partition("=")
    return name in ("xdp-reflector", "reflector") and AUTO_SIZE.search(options) is not None


def apexd_reply_size(net, tmp, zones, queries):
    """The mean size of apexd's answers to this query file (kxdpgun's
    "average DNS reply size" of a short run against apexd-xdp): what a
    reflector given "-a auto" sends, so that the floor moves as many bytes
    as apexd does."""
    server = SERVERS["apexd-xdp"](tmp, zones)
    server.start()
    try:
        _, _, size = kxdpgun(net, queries, CALIBRATION_SECONDS, CALIBRATION_RATE)
    finally:
        server.stop()
        net.detach_xdp()
    if size <= 0:
        raise RuntimeError("kxdpgun reported no reply size for apexd-xdp")
    return size


def run(args, net, tmp):
    names = args.servers.split(",")
    rates = [MAX_RATE if r == "max" else int(r) for r in args.rates.split(",")]
    results = []
    for label, zones, mix in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        qfile = B.query_file(tmp, label, zones, mix)
        for do in [int(d) for d in args.do.split(",")]:
            queries = kxdpgun_file(tmp, label, qfile, do)
            specs = {n: n for n in names}
            if any(sized_floor(n) for n in names):
                size = apexd_reply_size(net, tmp, zones, queries)
                B.log("%s DO=%d: apexd's answers %d bytes on average: the sized floors' "
                      "answers" % (label, do, size))
                specs = {n: AUTO_SIZE.sub("-a %d" % size, n) if sized_floor(n) else n
                         for n in names}
            for rate in rates:
                per = {n: [] for n in names}
                for rnd in range(args.rounds):
                    order = names[rnd % len(names):] + names[:rnd % len(names)]
                    for n in order:
                        server = make_server(specs[n], tmp, zones)
                        server.start()
                        try:
                            res = measure(net, server, queries, args.seconds, rate)
                        finally:
                            server.stop()
                            net.detach_xdp()
                        B.log("%s DO=%d rate %s round %d %s: %.1f%% answered, %.0f/s, "
                              "%.2f us/query, %d-byte answers"
                              % (label, do, rate, rnd, n, res["answered_pct"], res["aps"],
                                 res["cpu_us_per_q"], res["reply_bytes"]))
                        per[n].append(res)
                for n in names:
                    med = {k: B.median([r[k] for r in per[n]]) for k in per[n][0]}
                    results.append((label, do, rate, n, med))
    return results


def report(results):
    rows = []
    for label, do, rate, n, m in results:
        rows.append([label, do, "max" if rate == MAX_RATE else rate, n,
                     "%.1f" % m["answered_pct"], "%.0f" % m["aps"], "%.2f" % m["cpu_us_per_q"],
                     "%.0f" % m["reply_bytes"]])
    print(B.table(["zone", "DO", "rate", "server", "answered %", "answers/s", "CPU us/query",
                   "answer bytes"], rows))
    keys = sorted({(l, d, r) for l, d, r, _, _ in results})
    for key in keys:
        got = {n: m for l, d, r, n, m in results if (l, d, r) == key}
        apex = got.get("apexd-xdp")
        if apex is None or apex["cpu_us_per_q"] == 0:
            continue
        line = "%s DO=%d rate %s: apexd-xdp" % (key[0], key[1],
                                                  "max" if key[2] == MAX_RATE else key[2])
        if got.get("knot-xdp") and got["knot-xdp"]["cpu_us_per_q"]:
            line += " %.2fx knot-xdp" % (apex["cpu_us_per_q"] / got["knot-xdp"]["cpu_us_per_q"])
        peers = [got[n]["cpu_us_per_q"] for n in ("knot", "nsd")
                 if got.get(n) and got[n]["cpu_us_per_q"]]
        if peers:
            line += ", %.2fx the better socket peer" % (apex["cpu_us_per_q"] / min(peers))
        if got.get("apexd") and got["apexd"]["cpu_us_per_q"]:
            line += ", %.2fx apexd on sockets" % (apex["cpu_us_per_q"] /
                                                  got["apexd"]["cpu_us_per_q"])
        for n in sorted(got):
            if n.partition("=")[0] == "xdp-reflector" and got[n]["cpu_us_per_q"]:
                line += ", %.2fx the AF_XDP floor%s" % (
                    apex["cpu_us_per_q"] / got[n]["cpu_us_per_q"],
                    " (%s)" % n.partition("=")[2] if "=" in n else "")
        print(line)
        sockets = got.get("apexd")
        for n in sorted(got):
            floor = got[n]
            if (n.partition("=")[0] != "reflector" or not sockets or not sockets["cpu_us_per_q"]
                    or not floor["cpu_us_per_q"]):
                continue
            print("%s DO=%d rate %s: apexd on sockets %.2fx the UDP floor%s" % (
                key[0], key[1], "max" if key[2] == MAX_RATE else key[2],
                sockets["cpu_us_per_q"] / floor["cpu_us_per_q"],
                " (%s)" % n.partition("=")[2] if "=" in n else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rates", default="60000,max")
    ap.add_argument("--servers",
                    default="apexd-xdp,knot-xdp,xdp-reflector,apexd,knot,nsd,reflector")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--do", default="0,1")
    args = ap.parse_args()
    if not (0 < args.seconds <= 120 and 0 < args.rounds <= 20):
        ap.error("--seconds in (0, 120], --rounds in 1..20")
    if os.geteuid() != 0:
        ap.error("needs root: network namespaces, XDP")
    for tool in ("ip", "nsenter", "kxdpgun", "kdig"):
        if shutil.which(tool) is None:
            ap.error("%s not found (Debian packages iproute2, util-linux, knot-dnsutils)" % tool)
    for n in args.servers.split(","):
        if n.partition("=")[0] not in SERVERS:
            ap.error("unknown server %s (%s)" % (n, ",".join(SERVERS)))
    # a timeout's SIGTERM still removes the namespaces
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    net = Net()
    InNamespace.net = net
    try:
        net.create()
        report(run(args, net, B.scratch_dir()))
    finally:
        net.remove()


if __name__ == "__main__":
    main()
