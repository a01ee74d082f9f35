# SPDX-License-Identifier: BSD-3-Clause
"""apexd as a secondary over TLS (RFC 9103): BIND 9.18 is the primary.

BIND serves secret.test., DNSSEC-signed at test time (dnssec-keygen and
dnssec-signzone from bind9-utils, re-signed incrementally for a change so
that only the changed RRsets get new signatures), on a TLS listener with
the certificate primary.example (tls_util.Certs), and transfers it only
over that listener with the TSIG key (`allow-transfer port P transport
tls`): its plain port refuses.  With `ixfr-from-differences` it answers
IXFR with the difference between the zone files it loaded.

apexd has request-xfr with a tls-auth (auth-domain-name primary.example):

* the zone comes by AXFR over TLS, equal to BIND's (its AXFR over TLS),
  and after a change announced with NOTIFY by IXFR over TLS, equal again;
  the log and `apexctl zone-status` say so;
* with BIND requiring client certificates (ca-file on its listener), the
  zone whose tls-auth has client-cert and client-key is transferred, one
  whose tls-auth has none, or one from another CA, is not, and the log
  and zone-status say why;
* a tls-auth whose auth-domain-name the certificate does not carry
  (changed by `apexctl reconfig` after a first transfer) stops the
  transfers: a newer serial on BIND is not taken, the old version is
  still served whole, the log and zone-status say "certificate name does
  not match"; so with another CA as tls-cert-bundle ("certificate verify
  failed"); the right name and CA again and the change comes by IXFR.

apexd as an XoT primary is tested in test_tls.py.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time

import dns.flags
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.xfr
import dns.zone
import pytest

import servers
import tls_util
from test_hardening import apexctl
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, SECRET, WAIT, serial_of, wait_serial,
                            zone_text)
from test_tls import TlsApexd, zone_records

NEW_RECORD = "new.%s 300 IN A 192.0.2.99\n" % ORIGIN

pytestmark = pytest.mark.skipif(
    any(shutil.which(c) is None for c in ("named", "dnssec-keygen", "dnssec-signzone")),
    reason="BIND 9 (named, bind9-utils) is not installed")


def run(cmd, cwd):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, "%s: %s%s" % (" ".join(cmd), r.stdout, r.stderr)
    return r.stdout


# ---------------------------------------------------------------- the signed zone

@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="apex-xot-in-")
    try:
        yield tls_util.Certs(os.path.join(d, "certs"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def keys(certs):
    """A KSK and a ZSK for secret.test. (ECDSA P-256) in a directory."""
    d = os.path.join(os.path.dirname(certs.dir), "dnssec-keys")
    os.makedirs(d)
    run(["dnssec-keygen", "-q", "-K", d, "-a", "ECDSAP256SHA256", "-f", "KSK", ORIGIN], d)
    run(["dnssec-keygen", "-q", "-K", d, "-a", "ECDSAP256SHA256", ORIGIN], d)
    return d


def sign(keydir, unsigned, out, serial="keep"):
    """dnssec-signzone unsigned (text) into out, with the keys of keydir
    (smart signing: their DNSKEYs added); serial: keep or increment.  An
    input already signed keeps the signatures that are still good."""
    src = out + ".in"
    with open(src, "w") as f:
        f.write(unsigned)
    run(["dnssec-signzone", "-q", "-S", "-K", keydir, "-d", keydir, "-o", ORIGIN, "-O", "full",
         "-N", serial, "-f", out + ".new", src], os.path.dirname(out))
    os.replace(out + ".new", out)


def signed_zone(keydir, d):
    """secret.test. serial 1, signed, as d/secret.test.zone."""
    path = os.path.join(d, "secret.test.zone")
    os.makedirs(d, exist_ok=True)
    sign(keydir, zone_text(1), path)
    return path


def change_zone(keydir, path):
    """The next serial of the signed zone at path, with NEW_RECORD added:
    only the changed RRsets (the SOA, the new name, its NSEC neighbour)
    signed again.  Returns the new file's text."""
    time.sleep(1.1)  # a newer mtime for BIND to see
    with open(path) as f:
        signed = f.read()
    sign(keydir, signed + NEW_RECORD, path, serial="increment")
    with open(path) as f:
        return f.read()


# ---------------------------------------------------------------- the servers

class BindXotPrimary(servers.Server):
    """BIND 9.18 as primary of zones [(origin, file)]: queries on its plain
    port, transfers (with the key) only over TLS on tls_port, with the
    server certificate primary.example; with mutual, ca-file on the TLS
    listener, which makes BIND require a client certificate that
    verifies.  NOTIFYs notify_port (with the key) when set."""

    kind = "bind-xot-primary"

    def __init__(self, workdir, zones, certs, mutual=False, notify_port=None):
        super().__init__(workdir, zones)
        self.certs = certs
        self.mutual = mutual
        self.notify_port = notify_port
        self.tls_port = servers.free_port()

    def command(self):
        d, c = self.workdir, self.certs
        tls = 'tls t { key-file "%s"; cert-file "%s";' % (c.server_key, c.server)
        if self.mutual:
            tls += ' ca-file "%s";' % c.ca
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port,
            "    listen-on port %d tls t { 127.0.0.1; };" % self.tls_port,
            "    listen-on-v6 { none; };", "    recursion no;", "    notify no;", "};",
            "controls { };",
            'key "%s" { algorithm hmac-sha256; secret "%s"; };' % (KEY_NAME, SECRET),
            tls + " };",
        ]
        for origin, path in self.zones:
            notify = ""
            if self.notify_port:
                notify = " notify explicit; also-notify { 127.0.0.1 port %d key %s; };" % (
                    self.notify_port, KEY_NAME)
            lines.append('zone "%s" { type primary; file "%s"; ixfr-from-differences yes;'
                         ' allow-transfer port %d transport tls { key %s; };%s };'
                         % (origin, path, self.tls_port, KEY_NAME, notify))
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]

    def reload(self):
        self.proc.send_signal(signal.SIGHUP)


class XotSecondary(servers.Server):
    """apexd, a secondary over TLS: zones [(origin, copy, tls-auth name)]
    from primary_port with the key; tls-auths {name: (auth-domain-name,
    client cert, client key)} (cert and key None: no client certificate);
    tls-cert-bundle the CA.  It lets 127.0.0.1 transfer the zones with the
    key, to compare.  start() waits for the zones in wait only."""

    kind = "apexd-xot"

    def __init__(self, workdir, zones, tls_auths, certs, primary_port, wait,
                 port=None):
        super().__init__(workdir, [(origin, None) for origin in wait])
        self.secondaries = zones
        self.tls_auths = tls_auths
        self.certs = certs
        self.primary_port = primary_port
        self.fixed_port = port
        self.socket = os.path.join(workdir, "ctl.sock")
        self.conf = os.path.join(workdir, "apex.conf")
        self.bundle = certs.ca  # tls-cert-bundle

    def command(self):
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 '    control-socket: "%s"' % self.socket, "    xfr-idle-timeout: 5",
                 '    tls-cert-bundle: "%s"' % self.bundle,
                 "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
                 '    secret: "%s"' % SECRET]
        for name, (domain, cert, key) in sorted(self.tls_auths.items()):
            lines += ["tls-auth:", "    name: %s" % name, "    auth-domain-name: %s" % domain]
            if cert is not None:
                lines += ['    client-cert: "%s"' % cert, '    client-key: "%s"' % key]
        for origin, copy, auth in self.secondaries:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % copy,
                      "    request-xfr: 127.0.0.1@%d %s %s" % (self.primary_port, KEY_NAME, auth),
                      "    allow-notify: 127.0.0.1 %s" % KEY_NAME,
                      "    provide-xfr: 127.0.0.1 %s" % KEY_NAME]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def reconfig(self):
        self.command()  # the configuration written again, same port
        r = apexctl(self.socket, "reconfig")
        assert r.returncode == 0, (r.stdout, r.stderr, self.log_tail())

    def zone_status(self, origin=ORIGIN):
        r = apexctl(self.socket, "zone-status", origin)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.stdout

    def last_result(self, origin=ORIGIN):
        for line in self.zone_status(origin).splitlines():
            if line.strip().startswith("last result:"):
                return line.split(":", 1)[1].strip()
        raise AssertionError("no last result:\n" + self.zone_status(origin))

    def stop_checked(self):
        TlsApexd.stop_checked(self)


def log_text(server):
    server.log.flush()
    with open(server.logpath, "rb") as f:
        return f.read().decode("utf-8", "replace")


def wait_log(server, text, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while text not in log_text(server):
        assert time.monotonic() < deadline, "no %r in the log:\n%s" % (text, server.log_tail(40))
        time.sleep(0.1)


def xfr_query(origin=ORIGIN):
    q = dns.message.make_query(origin, dns.rdatatype.AXFR)
    q.use_tsig(KEYRING, KEY_NAME, algorithm="hmac-sha256")
    return q


def bind_records(bind, ctx, origin=ORIGIN):
    """The zone from BIND, by AXFR over TLS with the key (ctx: the client's
    side of TLS): its records.  BIND transfers over TLS only with the ALPN
    protocol dot (RFC 9103 section 7.1); it answers SERVFAIL without."""
    ctx.set_alpn_protocols(["dot"])
    with tls_util.Dot(bind.tls_port, ctx) as conn:
        rcode, count, z = conn.xfr(xfr_query(origin), origin)
    assert rcode == dns.rcode.NOERROR and count > 0, (rcode, count)
    return zone_records(z)


def apex_records(apex, origin=ORIGIN):
    """The zone apexd serves, by AXFR over plain TCP with the key."""
    z = dns.zone.Zone(origin, relativize=False)
    q = xfr_query(origin)
    dns.query.inbound_xfr("127.0.0.1", z, query=q, port=apex.port, timeout=10, lifetime=60)
    return zone_records(z)


def assert_signed(records):
    types = {r[1] for r in records}
    assert {dns.rdatatype.DNSKEY, dns.rdatatype.RRSIG, dns.rdatatype.NSEC} <= types, types


def bind_soa_serial(bind, origin=ORIGIN):
    q = dns.message.make_query(origin, dns.rdatatype.SOA)
    r = dns.query.udp(q, "127.0.0.1", port=bind.port, timeout=5)
    return r.answer[0][0].serial if r.answer else None


def wait_bind_serial(bind, serial):
    deadline = time.monotonic() + WAIT
    while bind_soa_serial(bind) != serial:
        assert time.monotonic() < deadline, "BIND does not serve %d:\n%s" % (
            serial, bind.log_tail(30))
        time.sleep(0.1)


def secondary(tmp, certs, bind, auths, zones, wait, port=None):
    return XotSecondary(os.path.join(tmp, "apexd"), zones, auths, certs, bind.tls_port, wait,
                        port=port)


# ---------------------------------------------------------------- AXFR, then IXFR

def test_axfr_then_ixfr_over_tls(certs, keys, tmp_path):
    """The signed zone by AXFR over TLS, equal to BIND's; BIND's plain port
    refuses a transfer, so it can only have come over TLS.  A change,
    announced with NOTIFY, comes by IXFR over TLS: equal again, the new
    name answered with its signature; the log and zone-status tell of both
    transfers, over TLS."""
    tmp = str(tmp_path)
    path = signed_zone(keys, os.path.join(tmp, "bind"))
    apex_port = servers.free_port()
    bind = BindXotPrimary(os.path.join(tmp, "bind"), [(ORIGIN, path)], certs,
                          notify_port=apex_port).start()
    apex = None
    try:
        with pytest.raises(dns.xfr.TransferError) as refused:
            dns.zone.from_xfr(dns.query.xfr("127.0.0.1", ORIGIN, port=bind.port, keyring=KEYRING,
                                            keyname=KEY_NAME, keyalgorithm="hmac-sha256",
                                            lifetime=30))
        assert refused.value.rcode == dns.rcode.REFUSED
        ctx = certs.context()
        auths = {"primary": (tls_util.SERVER_NAME, None, None)}
        copy = os.path.join(tmp, "apexd", "secret.test.zone")
        apex = secondary(tmp, certs, bind, auths, [(ORIGIN, copy, "primary")], [ORIGIN],
                         port=apex_port).start()
        assert serial_of(apex.port) == 1
        want = bind_records(bind, ctx)
        assert_signed(want)
        assert apex_records(apex) == want
        src = "from 127.0.0.1@%d %s primary over TLS: " % (bind.tls_port, KEY_NAME)
        wait_log(apex, "AXFR serial 1 " + src)
        last = apex.last_result()
        assert last.startswith("AXFR serial 1 " + src), apex.zone_status()
        status = apex.zone_status()
        assert "transfers: 1 (failed: 0)" in status
        # served now: not shown as failed for the copy it had not at start
        assert status.startswith("%s: loaded\n" % ORIGIN) and "error:" not in status, status

        change_zone(keys, path)
        bind.reload()
        wait_serial(apex.port, 2, apex)
        wait_log(apex, "IXFR serial 2 " + src)
        want = bind_records(bind, ctx)
        assert apex_records(apex) == want
        assert apex.last_result().startswith("IXFR serial 2 " + src), apex.zone_status()
        assert "IXFR (whole zone)" not in log_text(apex)
        q = dns.message.make_query("new." + ORIGIN, dns.rdatatype.A, want_dnssec=True)
        r = dns.query.udp(q, "127.0.0.1", port=apex.port, timeout=5)
        assert {rrset.rdtype for rrset in r.answer} == {dns.rdatatype.A, dns.rdatatype.RRSIG}, r
        assert r.flags & dns.flags.AA
        # apexd has the copy on disk, of serial 2: an IXFR's copy lags the
        # version served (copy-flush-interval) and is written at stop
        apex.stop_checked()
        apex = None
        assert "new.%s" % ORIGIN in open(copy).read()
    finally:
        if apex is not None:
            apex.stop_checked()
        bind.stop()


# ---------------------------------------------------------------- mutual TLS

def small_zone(origin, serial=1):
    return ("$ORIGIN %s\n$TTL 300\n@ IN SOA ns1 hostmaster %d 3600 1 3600 60\n"
            "@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.80\n" % (origin, serial))


def test_mutual_tls(certs, keys, tmp_path):
    """BIND requires a client certificate (ca-file on its TLS listener):
    the zone whose tls-auth has client-cert and client-key is transferred,
    equal to BIND's; the zones whose tls-auth has none, or one from another
    CA, are not transferred nor served (SERVFAIL), and the log and
    zone-status say why (as far as apexd can know: BIND closes the
    connection after the handshake without an alert)."""
    tmp = str(tmp_path)
    d = os.path.join(tmp, "bind")
    path = signed_zone(keys, d)
    zones = [(ORIGIN, path)]
    for origin in ("nocert.test.", "otherca.test."):
        p = os.path.join(d, origin + "zone")
        with open(p, "w") as f:
            f.write(small_zone(origin))
        zones.append((origin, p))
    bind = BindXotPrimary(d, zones, certs, mutual=True).start()
    apex = None
    try:
        # BIND does require one: without, it closes the connection
        with pytest.raises(tls_util.Closed):
            bind_records(bind, certs.context())
        mutual = certs.context(certs.client, certs.client_key)
        want = bind_records(bind, mutual)
        assert_signed(want)
        auths = {"withcert": (tls_util.SERVER_NAME, certs.client, certs.client_key),
                 "nocert": (tls_util.SERVER_NAME, None, None),
                 "otherca": (tls_util.SERVER_NAME, certs.other_client, certs.other_client_key)}
        a = os.path.join(tmp, "apexd")
        apex = secondary(tmp, certs, bind, auths, [
            (ORIGIN, os.path.join(a, "secret.test.zone"), "withcert"),
            ("nocert.test.", os.path.join(a, "nocert.test.zone"), "nocert"),
            ("otherca.test.", os.path.join(a, "otherca.test.zone"), "otherca")],
            [ORIGIN]).start()
        assert serial_of(apex.port) == 1
        assert apex_records(apex) == want
        done = "AXFR serial 1 from 127.0.0.1@%d %s withcert over TLS: " % (bind.tls_port, KEY_NAME)
        wait_log(apex, done)  # logged once zone-status has it
        assert apex.last_result().startswith(done), apex.zone_status()
        for origin, auth in (("nocert.test.", "nocert"), ("otherca.test.", "otherca")):
            # BIND ends the session after the handshake, without an alert:
            # all that apexd can tell is that the connection closed
            why = "zone %s: 127.0.0.1@%d %s %s: connection closed before the answer was " \
                "complete" % (origin, bind.tls_port, KEY_NAME, auth)
            wait_log(apex, why)
            deadline = time.monotonic() + WAIT
            while not apex.last_result(origin).startswith("failed: "):
                assert time.monotonic() < deadline, apex.zone_status(origin)
                time.sleep(0.1)
            assert why.split(": ", 1)[1] in apex.last_result(origin), apex.zone_status(origin)
            assert "transfers: 0 (failed: " in apex.zone_status(origin)
            q = dns.message.make_query(origin, dns.rdatatype.SOA)
            r = dns.query.udp(q, "127.0.0.1", port=apex.port, timeout=5)
            assert r.rcode() == dns.rcode.SERVFAIL and not r.answer, r
            assert not os.path.exists(os.path.join(a, origin + "zone"))
        # and the zones are there to be had, with the right certificate
        bind_records(bind, mutual, "nocert.test.")
    finally:
        if apex is not None:
            apex.stop_checked()
        bind.stop()


# ---------------------------------------------------------------- the wrong name

def test_certificate_of_another_name(certs, keys, tmp_path):
    """A first transfer with the right auth-domain-name; the tls-auth then
    names other.example (`apexctl reconfig`) and BIND gets serial 2: an
    `apexctl refresh` transfers nothing, serial 1 is still served, all of
    it, the log says "certificate name does not match other.example" and
    so does zone-status.  The right name with another CA as tls-cert-bundle:
    the same, "certificate verify failed".  The right name and CA again, and
    serial 2 comes by IXFR over TLS."""
    tmp = str(tmp_path)
    path = signed_zone(keys, os.path.join(tmp, "bind"))
    bind = BindXotPrimary(os.path.join(tmp, "bind"), [(ORIGIN, path)], certs).start()
    apex = None
    try:
        auths = {"primary": (tls_util.SERVER_NAME, None, None)}
        copy = os.path.join(tmp, "apexd", "secret.test.zone")
        apex = secondary(tmp, certs, bind, auths, [(ORIGIN, copy, "primary")], [ORIGIN]).start()
        assert serial_of(apex.port) == 1
        old = apex_records(apex)
        assert old == bind_records(bind, certs.context())
        wait_log(apex, "AXFR serial 1")  # logged once the copy is written
        old_copy = open(copy).read()

        apex.tls_auths["primary"] = ("other.example", None, None)
        apex.reconfig()
        change_zone(keys, path)
        bind.reload()
        wait_bind_serial(bind, 2)
        # the name, then the chain: another CA as tls-cert-bundle
        for why in ("TLS handshake: certificate name does not match other.example",
                    "TLS handshake: certificate verify failed: unable to get local issuer"):
            if "verify" in why:
                apex.tls_auths["primary"] = (tls_util.SERVER_NAME, None, None)
                apex.bundle = certs.other_ca
                apex.reconfig()
            r = apexctl(apex.socket, "refresh", ORIGIN)
            assert r.returncode == 0, r.stdout + r.stderr
            wait_log(apex, "zone %s: SOA query: 127.0.0.1@%d %s primary: %s" % (
                ORIGIN, bind.tls_port, KEY_NAME, why))
            assert serial_of(apex.port) == 1
            assert apex_records(apex) == old
            assert open(copy).read() == old_copy
            deadline = time.monotonic() + WAIT
            while why not in apex.last_result():
                assert time.monotonic() < deadline, apex.zone_status()
                time.sleep(0.1)
            assert apex.last_result().startswith("failed: SOA query: "), apex.zone_status()
            assert "transfers: 1 " in apex.zone_status()

        apex.bundle = certs.ca
        apex.tls_auths["primary"] = (tls_util.SERVER_NAME, None, None)
        apex.reconfig()
        r = apexctl(apex.socket, "refresh", ORIGIN)
        assert r.returncode == 0, r.stdout + r.stderr
        wait_serial(apex.port, 2, apex)
        src = "from 127.0.0.1@%d %s primary over TLS: " % (bind.tls_port, KEY_NAME)
        # logged once zone-status has it (just after the version is served)
        wait_log(apex, "IXFR serial 2 " + src)
        assert apex.last_result().startswith("IXFR serial 2 " + src), apex.zone_status()
        assert apex_records(apex) == bind_records(bind, certs.context())
    finally:
        if apex is not None:
            apex.stop_checked()
        bind.stop()
