# SPDX-License-Identifier: BSD-3-Clause
"""ZONEMD (RFC 8976) in apexd: a zone's digest is checked at start, at
every reload and after every transfer, before the version is served.

- The root zone's own ZONEMD verifies; the feature zone signed with NSEC3
  and the real .fj zone (NSEC3), given a ZONEMD computed by dnspython (an
  independent implementation, SHA-384 and SHA-512), verify.
- A root zone with one glue address changed is not served at start, while
  the other zones are: its names are answered SERVFAIL with Extended DNS
  Error 14 "zone not loaded", as NSD, Knot DNS and BIND answer a zone they
  could not load (a name in no configured zone stays REFUSED); zone-status
  says "ZONEMD digest mismatch" with both digests; with zonemd-verify: no
  it is served.
- A reload to a tampered file: apexctl reload fails, the old version keeps
  being served.
- A transfer whose ZONEMD does not match is not served, and the log says
  why.
"""

import os
import subprocess

import dns.edns
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.zone
import dns.zonetypes
import pytest

import servers
from conftest import zone as zone_path
from test_secondary import (FakePrimary, SecondaryApexd, base_records, wait_log)

T = dns.rdatatype


def apexctl(sock, *args):
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return subprocess.run([os.path.join(builddir, "apexctl"), "-s", sock] + list(args),
                          capture_output=True, text=True, timeout=60)


def rcode(port, origin):
    q = dns.message.make_query(origin, T.SOA)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5).rcode()


def ede(port, name, rdtype=T.SOA, tcp=False):
    """The rcode and the Extended DNS Errors of an EDNS query for name."""
    q = dns.message.make_query(name, rdtype, use_edns=0)
    send = dns.query.tcp if tcp else dns.query.udp
    r = send(q, "127.0.0.1", port=port, timeout=5)
    return r.rcode(), [(o.code, o.text) for o in r.options if o.otype == dns.edns.EDE]


def serial(port, origin):
    q = dns.message.make_query(origin, T.SOA)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=5).answer[0][0].serial


def tampered_root(path):
    """The root zone with a.root-servers.net.'s IPv4 address changed."""
    with open(zone_path("root.zone")) as f:
        text = f.read()
    changed = text.replace("\t198.41.0.4\n", "\t198.41.0.5\n", 1)
    assert changed != text
    with open(path, "w") as f:
        f.write(changed)


def with_digests(src, origin, dst):
    """src with ZONEMD records (SHA-384 and SHA-512) computed by dnspython."""
    zone = dns.zone.from_file(src, origin, relativize=False)
    soa = zone.get_rdataset(origin, T.SOA)[0]
    rdatas = []
    for alg in (dns.zonetypes.DigestHashAlgorithm.SHA384,
                dns.zonetypes.DigestHashAlgorithm.SHA512):
        rdatas.append(zone.compute_digest(alg))
    with open(src) as f:
        text = f.read()
    with open(dst, "w") as f:
        f.write(text)
        for rd in rdatas:
            assert rd.serial == soa.serial
            f.write("%s 3600 IN ZONEMD %s\n" % (origin, rd.to_text()))


class ConfApexd(servers.Apexd):
    """apexd from a config file (zones with their keys), a control socket."""

    def __init__(self, workdir, zones, verify=None, served=None):
        # start() waits for the zones served (all unless told)
        super().__init__(workdir, zones if served is None else served)
        self.conf_zones = zones
        self.verify = verify or {}
        self.socket = os.path.join(workdir, "ctl.sock")

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        lines = ["server:", "    control-socket: %s" % self.socket]
        for origin, path in self.conf_zones:
            lines += ["zone:", "    name: %s" % origin, "    file: %s" % path]
            if origin in self.verify:
                lines.append("    zonemd-verify: %s" % self.verify[origin])
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-n", "2", "-l",
                "%s@%d" % (servers.LOOPBACK, self.port), "-c", conf]


def test_digests_verified(tmp_path):
    d = str(tmp_path)
    nsec3 = os.path.join(d, "example.nsec3.zone")
    fj = os.path.join(d, "fj.zone")
    with_digests(zone_path("example.nsec3.zone"), "example.", nsec3)
    with_digests(zone_path("fj.zone"), "fj.", fj)
    apex = ConfApexd(d, [(".", zone_path("root.zone")), ("example.", nsec3), ("fj.", fj)])
    apex.start()
    try:
        log = apex.log_tail(60)
        assert "zone .: ZONEMD verified (SHA-384, serial 2024101100)" in log, log
        assert "zone example.: ZONEMD verified (SHA-384" in log, log
        assert "zone fj.: ZONEMD verified (SHA-384" in log, log
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_mismatch_at_start(tmp_path):
    d = str(tmp_path)
    bad = os.path.join(d, "root.zone")
    tampered_root(bad)
    # verified: the tampered root is not served, the feature zone is
    feature = [("example.", zone_path("example.zone"))]
    apex = ConfApexd(d, [(".", bad)] + feature, served=feature)
    apex.start()
    try:
        not_loaded = (dns.rcode.SERVFAIL, [(dns.edns.EDECode.NOT_READY, "zone not loaded")])
        assert ede(apex.port, ".") == not_loaded
        assert ede(apex.port, "www.nic.org.", T.A, tcp=True) == not_loaded
        assert ede(apex.port, "org.", T.DS) == not_loaded
        assert rcode(apex.port, "example.") == dns.rcode.NOERROR
        assert ede(apex.port, "www.example.", T.A)[0] == dns.rcode.NOERROR
        status = apexctl(apex.socket, "zone-status", ".")
        assert "ZONEMD digest mismatch (SHA-384): the zone's record has F1EA4385" in status.stdout, \
            status
        assert "its data gives" in status.stdout
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_reload_to_a_tampered_zone(tmp_path):
    d = str(tmp_path)
    path = os.path.join(d, "root.zone")
    with open(zone_path("root.zone")) as f, open(path, "w") as g:
        g.write(f.read())
    apex = ConfApexd(d, [(".", path)])
    apex.start()
    try:
        assert serial(apex.port, ".") == 2024101100
        tampered_root(path + ".new")
        os.rename(path + ".new", path)
        r = apexctl(apex.socket, "reload", ".")
        assert r.returncode != 0 and "ZONEMD digest mismatch" in r.stderr, r
        assert serial(apex.port, ".") == 2024101100
        assert rcode(apex.port, ".") == dns.rcode.NOERROR
        # the zone-status says why, and the old version is served
        zs = apexctl(apex.socket, "zone-status", ".").stdout
        assert "ZONEMD digest mismatch" in zs, zs
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_verification_off(tmp_path):
    d = str(tmp_path)
    bad = os.path.join(d, "root.zone")
    tampered_root(bad)
    apex = ConfApexd(d, [(".", bad)], verify={".": "no"})
    apex.start()
    try:
        assert serial(apex.port, ".") == 2024101100
        assert "ZONEMD" not in apex.log_tail(60)
    finally:
        assert apex.stop() == 0, apex.log_tail()


def test_transfer_with_a_bad_digest(tmp_path):
    """A transfer whose ZONEMD does not match its data is not served."""
    records = base_records() + [("secret.test.", "ZONEMD", "2 1 1 " + "00" * 48)]
    fake = FakePrimary("good", records)
    apex = SecondaryApexd(os.path.join(str(tmp_path), "apexd"),
                          ["127.0.0.1@%d NOKEY" % fake.port], wait_zone=False)
    try:
        apex.start()
        wait_log(apex, "ZONEMD digest mismatch (SHA-384)")
        # still waiting for a copy it can serve
        assert ede(apex.port, "secret.test.") == (
            dns.rcode.SERVFAIL, [(dns.edns.EDECode.NOT_READY, "zone not loaded")])
        assert not os.path.exists(apex.copy)
    finally:
        assert apex.stop() == 0, apex.log_tail()
        fake.stop()
