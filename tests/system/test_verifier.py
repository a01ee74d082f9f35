# SPDX-License-Identifier: BSD-3-Clause
"""Zone verifiers (verifier: and NSD's other verify keys): every version a
load, a reload or a transfer builds is offered to an external command
before any query sees it.

- ldns-verify-zone, fed the zone on its standard input: a zone signed now
  is served; the same zone signed with signatures that expired is not, at
  start (its names SERVFAIL) or by a reload (the old version stays, apexctl
  reload fails with the verifier's last line); zone-status and the metrics
  say so, and the log holds what ldns-verify-zone said.
- A verifier that queries the new version with kdig at VERIFY_IP_ADDRESS
  and VERIFY_PORT, as NSD sets them (SOA over UDP, the whole zone by AXFR),
  while the public listener still answers with the version served: the
  version under verification is not reachable there.  A secondary's
  transfer it rejects is not served, and is transferred and offered again
  at the next retry, then served once the verifier accepts it.
- verifier-timeout: a verifier still running is killed, the version not
  served.  verifier-count: at most that many run at once (a lock the
  verifiers take shows it), and that many do run side by side (each waits
  for the other to start): at start-up, on the reload threads, and on the
  threads of a secondary's refresh pool.
- A zone to verify without any verifier is a configuration error.
"""

import os
import subprocess
import time
import urllib.request

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest

import servers
from test_secondary import FakePrimary, SecondaryApexd, base_records, wait_log, zone_text

T = dns.rdatatype
WAIT = 30

ZONE = """$ORIGIN example.
$TTL 3600
@ SOA ns hostmaster %d 3600 900 604800 300
@ NS ns
ns A 192.0.2.1
www A 192.0.2.80
"""


def apexctl(sock, *args):
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return subprocess.run([os.path.join(builddir, "apexctl"), "-s", sock] + list(args),
                          capture_output=True, text=True, timeout=60)


def query(port, name, rdtype=T.SOA):
    q = dns.message.make_query(name, rdtype)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5)


def serial(port, origin):
    return query(port, origin).answer[0][0].serial


def signed(d, serial_number, expired=False, origin="example."):
    """origin signed by ldns-signzone with a new key: now, or with
    signatures that expired in 2020.  The signed file's path."""
    src = os.path.join(d, "%s%d.zone" % (origin, serial_number))
    with open(src, "w") as f:
        f.write(ZONE.replace("example.", origin) % serial_number)
    key = subprocess.run(["ldns-keygen", "-a", "ECDSAP256SHA256", "-k", origin], cwd=d,
                         capture_output=True, text=True, check=True).stdout.strip()
    out = src + (".expired" if expired else ".signed")
    args = ["ldns-signzone", "-n", "-f", out]
    if expired:
        args += ["-e", "20200101000000", "-i", "20190101000000"]
    subprocess.run(args + [src, key], cwd=d, check=True, capture_output=True)
    return out


def copy_a_records(path):
    """The A records of a zone file written by zone_text()."""
    with open(path) as f:
        return sum(1 for line in f if " IN A " in line)


def script(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + text)
    os.chmod(path, 0o755)
    return path


class VerifyApexd(servers.Server):
    """apexd from a config file: server lines, and zones (origin, file,
    zone lines); a control socket and a metrics endpoint."""

    kind = "apexd"

    def __init__(self, workdir, server_lines, zones, served=None):
        served = [(o, f) for o, f, _ in zones] if served is None else served
        super().__init__(workdir, served)
        self.server_lines = server_lines
        self.conf_zones = zones
        self.socket = os.path.join(workdir, "ctl.sock")
        self.metrics_port = servers.free_port()
        self.conf = os.path.join(workdir, "apex.conf")

    def command(self):
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 '    control-socket: "%s"' % self.socket,
                 "    metrics: 127.0.0.1@%d" % self.metrics_port] + [
                     "    " + s for s in self.server_lines]
        for origin, path, extra in self.conf_zones:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % path]
            lines += ["    " + s for s in extra]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def metrics(self):
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()


def test_ldns_verify_zone_at_start_and_reload(tmp_path):
    d = str(tmp_path)
    good = signed(d, 1)
    expired = signed(d, 2, expired=True)
    stale = signed(d, 1, expired=True, origin="stale.")
    other = os.path.join(d, "other.zone")
    with open(other, "w") as f:
        f.write(ZONE.replace("example.", "other.") % 1)
    served = os.path.join(d, "served.zone")
    os.link(good, served)
    apex = VerifyApexd(d, ["verifier: ldns-verify-zone -V 1"], [
        ("example.", served, ["verify-zone: yes"]),
        ("stale.", stale, ["verify-zone: yes"]),
        ("other.", other, []),  # not verified
    ], served=[("example.", served), ("other.", other)])
    apex.start()
    try:
        assert serial(apex.port, "example.") == 1
        log = apex.log_tail(80)
        assert "zone example. serial 1: verifier ldns-verify-zone passed" in log, log
        # signatures that expired: not served, and ldns-verify-zone said why
        assert query(apex.port, "stale.").rcode() == dns.rcode.SERVFAIL
        assert "zone stale.: verifier: Error: DNSSEC signature has expired" in log, log
        status = apexctl(apex.socket, "zone-status", "stale.").stdout
        assert "rejected by the verifier (exit status" in status, status
        assert "verifier: ldns-verify-zone -V 1" in status, status
        assert "other.: loaded" in apexctl(apex.socket, "zone-status", "other.").stdout
        assert "verifier" not in apexctl(apex.socket, "zone-status", "other.").stdout

        # a reload to expired signatures: refused, serial 1 served still
        os.unlink(served)
        os.link(expired, served)
        r = apexctl(apex.socket, "reload", "example.")
        assert r.returncode != 0, r
        assert "rejected by the verifier (exit status" in r.stdout + r.stderr, r
        assert "There were errors in the zone" in r.stdout + r.stderr, r
        assert serial(apex.port, "example.") == 1
        log = apex.log_tail(80)
        assert "zone example.: verifier: Error: DNSSEC signature has expired" in log, log
        status = apexctl(apex.socket, "--json", "zone-status", "example.").stdout
        assert '"verifier":{"command":"ldns-verify-zone -V 1","running":false,' in status
        assert '"result":"failed","serial":2' in status, status

        # and to a good version again: served
        os.unlink(served)
        os.link(signed(d, 3), served)
        r = apexctl(apex.socket, "reload", "example.")
        assert r.returncode == 0, r
        assert serial(apex.port, "example.") == 3
        metrics = apex.metrics()
        assert 'apex_zone_verifications_total{result="passed"} 2' in metrics, metrics
        assert 'apex_zone_verifications_total{result="failed"} 2' in metrics, metrics
        assert "apex_zone_verifiers_running 0" in metrics
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_kdig_verifier_of_a_secondary(tmp_path):
    """A verifier that queries the version it judges; a transfer it
    rejects is retried, and served once accepted."""
    d = str(tmp_path)
    fake = FakePrimary("good", base_records())
    apex = SecondaryApexd(os.path.join(d, "apexd"), ["127.0.0.1@%d NOKEY" % fake.port])
    with open(apex.copy, "w") as f:
        f.write(zone_text(1, refresh=1))
    marker = os.path.join(d, "refuse-serial-2")
    seen = os.path.join(d, "seen")
    open(marker, "w").close()
    public = servers.free_port()
    apex.fixed_port = public
    verifier = script(d, "kdig-verifier", """
zone=$VERIFY_ZONE
new=$(kdig @$VERIFY_IP_ADDRESS -p $VERIFY_PORT +short +timeout=5 SOA $zone | cut -d' ' -f3)
old=$(kdig @127.0.0.1 -p %d +short +timeout=1 +retry=0 SOA $zone | cut -d' ' -f3)
axfr=$(kdig @$VERIFY_IP_ADDRESS -p $VERIFY_PORT +timeout=5 AXFR $zone | grep -c '	A	')
echo "new $new old ${old:-none} axfr $axfr stdin $VERIFY_ZONE_ON_STDIN" | tee -a %s
test "$new" = 2 && test -e %s && { echo "serial 2 refused"; exit 1; }
exit 0
""" % (public, seen, marker))
    apex.extra_server = ["    verifier: %s" % verifier, "    verify-zones: yes",
                         "    verifier-feed-zone: no"]
    try:
        apex.start()
        wait_log(apex, "serial 2 rejected by the verifier (exit status 1): serial 2 refused")
        assert serial(apex.port, "secret.test.") == 1
        with open(seen) as f:
            lines = f.read().splitlines()
        # the start-up copy (serial 1, nothing served yet; its A records
        # transferred whole), then serial 2 while the public port served
        # serial 1, its AXFR with the primary's 51 A records
        assert lines[0] == "new 1 old none axfr %d stdin no" % copy_a_records(apex.copy), lines
        assert "new 2 old 1 axfr 51 stdin no" in lines, lines
        axfrs = fake.axfrs
        deadline = time.monotonic() + WAIT
        while fake.axfrs < axfrs + 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert fake.axfrs > axfrs, "not transferred again: %s" % apex.log_tail()
        assert serial(apex.port, "secret.test.") == 1
        os.unlink(marker)
        deadline = time.monotonic() + WAIT
        while serial(apex.port, "secret.test.") != 2:
            assert time.monotonic() < deadline, apex.log_tail(40)
            time.sleep(0.1)
        status = apexctl(apex.socket, "zone-status", "secret.test.").stdout
        assert "last verification: passed (exit status 0) for serial 2" in status, status
        assert ", 2 queries" in status, status
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()


def test_timeout_kills_the_verifier(tmp_path):
    d = str(tmp_path)
    zone = os.path.join(d, "example.zone")
    with open(zone, "w") as f:
        f.write(ZONE % 1)
    pidfile = os.path.join(d, "verifier.pid")
    other = os.path.join(d, "other.zone")
    with open(other, "w") as f:
        f.write(ZONE.replace("example.", "other.") % 1)
    slow = script(d, "slow", "echo $$ > %s; echo thinking; exec sleep 60\n" % pidfile)
    # apexd does not start without a zone: other. is served unverified
    apex = VerifyApexd(d, ["verifier: %s" % slow],
                       [("example.", zone, ["verify-zone: yes", "verifier-timeout: 1"]),
                        ("other.", other, [])], served=[("other.", other)])
    apex.start()
    try:
        wait_log(apex, "timed out after 1 s (verifier-timeout)")
        assert query(apex.port, "example.").rcode() == dns.rcode.SERVFAIL
        with open(pidfile) as f:
            pid = int(f.read())
        assert not os.path.exists("/proc/%d" % pid) or \
            open("/proc/%d/stat" % pid).read().split(") ")[1][0] == "Z"
        assert "zone example.: verifier: thinking" in apex.log_tail(40)
        assert 'apex_zone_verifications_total{result="timed_out"} 1' in apex.metrics()
    finally:
        assert apex.stop() == 0, apex.log_tail()


def count_verifier(d, count):
    """A verifier for verifier-count 1: it fails if it finds the lock
    directory another makes and removes; for 2: each waits (10 s at most)
    for the start of another, which it sees only when two run at once."""
    if count == 1:
        body = ("mkdir %s/lock || { echo lock taken; exit 1; }\nsleep 0.5\n"
                "rmdir %s/lock\n" % (d, d))
    else:
        body = ("touch %s/started.$VERIFY_ZONE\n"
                "for i in $(seq 1 100); do\n"
                "  test $(ls %s | grep -c '^started') = 2 && exit 0\n"
                "  sleep 0.1\ndone\necho alone; exit 1\n" % (d, d))
    return script(d, "verifier", body)


@pytest.mark.parametrize("count", [1, 2])
def test_verifier_count(tmp_path, count):
    """verifier-count 1: a lock directory each verifier makes and removes
    is never found taken.  2: each verifier waits for the other's start,
    which it sees only when both run at once."""
    d = str(tmp_path)
    zones = []
    for name in ("one.", "two."):
        path = os.path.join(d, name + "zone")
        with open(path, "w") as f:
            f.write(ZONE.replace("example.", name) % 1)
        zones.append((name, path, []))
    verifier = count_verifier(d, count)
    apex = VerifyApexd(d, ["verify-zones: yes", "verifier: %s" % verifier,
                           "verifier-count: %d" % count], zones)
    apex.start()
    try:
        assert serial(apex.port, "one.") == 1 and serial(apex.port, "two.") == 1
        metrics = apex.metrics()
        assert 'apex_zone_verifications_total{result="passed"} 2' in metrics, metrics
        # a reload of both once the server runs: the same, on the reload threads
        for name in os.listdir(d):
            if name.startswith("started."):
                os.unlink(os.path.join(d, name))
        for name, path, _ in zones:
            with open(path, "w") as f:
                f.write(ZONE.replace("example.", name) % 2)
        r = apexctl(apex.socket, "reload")
        assert r.returncode == 0, (r.stdout, r.stderr, apex.log_tail(40))
        assert serial(apex.port, "one.") == 2 and serial(apex.port, "two.") == 2
        metrics = apex.metrics()
        assert 'apex_zone_verifications_total{result="passed"} 4' in metrics, metrics
    finally:
        assert apex.stop() == 0, apex.log_tail()


@pytest.mark.parametrize("count", [1, 2])
def test_verifier_count_of_transfers(tmp_path, count):
    """As test_verifier_count, for the transfers of a secondary: two zones
    transferred from an apexd primary are verified one at a time
    (verifier-count 1) or side by side (2), and then served."""
    d = str(tmp_path)
    os.mkdir(os.path.join(d, "primary"))
    os.mkdir(os.path.join(d, "secondary"))
    zones, copies = [], []
    for name in ("one.", "two."):
        path = os.path.join(d, "primary", name + "zone")
        with open(path, "w") as f:
            f.write(ZONE.replace("example.", name) % 7)
        zones.append((name, path, ["provide-xfr: 127.0.0.0/8 NOKEY"]))
    primary = VerifyApexd(os.path.join(d, "primary"), [], zones)
    primary.start()
    try:
        verifier = count_verifier(d, count)
        for name in ("one.", "two."):
            copies.append((name, os.path.join(d, "secondary", name + "zone"),
                           ["request-xfr: 127.0.0.1@%d NOKEY" % primary.port]))
        apex = VerifyApexd(os.path.join(d, "secondary"),
                           ["verify-zones: yes", "verifier: %s" % verifier,
                            "verifier-count: %d" % count], copies)
        apex.start()
        try:
            for name in ("one.", "two."):
                deadline = time.monotonic() + WAIT
                while query(apex.port, name).rcode() != dns.rcode.NOERROR:
                    assert time.monotonic() < deadline, apex.log_tail(40)
                    time.sleep(0.1)
                assert serial(apex.port, name) == 7
            metrics = apex.metrics()
            assert 'apex_zone_verifications_total{result="passed"} 2' in metrics, metrics
            assert 'apex_zone_verifications_total{result="failed"} 0' in metrics, metrics
        finally:
            assert apex.stop() == 0, apex.log_tail()
    finally:
        assert primary.stop() == 0, primary.log_tail()


def test_configuration_errors(tmp_path):
    d = str(tmp_path)
    zone = os.path.join(d, "example.zone")
    with open(zone, "w") as f:
        f.write(ZONE % 1)
    conf = os.path.join(d, "apex.conf")
    cases = [
        ("zone:\n  name: example.\n  file: %s\n  verify-zone: yes\n" % zone,
         "zone example. is verified (verify-zone or verify-zones) but no verifier is given"),
        ("server:\n  verifier-timeout: soon\n", "apex.conf:2:"),
        ("server:\n  verifier-count: 0\n", "apex.conf:2:"),
        ("zone:\n  name: example.\n  file: %s\n  verifier-feed-zone: maybe\n" % zone,
         "apex.conf:4:"),
    ]
    for text, expected in cases:
        with open(conf, "w") as f:
            f.write(text)
        r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True,
                           text=True, timeout=30)
        assert r.returncode != 0 and expected in r.stderr, (text, r)
