# SPDX-License-Identifier: BSD-3-Clause
"""apexd under test: -n 2, a secondary of the primary for the large zones,
the primary of a zone of its own file, with its control socket, metrics
endpoint, dnstap and a log file."""

import os
import subprocess
import urllib.request

from . import dnsutil
from .procs import wait_until

START_TIMEOUT = float(os.environ.get("APEX_START_TIMEOUT", "600"))


class SecondaryApexd:
    def __init__(self, procs, workdir, builddir, port, metrics_port, primary_port):
        self.procs = procs
        self.dir = os.path.join(workdir, "apexd")
        os.makedirs(self.dir, exist_ok=True)
        self.builddir = builddir
        self.port = port
        self.metrics_port = metrics_port
        self.primary_port = primary_port
        self.conf = os.path.join(self.dir, "apex.conf")
        self.sock = os.path.join(self.dir, "apexd.sock")
        self.log = os.path.join(self.dir, "apexd.log")
        self.dnstap_sock = os.path.join(self.dir, "dnstap.sock")
        self.secondaries = []  # [(origin, file, zonemd-verify)]
        self.primaries = []    # [(origin, file)]: its own files
        self.proc = None

    def write_config(self):
        """The configuration file as it stands (reconfig reads it again)."""
        lines = ["server:", "    listen: %s@%d" % (dnsutil.LOOPBACK, self.port),
                 "    workers: 2", '    control-socket: "%s"' % self.sock,
                 "    metrics: %s@%d" % (dnsutil.LOOPBACK, self.metrics_port),
                 '    pid-file: "%s"' % os.path.join(self.dir, "apexd.pid"),
                 '    log-target: "%s"' % self.log, "    log-level: info",
                 "dnstap:", "    dnstap-enable: yes",
                 '    dnstap-socket-path: "%s"' % self.dnstap_sock,
                 "    dnstap-log-auth-query-messages: yes",
                 "    dnstap-log-auth-response-messages: yes"]
        for origin, path, zonemd in self.secondaries:
            lines += ["zone:", "    name: %s" % origin, '    file: "%s"' % path,
                      "    request-xfr: %s@%d NOKEY" % (dnsutil.LOOPBACK, self.primary_port),
                      "    allow-notify: %s NOKEY" % dnsutil.LOOPBACK,
                      "    provide-xfr: %s NOKEY" % dnsutil.LOOPBACK]
            if not zonemd:
                lines.append("    zonemd-verify: no")
        for origin, path in self.primaries:
            lines += ["zone:", "    name: %s" % origin, '    file: "%s"' % path]
        tmp = self.conf + ".new"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(tmp, self.conf)

    def start(self):
        self.write_config()
        cmd = [os.path.join(self.builddir, "apexd"), "-f", "-n", "2", "-c", self.conf]
        self.proc = self.procs.start(cmd, log_path=os.path.join(self.dir, "stderr"))
        for origin in [z[0] for z in self.secondaries + self.primaries]:
            if not wait_until(lambda: self.proc.poll() is not None or
                              dnsutil.soa_serial(self.port, origin, 0.2) is not None,
                              START_TIMEOUT, 0.2) or self.proc.poll() is not None:
                raise RuntimeError("apexd did not serve %s; see %s" % (origin, self.log))
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def apexctl(self, *args, timeout=300):
        """(exit status, output) of apexctl on apexd's control socket."""
        cmd = [os.path.join(self.builddir, "apexctl"), "-s", self.sock, "-t", str(timeout)]
        r = subprocess.run(cmd + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout + 30)
        return r.returncode, r.stdout.decode(errors="replace")

    def scrape(self, timeout=5.0):
        """The metrics endpoint's text, or an exception."""
        url = "http://%s:%d/metrics" % (dnsutil.LOOPBACK, self.metrics_port)
        with urllib.request.urlopen(url, timeout=timeout) as r:
            if r.status != 200:
                raise RuntimeError("metrics: HTTP %d" % r.status)
            return r.read().decode(errors="replace")

    def rss_and_fds(self):
        """(RSS in bytes, open descriptors) of apexd now."""
        pid = self.proc.pid
        rss = 0
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) * 1024
        return rss, len(os.listdir("/proc/%d/fd" % pid))
