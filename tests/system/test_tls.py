# SPDX-License-Identifier: BSD-3-Clause
"""DNS over TLS and zone transfers over TLS (RFC 7858, RFC 9103).

apexd listens on three ports: plain DNS, the tls-port (DNS over TLS) and
the tls-auth-port (TLS with a client certificate verified against
tls-cert-bundle), with certificates made at test time by tls_util.Certs.
secret.test. is transferred only over the tls-auth-port
(tls-auth-xfr-only), to a client whose certificate carries
secondary.example (a tls-auth clause) and with the TSIG key.

* Every answer over TLS is the answer over plain TCP, byte for byte (the
  differential suite's queries), one query at a time with dnspython, many
  pipelined on one connection (several in a TLS record, one split over
  two records), spread over many connections; kdig +tls gets an answer.
* BIND 9.18 and NSD 4.6, as secondaries with mutual TLS, transfer the zone
  and follow a change announced with NOTIFY.
* What is not allowed is refused: plain TCP, the tls-port, no client
  certificate, one from another CA, one for another name, no or a wrong
  TSIG.
* Sessions resume with tickets, but one without a client certificate not
  on the tls-auth-port.
* A certificate renewed on disk is taken by `apexctl reconfig` for new
  connections; open ones keep theirs and go on.
* Garbage, stalled and abandoned handshakes are closed, the stalled ones by
  tcp-io-timeout, and do not keep UDP from being answered.
* The TLS counters of `apexctl stats` and of the metrics count exactly
  the queries, handshakes (resumed ones) and failed handshakes (by
  reason) of a fresh apexd.

apexd as the secondary of a primary over TLS is tested in test_xot_in.py.
"""

import concurrent.futures
import json
import os
import re
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import urllib.request

import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import dns.tsigkeyring
import dns.zone
import pytest

import client
import querygen
import servers
import tls_util
from conftest import SANITIZER_RE, ZONE_SETS, zone
from test_hardening import (BIG, RSS_MEANINGFUL, apexctl, big_queries, big_zone,
                            check_big_answer, raise_nofile, soa_query, udp_ask, vm_rss)
from test_metrics import samples, value
from test_secondary import (KEY_NAME, KEYRING, ORIGIN, SECRET, WRONG_SECRET, have, serial_of,
                            wait_serial, zone_text)

SEED = 1
AUTH_NAME = "secondaries"  # the tls-auth clause provide-xfr names
TLS_XFR_LOG = re.compile(r"zone secret\.test\.: (AXFR|IXFR) serial (\d+) to 127\.0\.0\.1#\d+"
                         r"( \(TLS, client certificate\))?")


class TlsApexd(servers.Server):
    """apexd with the three listeners and a copy of the server's
    certificate and key (server.pem, server.key) in its directory; zones:
    [(origin, file)], those in self.xfr with provide-xfr to the tls-auth."""

    kind = "apexd-tls"

    def __init__(self, workdir, zones, certs, xfr=(ORIGIN,), notify_port=None, extra_server=()):
        super().__init__(workdir, zones)
        self.certs = certs
        self.xfr = set(xfr)
        self.notify_port = notify_port
        self.extra_server = list(extra_server)
        self.dot_port = servers.free_port()
        self.auth_port = servers.free_port()
        self.socket = os.path.join(workdir, "ctl.sock")
        self.cert = os.path.join(workdir, "server.pem")
        self.key = os.path.join(workdir, "server.key")
        shutil.copy(certs.server, self.cert)
        shutil.copy(certs.server_key, self.key)

    def command(self):
        lines = ["server:"] + ["    listen: 127.0.0.1@%d" % p
                               for p in (self.port, self.dot_port, self.auth_port)] + [
            "    workers: 2",
            '    control-socket: "%s"' % self.socket,
            '    tls-service-key: "%s"' % self.key,
            '    tls-service-pem: "%s"' % self.cert,
            "    tls-port: %d" % self.dot_port,
            "    tls-auth-port: %d" % self.auth_port,
            "    tls-auth-xfr-only: yes",
            '    tls-cert-bundle: "%s"' % self.certs.ca,
        ] + ["    %s" % s for s in self.extra_server] + [
            "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
            '    secret: "%s"' % SECRET,
            "tls-auth:", "    name: %s" % AUTH_NAME,
            "    auth-domain-name: %s" % tls_util.SECONDARY_NAME,
        ]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % path]
            if origin in self.xfr:
                lines.append("    provide-xfr: 127.0.0.0/8 %s %s" % (KEY_NAME, AUTH_NAME))
                if self.notify_port:
                    lines.append("    notify: 127.0.0.1@%d %s" % (self.notify_port, KEY_NAME))
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]

    def stop_checked(self):
        """Stop it; it must have run until now, exit with 0 and have no
        sanitizer report in its log."""
        alive = self.alive()
        status = self.stop()
        with open(self.logpath, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        assert alive, "apexd exited early:\n" + self.log_tail()
        assert status == 0, "apexd exit status %s:\n%s" % (status, self.log_tail())
        assert not SANITIZER_RE.search(log), "sanitizer report:\n" + log[-4000:]

    def log_text(self):
        self.log.flush()
        with open(self.logpath, "rb") as f:
            return f.read().decode("utf-8", "replace")


@pytest.fixture(scope="module")
def certs():
    d = tempfile.mkdtemp(prefix="apex-tls-")
    try:
        yield tls_util.Certs(os.path.join(d, "certs"))
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def primary(certs):
    """The tld zone set and secret.test. (serial 1, several messages per
    transfer), transfers of secret.test. to the tls-auth only."""
    d = os.path.join(os.path.dirname(certs.dir), "primary")
    os.makedirs(d)
    path = os.path.join(d, "secret.test.zone")
    with open(path, "w") as f:
        f.write(zone_text(1))
    apex = TlsApexd(d, ZONE_SETS["tld"] + [(ORIGIN, path)], certs).start()
    try:
        yield apex
    finally:
        apex.stop_checked()


def small_apex(tmp_path, certs, extra_server=(), notify_port=None):
    """An apexd of its own serving example. and secret.test."""
    d = str(tmp_path)
    path = os.path.join(d, "secret.test.zone")
    with open(path, "w") as f:
        f.write(zone_text(1))
    return TlsApexd(os.path.join(d, "apexd"), [("example.", zone("example.zone")), (ORIGIN, path)],
                    certs, notify_port=notify_port, extra_server=extra_server)


def zone_records(z):
    """A zone's records as a set of (owner, type, TTL, rdata text)."""
    return {(name.to_text(), rds.rdtype, rds.ttl, rd.to_text())
            for name, node in z.nodes.items() for rds in node for rd in rds}


def xfr_query(keyring=KEYRING, rdtype=dns.rdatatype.AXFR):
    q = dns.message.make_query(ORIGIN, rdtype)
    if keyring is not None:
        q.use_tsig(keyring, KEY_NAME, algorithm="hmac-sha256")
    return q


def tls_axfr(port, ctx, keyring=KEYRING):
    """An AXFR of secret.test. over TLS to port, the client's side of TLS
    from ctx: (RCODE, answer count, zone or None), or ("closed", the TLS
    alert, None) when the server closed the connection without an
    answer."""
    try:
        with tls_util.Dot(port, ctx) as c:
            return c.xfr(xfr_query(keyring), ORIGIN)
    except tls_util.Closed as e:
        return "closed", e.alert, None


def secondary_context(certs):
    """The client side of the tls-auth's secondary: its certificate."""
    return certs.context(certs.client, certs.client_key)


# ---------------------------------------------------------------- DoT = TCP

def differential_queries():
    """The differential suite's queries for the tld zone set (a sample of
    each zone's names): their wire forms, message IDs 0, 1, 2, ..."""
    queries = []
    for origin, path in ZONE_SETS["tld"]:
        queries += querygen.generate(origin, path, SEED, 100, 2 if origin == "example." else 1)
    assert 2000 <= len(queries) < 65536, len(queries)
    assert any(q.do for q in queries) and any(not q.do for q in queries)
    return queries, [client.make_wire(q, i) for i, q in enumerate(queries)]


def tcp_answers(port, wires):
    c = client.Client(port)
    try:
        answers = [c.exchange_tcp(w) for w in wires]
    finally:
        c.close()
    assert all(a is not None for a in answers), "apexd did not answer every query over TCP"
    return answers


def by_id(answers):
    out = {}
    for a in answers:
        assert a[:2] not in out, "two answers with ID %d" % struct.unpack("!H", a[:2])
        out[a[:2]] = a
    return out


def assert_same_answers(queries, wires, want, got, how):
    """got (ID -> answer over TLS) holds, for every query, the answer over
    TCP (want, in order) byte for byte."""
    assert len(got) == len(wires), "%s: %d answers to %d queries" % (how, len(got), len(wires))
    bad = [i for i, w in enumerate(wires) if got.get(w[:2], b"")[2:] != want[i][2:]]
    assert not bad, "%s: %d answers differ from TCP's, e.g. %s" % (
        how, len(bad), [queries[i].describe() for i in bad[:5]])


def test_dot_answers_equal_tcp(primary, certs):
    """For a few thousand generated queries (DO on and off), the answer
    over TLS is the answer over TCP, ID aside: with dnspython one query at
    a time on one connection, and on a connection of their own for a part
    of them; pipelined on one connection, 20 and 400 messages a TLS
    record, a message split over two records; spread over 40 connections
    at once."""
    queries, wires = differential_queries()
    want = tcp_answers(primary.port, wires)
    ctx = certs.context()

    # dnspython, one connection: parsed, equal (dnspython shuffles the
    # records of an RRset in to_wire(), so they are compared as text)
    raw = socket.create_connection((tls_util.LOOPBACK, primary.dot_port), timeout=10)
    with ctx.wrap_socket(raw, server_hostname=tls_util.SERVER_NAME) as sock:
        bad = []
        for i, w in enumerate(wires):
            q = dns.message.from_wire(w)
            assert q.to_wire() == w
            r = dns.query.tls(q, tls_util.LOOPBACK, port=primary.dot_port, timeout=10, sock=sock)
            expected = dns.message.from_wire(want[i])
            if r != expected or r.to_text() != expected.to_text():
                bad.append(queries[i].describe())
        assert not bad, "dnspython over TLS: %d answers differ from TCP's, e.g. %s" % (
            len(bad), bad[:5])
        # 100 queries in one sendall() (one TLS record), then their answers
        sock.sendall(b"".join(tls_util.frame(w) for w in wires[:100]))
        got = {}
        for _ in range(100):
            (size,) = struct.unpack("!H", client.recv_exact(sock, 2))
            a = client.recv_exact(sock, size)
            got[a[:2]] = a
        assert_same_answers(queries[:100], wires[:100], want, got, "one sendall()")
    # a connection (and a handshake) per query
    for i in range(0, len(wires), len(wires) // 60):
        r = dns.query.tls(dns.message.from_wire(wires[i]), tls_util.LOOPBACK,
                          port=primary.dot_port, timeout=10, ssl_context=ctx,
                          server_hostname=tls_util.SERVER_NAME)
        assert r == dns.message.from_wire(want[i]), queries[i].describe()

    for per_record in (20, 400):
        with tls_util.Dot(primary.dot_port, ctx) as c:
            got = by_id(c.pipeline(wires, per_record=per_record))
        assert_same_answers(queries, wires, want, got, "pipelined, %d a record" % per_record)

    conns = [tls_util.Dot(primary.dot_port, ctx) for _ in range(40)]
    try:
        with concurrent.futures.ThreadPoolExecutor(len(conns)) as pool:
            parts = pool.map(lambda k: conns[k].pipeline(wires[k::len(conns)], per_record=10),
                             range(len(conns)))
            got = by_id([a for part in parts for a in part])
    finally:
        for c in conns:
            c.close()
    assert_same_answers(queries, wires, want, got, "over 40 connections")
    assert primary.alive()


def test_kdig_over_tls(primary, certs):
    """kdig +tls, verifying the certificate and its name, gets the zone's
    SOA; with another name expected it refuses the server."""
    kdig = shutil.which("kdig")
    assert kdig is not None, "kdig (knot-dnsutils) is needed"
    serial = serial_of(primary.port)
    base = [kdig, "@127.0.0.1", "-p", str(primary.dot_port), "+tls", "+tls-ca=%s" % certs.ca]
    r = subprocess.run(base + ["+tls-hostname=%s" % tls_util.SERVER_NAME, ORIGIN, "SOA"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status: NOERROR" in r.stdout, r.stdout
    assert re.search(r"\sSOA\s+\S+\s+\S+\s+%d\s" % serial, r.stdout), r.stdout
    assert "TLS session" in r.stdout, r.stdout
    r = subprocess.run(base + ["+tls-hostname=other.example", ORIGIN, "SOA"],
                       capture_output=True, text=True, timeout=30)
    assert "status: NOERROR" not in r.stdout, r.stdout


# ---------------------------------------------------------------- XoT to secondaries

class BindTlsSecondary(servers.Server):
    """BIND as secondary of apexd's tls-auth-port, with the client
    certificate secondary.example (mutual TLS)."""

    kind = "bind-tls-secondary"

    def __init__(self, workdir, primary, certs, port):
        super().__init__(workdir, [(ORIGIN, None)])
        self.primary = primary
        self.certs = certs
        self.fixed_port = port

    def command(self):
        d = self.workdir
        c = self.certs
        lines = [
            "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
            "    listen-on port %d { 127.0.0.1; };" % self.port, "    listen-on-v6 { none; };",
            "    recursion no;", "    notify no;", "    allow-transfer { 127.0.0.1; };", "};",
            "controls { };",
            'key "%s" { algorithm hmac-sha256; secret "%s"; };' % (KEY_NAME, SECRET),
            'tls apex { ca-file "%s"; remote-hostname "%s"; cert-file "%s"; key-file "%s"; };'
            % (c.ca, tls_util.SERVER_NAME, c.client, c.client_key),
            'zone "%s" { type secondary; file "%s/secret.test.db"; masterfile-format text;'
            % (ORIGIN, d),
            "    primaries { 127.0.0.1 port %d key %s tls apex; };" % (self.primary.auth_port,
                                                                       KEY_NAME),
            "    allow-notify { key %s; }; };" % KEY_NAME,
        ]
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-c", conf]


class NsdTlsSecondary(BindTlsSecondary):
    """NSD as secondary of apexd's tls-auth-port, with the client
    certificate secondary.example.  NSD 4.6 loads the client certificate
    into its TLS context only after it made the first connection's session
    (fixed in NSD 4.10.1), so its first attempt goes without one and is
    refused; retries are kept to 1-2 s so that the next one, which has it,
    comes soon."""

    kind = "nsd-tls-secondary"

    def command(self):
        d = self.workdir
        c = self.certs
        lines = [
            "server:", "    ip-address: 127.0.0.1@%d" % self.port, "    do-ip6: no",
            "    server-count: 1", '    username: ""', '    chroot: ""',
            '    zonesdir: "%s"' % d, '    database: ""', '    pidfile: "%s/nsd.pid"' % d,
            '    xfrdfile: "%s/xfrd.state"' % d, '    xfrdir: "%s"' % d,
            '    zonelistfile: "%s/zone.list"' % d, "    verbosity: 2",
            '    tls-cert-bundle: "%s"' % c.ca,
            "remote-control:", "    control-enable: no",
            "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
            '    secret: "%s"' % SECRET,
            "tls-auth:", "    name: primary", "    auth-domain-name: %s" % tls_util.SERVER_NAME,
            '    client-cert: "%s"' % c.client, '    client-key: "%s"' % c.client_key,
            "zone:", '    name: "%s"' % ORIGIN, '    zonefile: "%s/secret.test.zone"' % d,
            "    request-xfr: 127.0.0.1@%d %s primary" % (self.primary.auth_port, KEY_NAME),
            "    allow-notify: 127.0.0.1 %s" % KEY_NAME,
            "    provide-xfr: 127.0.0.1 NOKEY",
            "    min-retry-time: 1", "    max-retry-time: 2",
        ]
        conf = os.path.join(d, "nsd.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("nsd") or "/usr/sbin/nsd", "-d", "-c", conf]


SECONDARIES = {"bind": BindTlsSecondary, "nsd": NsdTlsSecondary}


def plain_axfr(port):
    """secret.test. from a reference secondary, over plain TCP, no key."""
    z = dns.zone.Zone(ORIGIN, relativize=False)
    dns.query.inbound_xfr("127.0.0.1", z, port=port, timeout=10, lifetime=60)
    return z


def wait_transfers(apex, how, serial, count):
    """Wait until apexd has logged count transfers (how: AXFR or IXFR) of
    serial; returns every transfer line of the log, which must all tell
    of TLS with a client certificate."""
    deadline = time.monotonic() + 30
    while True:
        lines = list(TLS_XFR_LOG.finditer(apex.log_text()))
        if sum(m.group(1, 2) == (how, str(serial)) for m in lines) >= count:
            break
        assert time.monotonic() < deadline, "%d %s of serial %d not logged:\n%s" % (
            count, how, serial, apex.log_tail(40))
        time.sleep(0.1)
    assert all(m.group(3) for m in lines), "a transfer not over TLS:\n" + apex.log_tail(40)
    return lines


@pytest.mark.parametrize("kind", ["bind", "nsd"])
def test_xot_to_secondary(kind, certs, tmp_path):
    """A reference secondary, with the client certificate and the key,
    transfers secret.test. over TLS from the tls-auth-port and holds what
    apexd's own AXFR over TLS holds; after a change and a NOTIFY it
    follows with an IXFR, over TLS too.  Every transfer apexd logs went
    over TLS with a client certificate (the plain port would refuse it)."""
    if not have(kind):
        pytest.skip("%s is not installed" % kind)
    sec_port = servers.free_port()
    apex = small_apex(tmp_path, certs, notify_port=sec_port).start()
    sec = None
    try:
        sec = SECONDARIES[kind](os.path.join(str(tmp_path), kind), apex, certs, sec_port).start()
        assert serial_of(sec.port) == 1
        rcode, _, z = tls_axfr(apex.auth_port, secondary_context(certs))
        assert rcode == dns.rcode.NOERROR
        assert zone_records(plain_axfr(sec.port)) == zone_records(z)
        wait_transfers(apex, "AXFR", 1, 2)  # the secondary's and ours

        path = os.path.join(str(tmp_path), "secret.test.zone")
        with open(path, "w") as f:
            f.write(zone_text(2, "new IN A 192.0.2.99\n"))
        apex.proc.send_signal(signal.SIGHUP)
        wait_serial(apex.port, 2, apex)
        wait_serial(sec.port, 2, sec)
        rcode, _, z = tls_axfr(apex.auth_port, secondary_context(certs))
        assert rcode == dns.rcode.NOERROR
        assert zone_records(plain_axfr(sec.port)) == zone_records(z)
        wait_transfers(apex, "IXFR", 2, 1)  # the secondary's (ours are AXFR)
    finally:
        if sec is not None:
            sec.stop()
        apex.stop_checked()


# ---------------------------------------------------------------- refusals

def test_refusals(primary, certs):
    """secret.test. goes only over the tls-auth-port, to the client
    certificate of the tls-auth, with the key: plain TCP and the tls-port
    are refused; without a client certificate or with one of another CA the
    handshake fails; a certificate of the right CA for another name is
    refused (its name is checked, not only its chain); no key or a wrong
    one is NOTAUTH (or REFUSED); with all of it the AXFR brings the zone.
    No refusal carries a record of the zone."""
    c = certs
    rcode, count = plain_tcp_axfr(primary.port)
    assert (rcode, count) == (dns.rcode.REFUSED, 0)
    assert tls_axfr(primary.dot_port, c.context())[:2] == (dns.rcode.REFUSED, 0)
    # the secondary's certificate, on the tls-port: still not the tls-auth-port
    assert tls_axfr(primary.dot_port, secondary_context(c))[:2] == (dns.rcode.REFUSED, 0)
    # the client's certificate is checked once the client has finished its
    # side of the handshake (TLS 1.3): the server then ends it with an alert
    for name, ctx, reason in (
            ("no certificate", c.context(), "TLSV13_ALERT_CERTIFICATE_REQUIRED"),
            ("another CA's", c.context(c.other_client, c.other_client_key),
             "TLSV1_ALERT_UNKNOWN_CA")):
        with tls_util.Dot(primary.auth_port, ctx) as conn:
            alert = conn.alert_and_close(10)
        assert isinstance(alert, ssl.SSLError), "%s: closed without an alert" % name
        assert alert.reason == reason, (name, alert)
    wrong_name = c.context(c.wrong_client, c.wrong_client_key)
    assert tls_axfr(primary.auth_port, wrong_name)[:2] == (dns.rcode.REFUSED, 0)
    wrong = dns.tsigkeyring.from_text({KEY_NAME: ("hmac-sha256", WRONG_SECRET)})
    for keyring in (None, wrong):
        rcode, count, _ = tls_axfr(primary.auth_port, secondary_context(c), keyring)
        assert rcode in (dns.rcode.NOTAUTH, dns.rcode.REFUSED) and count == 0, (rcode, count)
    rcode, count, z = tls_axfr(primary.auth_port, secondary_context(c))
    assert rcode == dns.rcode.NOERROR and count > 0
    records = zone_records(z)
    assert len(records) > 3000, len(records)
    soa = [r for r in records if r[1] == dns.rdatatype.SOA]
    assert len(soa) == 1 and soa[0][3].split()[2] == "1", soa
    # queries are answered on the tls-auth-port too
    with tls_util.Dot(primary.auth_port, c.context(c.client, c.client_key)) as conn:
        r = dns.message.from_wire(conn.exchange(soa_query().to_wire()))
        assert r.rcode() == dns.rcode.NOERROR and r.answer
    assert primary.alive()


def test_session_resumption(primary, certs):
    """Sessions resume with the tickets apexd sends, on each TLS port (with
    its client certificate on the tls-auth-port, whose name still lets the
    AXFR through); a session from the tls-port, which has no client
    certificate, does not resume on the tls-auth-port: a full handshake
    there ends with the alert certificate_required."""
    def ticket(port, ctx):
        with tls_util.Dot(port, ctx) as conn:
            assert conn.exchange(soa_query().to_wire())  # the tickets come after the handshake
            assert not conn.tls.session_reused
            return conn.tls.session

    dot, auth = certs.context(), secondary_context(certs)
    with tls_util.Dot(primary.dot_port, dot, session=ticket(primary.dot_port, dot)) as conn:
        assert conn.tls.session_reused
        assert dns.message.from_wire(conn.exchange(soa_query().to_wire())).answer
    with tls_util.Dot(primary.auth_port, auth, session=ticket(primary.auth_port, auth)) as conn:
        assert conn.tls.session_reused
        rcode, count, _ = conn.xfr(xfr_query(), ORIGIN)
        assert rcode == dns.rcode.NOERROR and count > 0
    with tls_util.Dot(primary.auth_port, dot, session=ticket(primary.dot_port, dot)) as conn:
        assert not conn.tls.session_reused, "a session without a client certificate resumed"
        alert = conn.alert_and_close(10)
    assert isinstance(alert, ssl.SSLError) and alert.reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED"


def plain_tcp_axfr(port):
    q = xfr_query()
    r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=10)
    return r.rcode(), sum(len(rrset) for rrset in r.answer)


# ---------------------------------------------------------------- renewal

def test_certificate_renewal(certs, tmp_path):
    """A new certificate and key written over the files, then `apexctl
    reconfig`: a connection opened after it is shown the new certificate
    (on both TLS ports), one opened before still has the old one and is
    still answered."""
    apex = small_apex(tmp_path, certs).start()
    try:
        ctx = certs.context()
        old = open_pem_der(apex.cert)
        before = tls_util.Dot(apex.dot_port, ctx)
        assert before.peer_cert() == old
        renewed = os.path.join(str(tmp_path), "renewed")
        os.makedirs(renewed)
        shutil.copy(os.path.join(certs.dir, "ca.pem"), renewed)
        shutil.copy(os.path.join(certs.dir, "ca.key"), renewed)
        pem, key = tls_util.make_cert(renewed, "ca", tls_util.SERVER_NAME, 2001)
        shutil.copy(key, apex.key + ".new")
        shutil.copy(pem, apex.cert + ".new")
        os.replace(apex.key + ".new", apex.key)
        os.replace(apex.cert + ".new", apex.cert)
        new = open_pem_der(apex.cert)
        assert new != old
        r = apexctl(apex.socket, "reconfig")
        assert r.returncode == 0, (r.stdout, r.stderr, apex.log_tail())
        with tls_util.Dot(apex.dot_port, ctx) as after:
            assert after.peer_cert() == new
            assert dns.message.from_wire(after.exchange(soa_query().to_wire())).answer
        with tls_util.Dot(apex.auth_port, certs.context(certs.client, certs.client_key)) as after:
            assert after.peer_cert() == new
        with before:
            assert before.peer_cert() == old
            r = dns.message.from_wire(before.exchange(soa_query().to_wire()))
            assert r.rcode() == dns.rcode.NOERROR and r.answer
    finally:
        apex.stop_checked()


IDLE_DOT_CONNECTIONS = 400
IDLE_DOT_BYTES = 32 * 1024  # resident bytes apexd may spend on an idle DoT connection


def test_idle_dot_connections_memory(certs, tmp_path):
    """400 idle DoT connections, each with its handshake done, cost apexd
    less than 32 KiB of resident memory each: the TLS session (about 15
    KiB idle) and the connection; the ciphertext and plaintext buffers come
    from the worker's pools only while a message is under way.  Then two
    pipelined queries on every connection, with answers of 4 KiB, are all
    answered, a UDP query in the middle is answered, and with every query
    answered the memory per connection is still under the bound: the
    buffers went back to the pools."""
    n = IDLE_DOT_CONNECTIONS
    limit = raise_nofile(n + 200)
    if limit < n + 100:
        pytest.skip("RLIMIT_NOFILE %d too low for %d connections" % (limit, n))
    d = str(tmp_path)
    apex = TlsApexd(os.path.join(d, "apexd"), [("example.", zone("example.zone")),
                                                (BIG, big_zone(d))], certs, xfr=(),
                    extra_server=["tcp-max-connections: %d" % (n + 100),
                                  "tcp-max-connections-per-client: 0",
                                  "tcp-idle-timeout: 120"]).start()
    ctx = certs.context()
    conns = []
    try:
        # the workers' first sessions and answers (loops, pools, OpenSSL's caches) set up
        for _ in range(20):
            soa_over_dot(apex, certs)
        time.sleep(0.5)
        before = vm_rss(apex.proc.pid)
        for _ in range(n):
            conns.append(tls_util.Dot(apex.dot_port, ctx))
        time.sleep(1)  # the last clients' Finished read by the server
        idle = vm_rss(apex.proc.pid)
        per_conn = (idle - before) / n
        print("idle dot: %d connections, %.0f bytes each (VmRSS %d -> %d)"
              % (n, per_conn, before, idle))
        assert per_conn < IDLE_DOT_BYTES or not RSS_MEANINGFUL, \
            "%.0f bytes of VmRSS per idle DoT connection (at most %d)" % (
                per_conn, IDLE_DOT_BYTES)
        sent = []
        for i, c in enumerate(conns):
            wires = big_queries(2 * i, 2)
            c.write(b"".join(tls_util.frame(w) for w in wires))
            sent.append(wires)
            if i == n // 2:
                r = udp_ask(apex.port, soa_query())
                assert r.rcode() == dns.rcode.NOERROR and r.answer
        for c, wires in zip(conns, sent):
            for w in wires:
                check_big_answer(c.read_message(), w)
        time.sleep(0.5)
        answered = vm_rss(apex.proc.pid)
        per_conn = (answered - before) / n
        print("after %d queries: %.0f bytes each (VmRSS %d)" % (2 * n, per_conn, answered))
        assert per_conn < IDLE_DOT_BYTES or not RSS_MEANINGFUL, \
            "%.0f bytes of VmRSS per DoT connection once answered" % per_conn
    finally:
        for c in conns:
            c.close()
        apex.stop_checked()


def open_pem_der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


# ---------------------------------------------------------------- bad input

IO_TIMEOUT = 2


def connect(port, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.settimeout(5)
    s.connect((tls_util.LOOPBACK, port))
    s.setblocking(False)
    return s


def closed_by_server(s):
    """Whether the server has closed s (reading what it sent)."""
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def wait_closed(socks, timeout):
    """Wait (at most timeout seconds) until the server closed every socket
    in socks; returns the time each was seen closed (None: still open)."""
    seen = [None] * len(socks)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and None in seen:
        for i, s in enumerate(socks):
            if seen[i] is None and closed_by_server(s):
                seen[i] = time.monotonic()
        if None in seen:
            time.sleep(0.05)
    return seen


def soa_over_dot(apex, certs):
    with tls_util.Dot(apex.dot_port, certs.context()) as c:
        r = dns.message.from_wire(c.exchange(soa_query().to_wire()))
    assert r.rcode() == dns.rcode.NOERROR and r.answer
    return r


@pytest.fixture(scope="module")
def strict(certs):
    """apexd with tcp-io-timeout 2 s and room for many connections."""
    d = os.path.join(os.path.dirname(certs.dir), "strict")
    os.makedirs(d)
    apex = TlsApexd(d, [("example.", zone("example.zone"))], certs, xfr=(), extra_server=[
        "tcp-io-timeout: %d" % IO_TIMEOUT, "tcp-idle-timeout: 30",
        "tcp-max-connections: 1000", "tcp-max-connections-per-client: 100"]).start()
    try:
        yield apex
    finally:
        apex.stop_checked()


def test_garbage_instead_of_client_hello(strict, certs):
    """Bytes that are not TLS (a DNS query in the clear, an HTTP request)
    on the tls-port: the server closes the connection without waiting for
    the I/O timeout, and answers the next client."""
    for garbage in (client.make_wire(querygen.Query("example.", 6, "tcp", None, False, False,
                                                    False), 1),
                    b"GET / HTTP/1.1\r\nHost: primary.example\r\n\r\n",
                    bytes(range(256)) * 4):
        s = connect(strict.dot_port)
        try:
            s.send(garbage)
            t0 = time.monotonic()
            [seen] = wait_closed([s], IO_TIMEOUT + 5)
            assert seen is not None, "not closed after garbage"
            assert seen - t0 < IO_TIMEOUT, "closed %.1f s after garbage: by the timeout" % (
                seen - t0)
        finally:
            s.close()
    soa_over_dot(strict, certs)


def test_stalled_handshake_closed(strict, certs):
    """Half a ClientHello, then nothing: the connection is closed by
    tcp-io-timeout (2 s), not before it, and at most 4 s after it."""
    hello = tls_util.half_client_hello(certs.context())
    t0 = time.monotonic()
    s = connect(strict.dot_port)
    try:
        s.send(hello)
        [seen] = wait_closed([s], IO_TIMEOUT + 4)
        assert seen is not None, "a stalled handshake still open %d s later" % (IO_TIMEOUT + 4)
        # 0.2 s for the server's coarse clock, as in test_hardening.py
        assert seen >= t0 + IO_TIMEOUT - 0.2, "closed %.1f s after connecting" % (seen - t0)
    finally:
        s.close()


def test_many_stalled_handshakes(strict, certs):
    """300 connections from 6 addresses each stop in the middle of their
    ClientHello: while they are open, every UDP query is answered within
    its usual time-out and a new DoT client is answered; the I/O timeout
    then closes all of them."""
    if raise_nofile(1024) < 600:
        pytest.skip("RLIMIT_NOFILE too low for 300 connections")
    hello = tls_util.half_client_hello(certs.context())
    t0 = time.monotonic()
    socks = []
    try:
        for i in range(300):
            s = connect(strict.dot_port, "127.0.0.%d" % (10 + i % 6))
            s.send(hello)
            socks.append(s)
        opened = time.monotonic()
        answered = 0
        for _ in range(20):
            r = udp_ask(strict.port, soa_query(), timeout=client.UDP_TIMEOUT)
            assert r.rcode() == dns.rcode.NOERROR and r.answer
            answered += 1
        soa_over_dot(strict, certs)
        checked = time.monotonic()
        still_open = sum(not closed_by_server(s) for s in socks)
        if checked < t0 + IO_TIMEOUT - 0.2:
            # none can have timed out yet: all were open while UDP was answered
            assert still_open == 300, still_open
        else:
            print("machine slow: %.1f s to open 300 connections, %.1f s to ask; %d still open"
                  % (opened - t0, checked - opened, still_open))
        seen = wait_closed(socks, IO_TIMEOUT + 10)
        assert None not in seen, "%d stalled handshakes still open" % seen.count(None)
        assert min(seen) >= t0 + IO_TIMEOUT - 0.2
        assert answered == 20
    finally:
        for s in socks:
            s.close()
    soa_over_dot(strict, certs)
    udp_ask(strict.port, soa_query())


def test_close_without_close_notify(strict, certs):
    """Clients that go away without close_notify (after an answer, in the
    middle of a query, in the middle of an answer, with a reset) do not
    disturb the server: the next client is answered."""
    ctx = certs.context()
    q = soa_query().to_wire()
    # after an answer
    c = tls_util.Dot(strict.dot_port, ctx)
    assert c.exchange(q)
    c.close()
    soa_over_dot(strict, certs)
    # in the middle of a query (half of it in a record)
    c = tls_util.Dot(strict.dot_port, ctx)
    c.write(tls_util.frame(q)[:7])
    c.close()
    soa_over_dot(strict, certs)
    # many queries sent, no answer read, reset
    c = tls_util.Dot(strict.dot_port, ctx)
    c.write(tls_util.frame(dns.message.make_query("example.", "ANY").to_wire()) * 300)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    soa_over_dot(strict, certs)
    # a TCP reset right after the handshake
    c = tls_util.Dot(strict.dot_port, ctx)
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    c.close()
    soa_over_dot(strict, certs)
    udp_ask(strict.port, soa_query())
    assert strict.alive()


# ---------------------------------------------------------------- counters

def tls_stats(apex):
    """The TLS counters of `apexctl --json stats`: the total's, checked to
    be the sum of the workers'."""
    r = apexctl(apex.socket, "--json", "stats")
    assert r.returncode == 0, r.stdout + r.stderr
    st = json.loads(r.stdout)
    total = st["total"]["tls"]
    workers = [w["tls"] for w in st["workers"]]
    assert len(workers) == 2
    for key in ("queries", "handshakes", "resumed"):
        assert total[key] == sum(w[key] for w in workers), (key, st)
    for key in total["failed"]:
        assert total["failed"][key] == sum(w["failed"][key] for w in workers), (key, st)
    return total


def test_tls_counters(certs, tmp_path):
    """On an apexd of its own (tcp-io-timeout 2 s, a metrics endpoint), the
    TLS counters of `apexctl stats` (the total, the sum of the workers')
    and of the metrics count exactly what was sent: DoT queries one at a
    time and pipelined, on the tls-port and the tls-auth-port (an AXFR
    too); full handshakes and one resumed; bytes that are not TLS
    (protocol); half a ClientHello left to time out (timeout); a client
    certificate of another CA on the tls-auth-port (certificate).  Queries
    over UDP and plain TCP count in none of them."""
    metrics_port = servers.free_port()
    apex = small_apex(tmp_path, certs, extra_server=[
        "tcp-io-timeout: %d" % IO_TIMEOUT, "metrics: 127.0.0.1@%d" % metrics_port]).start()
    try:
        assert tls_stats(apex) == {"queries": 0, "handshakes": 0, "resumed": 0,
                                   "failed": {"protocol": 0, "certificate": 0, "timeout": 0}}
        ctx = certs.context()
        q = soa_query().to_wire()
        with tls_util.Dot(apex.dot_port, ctx) as c:
            for _ in range(5):
                assert c.exchange(q)
            session = c.tls.session
        with tls_util.Dot(apex.dot_port, ctx, session=session) as c:
            assert c.tls.session_reused
            assert c.exchange(q)
        wires = [client.make_wire(querygen.Query("example.", 1, "tcp", None, False, False,
                                                 False), i) for i in range(30)]
        with tls_util.Dot(apex.dot_port, ctx) as c:
            assert len(c.pipeline(wires, per_record=7)) == 30
        with tls_util.Dot(apex.auth_port, secondary_context(certs)) as c:
            assert c.exchange(q)
            assert c.xfr(xfr_query(), ORIGIN)[0] == dns.rcode.NOERROR
        sent = {"queries": 5 + 1 + 30 + 2, "handshakes": 4, "resumed": 1}
        # neither UDP nor plain TCP counts
        udp_ask(apex.port, soa_query())
        dns.query.tcp(soa_query(), "127.0.0.1", port=apex.port, timeout=10)

        s = connect(apex.dot_port)
        try:
            s.send(b"GET / HTTP/1.1\r\nHost: primary.example\r\n\r\n")
            assert wait_closed([s], IO_TIMEOUT + 5)[0] is not None
        finally:
            s.close()
        s = connect(apex.dot_port)
        try:
            s.send(tls_util.half_client_hello(ctx))
            assert wait_closed([s], IO_TIMEOUT + 5)[0] is not None
        finally:
            s.close()
        other = certs.context(certs.other_client, certs.other_client_key)
        with tls_util.Dot(apex.auth_port, other) as c:
            alert = c.alert_and_close(10)
        assert isinstance(alert, ssl.SSLError) and alert.reason == "TLSV1_ALERT_UNKNOWN_CA", alert
        # no client certificate at all where one is required: a certificate failure too
        with tls_util.Dot(apex.auth_port, certs.context()) as c:
            alert = c.alert_and_close(10)
        assert (isinstance(alert, ssl.SSLError) and
                alert.reason == "TLSV13_ALERT_CERTIFICATE_REQUIRED"), alert
        want = dict(sent, failed={"protocol": 1, "certificate": 2, "timeout": 1})
        # a failure is counted as the server ends the connection: at once
        deadline = time.monotonic() + 10
        while tls_stats(apex) != want and time.monotonic() < deadline:
            time.sleep(0.1)
        assert tls_stats(apex) == want

        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port,
                                    timeout=10) as r:
            m = samples(r.read().decode())
        assert value(m, "apex_tls_queries_total") == want["queries"]
        assert value(m, "apex_tls_handshakes_total") == want["handshakes"]
        assert value(m, "apex_tls_resumed_handshakes_total") == want["resumed"]
        for reason, n in want["failed"].items():
            assert value(m, "apex_tls_handshake_failures_total", reason=reason) == n, reason
    finally:
        apex.stop_checked()
    # and in the counters' line at shutdown
    with open(apex.logpath) as f:
        assert ("; tls queries=38 handshakes=4 resumed=1 failed-protocol=1 failed-certificate=2 "
                "failed-timeout=1\n") in f.read(), apex.log_tail()
