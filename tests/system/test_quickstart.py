# SPDX-License-Identifier: BSD-3-Clause
"""contrib/quickstart.sh, the README's first command, past its packages
and build: apexd serves the bundled root zone with a control socket, and
the apexctl lines it prints (reload, statistics, zone status, stop) work
as printed; apexd warns of no missing run directory."""

import os
import shlex
import subprocess
import threading
import time

import dns.message
import dns.query
import dns.rcode
import pytest

import servers
from conftest import SRCDIR

WAIT = 30.0


class Output:
    """The script's output (apexd's log included), read on a thread."""

    def __init__(self, stream):
        self.lines = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, args=(stream,), daemon=True)
        self.thread.start()

    def read(self, stream):
        for line in stream:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def wait_for(self, text):
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            with self.lock:
                for line in self.lines:
                    if text in line:
                        return line
            time.sleep(0.05)
        raise AssertionError("no %r in the quickstart's output:\n%s" % (text, self.text()))

    def text(self):
        with self.lock:
            return "\n".join(self.lines)


def printed_command(out, label):
    """The command the script printed after label, as an argument list."""
    line = out.wait_for(label)
    return shlex.split(line.split(label, 1)[1])


def test_quickstart(tmp_path):
    builddir = os.environ.get("APEX_BUILDDIR") or SRCDIR
    if os.path.realpath(builddir) != os.path.realpath(SRCDIR):
        pytest.skip("the quickstart runs the build in the source tree; this build is in %s"
                    % builddir)
    port = servers.free_port()
    env = dict(os.environ, APEX_QUICKSTART_SKIP_SETUP="1", APEX_QUICKSTART_PORT=str(port),
               APEX_QUICKSTART_SOCKET=str(tmp_path / "ctl.sock"))
    proc = subprocess.Popen(["sh", os.path.join(SRCDIR, "contrib", "quickstart.sh")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = Output(proc.stdout)
    try:
        out.wait_for("serving 1 zone(s)")
        q = dns.message.make_query(".", "SOA", want_dnssec=True)
        r = dns.query.udp(q, servers.LOOPBACK, port=port, timeout=5)
        assert r.rcode() == dns.rcode.NOERROR and r.answer, r

        for label, expect in (("reload the zone:", ".: loaded, serial"),
                              ("see its statistics:", "queries"),
                              ("see the zone:", "2024101100")):
            cmd = printed_command(out, label)
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT)
            assert done.returncode == 0, "%s: %s%s" % (cmd, done.stdout, done.stderr)
            assert expect in done.stdout, "%s: %s" % (cmd, done.stdout)

        stop = printed_command(out, "stop it:")
        stop = stop[:stop.index("stop") + 1]  # not the Ctrl-C note after it
        done = subprocess.run(stop, capture_output=True, text=True, timeout=WAIT)
        assert done.returncode == 0, done.stderr
        assert proc.wait(WAIT) == 0, out.text()
        assert "does not exist" not in out.text(), out.text()
        assert "without a control socket" not in out.text(), out.text()
    finally:
        if proc.poll() is None:
            proc.kill()  # apexd itself: the script exec'ed it
            proc.wait(WAIT)
