# SPDX-License-Identifier: BSD-3-Clause
"""The query load: dnsperf over UDP and over TCP at fixed rates, from a
query file of both zones' mixes (contrib/bench/querygen.py)."""

import os
import random
import re
import subprocess
import sys

from . import dnsutil

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def query_file(tmp, nu_path, root_path, count=100000):
    """nu.'s TLD mix and the root mix, interleaved (fixed seed)."""
    out = os.path.join(tmp, "queries")
    lines = []
    for mix, path, n in (("tld", nu_path, count), ("root", root_path, count // 2)):
        part = os.path.join(tmp, "queries." + mix)
        subprocess.run([sys.executable, os.path.join(HERE, "querygen.py"), mix, path, str(n),
                        part], check=True, timeout=600)
        with open(part) as f:
            lines += f.readlines()
        os.unlink(part)
    random.Random(39).shuffle(lines)
    with open(out, "w") as f:
        f.writelines(lines)
    return out


def dnsperf_cmd(port, queryfile, seconds, qps=None, tcp=False):
    cmd = ["dnsperf", "-s", dnsutil.LOOPBACK, "-p", str(port), "-d", queryfile, "-e",
           "-l", str(int(seconds)), "-t", "2"]
    if qps:
        cmd += ["-Q", str(int(qps))]
    if tcp:
        cmd += ["-m", "tcp", "-c", "4", "-q", "64"]
    else:
        cmd += ["-q", "500"]
    return cmd


def parse(path):
    with open(path, errors="replace") as f:
        out = f.read()

    def num(pattern):
        m = re.search(pattern, out)
        return float(m.group(1)) if m else 0.0
    return {"sent": num(r"Queries sent:\s+(\d+)"),
            "completed": num(r"Queries completed:\s+(\d+)"),
            "lost": num(r"Queries lost:\s+(\d+)"),
            "qps": num(r"Queries per second:\s+([\d.]+)")}


class Load:
    """dnsperf over UDP and TCP for one phase, started by procs."""

    def __init__(self, procs, workdir, port, queryfile, udp_qps, tcp_qps):
        self.procs = procs
        self.workdir = workdir
        self.port = port
        self.queryfile = queryfile
        self.udp_qps = udp_qps
        self.tcp_qps = tcp_qps
        self.running = []

    def start(self, phase, seconds):
        self.running = []
        for transport, qps in (("udp", self.udp_qps), ("tcp", self.tcp_qps)):
            log = os.path.join(self.workdir, "dnsperf.%s.%s" % (phase, transport))
            proc = self.procs.start(dnsperf_cmd(self.port, self.queryfile, seconds, qps,
                                                transport == "tcp"), log_path=log)
            self.running.append((transport, proc, log))

    def finish(self, bound):
        """{transport: results} once both are done (bounded)."""
        out = {}
        for transport, proc, log in self.running:
            try:
                proc.wait(bound)
            except subprocess.TimeoutExpired:
                self.procs.stop(proc)
            out[transport] = parse(log)
        return out


def capacity(procs, workdir, port, queryfile, seconds=5):
    """Answers per second apexd gives dnsperf over UDP with no limit."""
    log = os.path.join(workdir, "dnsperf.capacity")
    proc = procs.start(dnsperf_cmd(port, queryfile, seconds), log_path=log)
    proc.wait(seconds + 60)
    return parse(log)["qps"]
