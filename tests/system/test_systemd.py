# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a systemd Type=notify service: a NOTIFY_SOCKET listener (as
systemd is) hears STATUS= and EXTEND_TIMEOUT_USEC= while the zones load,
READY=1 once apexd serves, RELOADING=1 then READY=1 around a reload
however it is started (SIGHUP, `apexctl reload`, `apexctl reconfig`), and
STOPPING=1 on SIGTERM; the unit file names what it needs."""

import os
import re
import signal
import socket
import subprocess
import time

import servers
from conftest import SRCDIR, zone as zone_path

WAIT = 30.0


class NotifyListener:
    """A datagram socket where apexd's notifications arrive."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.messages = []

    def wait_for(self, line):
        """The first message (after those seen) holding line; fails after WAIT."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                msg = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.messages.append(msg)
            if line in msg.split("\n"):
                return msg
        raise AssertionError("no %r from apexd; got %s" % (line, self.messages))

    def drain(self, quiet=1.5):
        """Every message until none came for quiet seconds (at most WAIT)."""
        got, last = [], time.monotonic()
        deadline = last + WAIT
        while time.monotonic() - last < quiet and time.monotonic() < deadline:
            try:
                msg = self.sock.recv(4096).decode()
            except socket.timeout:
                continue
            self.messages.append(msg)
            got.append(msg)
            last = time.monotonic()
        return got

    def close(self):
        self.sock.close()


def start_notified(start, notify_path):
    """start() with NOTIFY_SOCKET set to notify_path in its environment."""
    os.environ["NOTIFY_SOCKET"] = notify_path
    try:
        return start()
    finally:
        del os.environ["NOTIFY_SOCKET"]


class NotifiedApexd(servers.Apexd):
    def __init__(self, workdir, zones, notify_path):
        super().__init__(workdir, zones)
        self.notify_path = notify_path

    def start(self):
        return start_notified(super().start, self.notify_path)


def test_notifications(tmp_path):
    d = str(tmp_path)
    listener = NotifyListener(os.path.join(d, "notify.sock"))
    apex = NotifiedApexd(d, [(".", zone_path("root.zone")), ("example.", zone_path("example.zone"))],
                         listener.path)
    try:
        apex.start()
        loading = listener.wait_for("STATUS=loading 2 zone(s)")
        assert "EXTEND_TIMEOUT_USEC=600000000" in loading.split("\n")
        ready = listener.wait_for("READY=1")
        assert "STATUS=serving 2 zone(s) with 2 worker(s)" in ready, ready
        assert "MAINPID=%d" % apex.proc.pid in ready, ready

        apex.proc.send_signal(signal.SIGHUP)
        reloading = listener.wait_for("RELOADING=1")
        assert any(line.startswith("MONOTONIC_USEC=") for line in reloading.split("\n"))
        listener.wait_for("READY=1")
        assert "reloaded" in listener.messages[-1]

        apex.proc.send_signal(signal.SIGTERM)
        listener.wait_for("STOPPING=1")
        assert apex.proc.wait(WAIT) == 0, apex.log_tail()
    finally:
        apex.stop()
        listener.close()


class ControlledApexd(servers.Server):
    """apexd from a config file, with a control socket and NOTIFY_SOCKET."""

    kind = "apexd-controlled"

    def __init__(self, workdir, zones, notify_path):
        super().__init__(workdir, zones)
        self.notify_path = notify_path
        self.socket = os.path.join(workdir, "ctl.sock")
        self.conf = os.path.join(workdir, "apex.conf")

    def write_config(self):
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 '    control-socket: "%s"' % self.socket]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % path]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def command(self):
        self.write_config()
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def start(self):
        return start_notified(super().start, self.notify_path)

    def ctl(self, *args):
        apexctl = os.path.join(os.path.dirname(servers.apexd_path()), "apexctl")
        return subprocess.run([apexctl, "-s", self.socket] + list(args), capture_output=True,
                              text=True, timeout=WAIT)


def lines_of(messages, line):
    return sum(1 for m in messages if line in m.split("\n"))


def test_reload_by_apexctl_notifies(tmp_path):
    """`apexctl reload` and `apexctl reconfig` (systemd's ExecReload) are
    bracketed by RELOADING=1 (with MONOTONIC_USEC) and READY=1 as SIGHUP
    is; a reload that fails (an unknown zone) still ends with READY=1, and
    reloads that overlap give as many READY=1 as RELOADING=1, the last
    message READY=1."""
    d = str(tmp_path)
    listener = NotifyListener(os.path.join(d, "notify.sock"))
    apex = ControlledApexd(d, [(".", zone_path("root.zone")),
                               ("example.", zone_path("example.zone"))], listener.path)
    try:
        apex.start()
        listener.wait_for("READY=1")

        r = apex.ctl("reload")
        assert r.returncode == 0, r.stdout + r.stderr
        got = listener.drain()
        assert lines_of(got, "RELOADING=1") == 1, got
        reloading = [m for m in got if "RELOADING=1" in m.split("\n")][0]
        assert any(line.startswith("MONOTONIC_USEC=") for line in reloading.split("\n"))
        assert "READY=1" in got[-1].split("\n"), got
        assert "STATUS=serving 2 zone(s), reloaded" in got[-1].split("\n"), got

        # a third zone in the file: reconfig loads it inside the bracket
        added = os.path.join(d, "added.test.zone")
        with open(added, "w") as f:
            f.write("$ORIGIN added.test.\n$TTL 300\n@ SOA ns1 h 1 3600 900 604800 300\n"
                    "@ NS ns1\nns1 A 192.0.2.1\n")
        apex.zones.append(("added.test.", added))
        apex.write_config()
        r = apex.ctl("reconfig")
        assert r.returncode == 0, r.stdout + r.stderr
        got = listener.drain()
        assert lines_of(got, "RELOADING=1") == 1 and lines_of(got, "READY=1") == 1, got
        assert "STATUS=serving 3 zone(s), reloaded" in got[-1].split("\n"), got

        # bad input: an unknown zone is refused, and the bracket closes
        r = apex.ctl("reload", "no-such-zone.test.")
        assert r.returncode != 0, r.stdout
        got = listener.drain()
        assert lines_of(got, "RELOADING=1") == 1 and lines_of(got, "READY=1") == 1, got
        assert "READY=1" in got[-1].split("\n"), got

        # overlapping: a SIGHUP and an apexctl reload at once
        apex.proc.send_signal(signal.SIGHUP)
        r = apex.ctl("reload")
        assert r.returncode == 0, r.stdout + r.stderr
        got = listener.drain()
        assert lines_of(got, "RELOADING=1") >= 1, got
        assert lines_of(got, "RELOADING=1") == lines_of(got, "READY=1"), got
        assert "READY=1" in got[-1].split("\n"), got
    finally:
        assert apex.stop() == 0, apex.log_tail()
        listener.close()


def test_progress_of_a_large_zone(tmp_path):
    """A zone of 100,000 records or more says how its load goes: a log line
    once its records are parsed and one once it is built, and each time
    a STATUS= line with EXTEND_TIMEOUT_USEC= for systemd; a small zone
    loads silently."""
    d = str(tmp_path)
    large = os.path.join(d, "large.test.zone")
    with open(large, "w") as f:
        f.write("$ORIGIN large.test.\n$TTL 300\n@ SOA ns1 h 1 3600 900 604800 300\n"
                "@ NS ns1\nns1 A 192.0.2.1\n")
        for i in range(120000):
            f.write("h%d A 10.%d.%d.%d\n" % (i, i >> 16, (i >> 8) & 255, i & 255))
    listener = NotifyListener(os.path.join(d, "notify.sock"))
    apex = NotifiedApexd(d, [("large.test.", large), ("example.", zone_path("example.zone"))],
                         listener.path)
    try:
        apex.start()
        parsed = listener.wait_for("STATUS=%s: 120003 records parsed, building" % large)
        assert "EXTEND_TIMEOUT_USEC=600000000" in parsed.split("\n"), parsed
        built = listener.wait_for("STATUS=%s: built" % large)
        assert "EXTEND_TIMEOUT_USEC=600000000" in built.split("\n"), built
        listener.wait_for("READY=1")
        log = apex.log_tail(60)
        assert "%s: 120003 records parsed in " % large in log, log
        assert "%s: built in " % large in log, log
        assert "example.zone: built" not in log and "example.zone: 5" not in log, log
        assert not any("example.zone" in m for m in listener.messages if "STATUS=" in m)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        listener.close()


def test_no_notify_socket_no_trouble(tmp_path):
    """A NOTIFY_SOCKET nobody listens on: apexd says so and serves."""
    d = str(tmp_path)
    apex = NotifiedApexd(d, [("example.", zone_path("example.zone"))],
                         os.path.join(d, "nobody.sock"))
    try:
        apex.start()
        assert "no notifications to systemd" in apex.log_tail(40), apex.log_tail(40)
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_unit_file():
    """The unit make builds from contrib/apexd.service.in: Type=notify, the
    install paths filled in, the control socket where ExecReload looks,
    and the hardening options."""
    builddir = os.environ.get("APEX_BUILDDIR") or SRCDIR
    with open(os.path.join(builddir, "contrib", "apexd.service")) as f:
        lines = f.read().split("\n")
    assert not any(re.search(r"@[A-Za-z_]+@", line) for line in lines), lines
    start = [line for line in lines if line.startswith("ExecStart=")]
    reload = [line for line in lines if line.startswith("ExecReload=")]
    assert len(start) == 1 and start[0].split()[0].endswith("/sbin/apexd"), start
    sock = re.search(r"-s (\S+/apex/apexd\.sock)", start[0])
    assert sock, start
    assert len(reload) == 1 and reload[0].endswith("-s %s reload" % sock.group(1)), reload
    for line in ("Type=notify", "RuntimeDirectory=apex", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "PrivateTmp=yes", "ProtectHome=yes"):
        assert line in lines, line
    bound = [line for line in lines if line.startswith("CapabilityBoundingSet=")]
    assert len(bound) == 1 and "CAP_NET_BIND_SERVICE" in bound[0].split("=")[1].split()
