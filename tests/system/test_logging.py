# SPDX-License-Identifier: BSD-3-Clause
"""apexd's log targets (log-target in apex.conf(5)).

To a file: the lines go there, not to stderr; logrotate moves the file
away and sends SIGUSR1, after which apexd writes to a new file at the path
and no longer to the moved one.  To syslog: the lines reach the socket
syslog(3) writes to (/dev/log), when the test may put one there.  A bad
log-target value and a log file that cannot be opened stop apexd with the
reason.
"""

import os
import pwd
import signal
import socket
import subprocess
import time

import pytest

import servers

ORIGIN = "log.test."
WAIT = 10.0


def zone_file(tmp):
    path = os.path.join(tmp, "log.test.zone")
    with open(path, "w") as f:
        f.write("$ORIGIN log.test.\n$TTL 3600\n"
                "@ IN SOA ns1 hostmaster 1 3600 900 604800 300\n"
                "@ IN NS ns1\nns1 IN A 192.0.2.1\n")
    return path


class LoggingApexd(servers.Server):
    """apexd with a config file whose server: section has log_lines."""

    kind = "apexd-logging"

    def __init__(self, workdir, zone, log_lines):
        super().__init__(workdir, [(ORIGIN, zone)])
        self.zone = zone
        self.log_lines = log_lines

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(["server:", "    listen: 127.0.0.1@%d" % self.port,
                               "    workers: 1", "    control-socket: none"] + self.log_lines +
                              ["zone:", '    name: "%s"' % ORIGIN,
                               '    file: "%s"' % self.zone]) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def wait_text(path, text):
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if text in read(path):
            return
        time.sleep(0.05)
    raise AssertionError("no %r in %s:\n%s" % (text, path, read(path)))


def test_log_file_and_sigusr1(tmp_path):
    tmp = str(tmp_path)
    log = os.path.join(tmp, "apexd.log")
    apex = LoggingApexd(os.path.join(tmp, "apexd"), zone_file(tmp),
                        ['    log-target: "%s"' % log]).start()
    try:
        wait_text(log, "serving 1 zone(s)")
        assert "serving 1 zone(s)" not in apex.log_tail(), apex.log_tail()
        # logrotate: the file moved away, then SIGUSR1
        os.rename(log, log + ".1")
        apex.proc.send_signal(signal.SIGUSR1)
        wait_text(log, "SIGUSR1 received: log file opened again")
        apex.proc.send_signal(signal.SIGHUP)
        wait_text(log, "SIGHUP received")
        assert "SIGHUP" not in read(log + ".1"), read(log + ".1")
        assert "serving 1 zone(s)" in read(log + ".1")
    finally:
        assert apex.stop() == 0, read(log)
    assert "apexd stopped" in read(log)


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_log_file_in_chroot(tmp_path, monkeypatch):
    """With chroot and user nobody, the log file inside the chroot is given
    to nobody and opened again by its path inside after SIGUSR1."""
    # LeakSanitizer reads /proc at exit, which the chroot lacks
    asan = os.environ.get("ASAN_OPTIONS")
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "detect_leaks=0")
    root = os.path.join(str(tmp_path), "chrooted")
    os.makedirs(root)
    nobody = pwd.getpwnam("nobody")
    os.chown(root, nobody.pw_uid, nobody.pw_gid)  # the new log file is created here
    os.chmod(str(tmp_path), 0o755)
    zone = zone_file(root)
    os.chmod(zone, 0o644)
    log = os.path.join(root, "apexd.log")
    apex = LoggingApexd(root, zone, ["    user: nobody", '    chroot: "%s"' % root,
                                     '    log-target: "%s"' % log]).start()
    try:
        wait_text(log, "serving 1 zone(s)")
        assert os.stat(log).st_uid == nobody.pw_uid
        assert "outside the chroot" not in read(log), read(log)
        os.rename(log, log + ".1")
        apex.proc.send_signal(signal.SIGUSR1)
        wait_text(log, "SIGUSR1 received: log file opened again")
    finally:
        assert apex.stop() == 0, read(log) + read(log + ".1")


def test_log_level(tmp_path):
    tmp = str(tmp_path)
    log = os.path.join(tmp, "apexd.log")
    apex = LoggingApexd(os.path.join(tmp, "apexd"), zone_file(tmp),
                        ['    log-target: "%s"' % log, "    log-level: warning"]).start()
    try:
        apex.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
    finally:
        assert apex.stop() == 0, read(log)
    assert " info: " not in read(log), read(log)


def test_bad_log_settings(tmp_path):
    tmp = str(tmp_path)
    zone = zone_file(tmp)
    conf = os.path.join(tmp, "apexd", "apex.conf")
    cases = [(['    log-level: loud'],
              "%s:5: log-level: expected error, warning, info or debug" % conf),
             (['    log-facility: kern'], "%s:5: log-facility: expected daemon" % conf),
             (['    log-target: "%s/no/such/dir/apexd.log"' % tmp],
              "log file %s/no/such/dir/apexd.log: not found" % tmp)]
    for lines, reason in cases:
        apex = LoggingApexd(os.path.join(tmp, "apexd"), zone, lines)
        apex.port = servers.free_port()
        os.makedirs(apex.workdir, exist_ok=True)
        r = subprocess.run(apex.command(), capture_output=True, text=True, timeout=60)
        assert r.returncode != 0, (lines, r.stderr)
        assert reason in r.stderr, (lines, r.stderr)


@pytest.mark.skipif(os.geteuid() != 0 or os.path.exists("/dev/log"),
                    reason="needs root and no syslog daemon's /dev/log")
def test_syslog(tmp_path):
    tmp = str(tmp_path)
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sink.bind("/dev/log")
    except OSError as e:  # another run's, or a syslog daemon started meanwhile
        sink.close()
        pytest.skip("cannot bind /dev/log: %s" % e)
    sink.settimeout(0.2)
    apex = None
    try:
        apex = LoggingApexd(os.path.join(tmp, "apexd"), zone_file(tmp),
                            ["    log-target: syslog", "    log-facility: local3"]).start()
        got = []
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and not any("serving 1 zone(s)" in m for m in got):
            try:
                got.append(sink.recv(4096).decode("utf-8", "replace"))
            except socket.timeout:
                pass
        lines = [m for m in got if "serving 1 zone(s)" in m]
        assert lines, got
        # <PRI>: local3 (19) * 8 + info (6) = 158; the ident with the pid
        assert lines[0].startswith("<158>"), lines[0]
        assert "apexd[%d]: info: serving 1 zone(s)" % apex.proc.pid in lines[0], lines[0]
    finally:
        if apex is not None:
            assert apex.stop() == 0
        sink.close()
        os.unlink("/dev/log")
