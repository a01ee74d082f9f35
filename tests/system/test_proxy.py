# SPDX-License-Identifier: BSD-3-Clause
"""PROXY protocol v2 (proxy-protocol-port, allow-proxy), as NSD, Knot DNS
and BIND accept it in front of their listeners.

- Headers this test writes: a query on the proxy port, over UDP and TCP,
  is answered after its header, to the proxy; one without a header, with
  a malformed one, or over the wrong transport gets no answer (UDP) or
  a closed connection (TCP), and the metrics count it.  The plain port
  beside it is served as before.
- The address in the header is the one apexd judges by: an AXFR that
  provide-xfr allows for 192.0.2.7 is served when the header names
  192.0.2.7 and refused when it names 192.0.2.8; response-rate limiting
  drops a flood from one client the header names while another client
  behind the same proxy is answered; a server cookie made for one client
  is valid from it and invalid from another behind the same proxy (and
  test_dnstap.py logs the header's client).
- allow-proxy: headers from a sender it does not list are dropped, and
  counted.
- dnsdist in front (useProxyProtocol): a client on 127.0.0.3 transfers
  the zone through it, one on 127.0.0.4 is refused; a flood from
  127.0.0.3 is rate limited while 127.0.0.4 is answered.
- A proxy-protocol-port that is also the tls-port is refused by apexd -t.
"""

import os
import shutil
import socket
import struct
import subprocess
import time
import urllib.request

import dns.edns
import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest

import servers
from conftest import zone as zone_path

T = dns.rdatatype
SIG = b"\r\n\r\n\x00\r\nQUIT\n"


def proxy_header(client, port=5300, stream=False, command=0x21):
    """A PROXY v2 header naming client (IPv4) as the source."""
    body = socket.inet_aton(client) + socket.inet_aton("127.0.0.1") + struct.pack(
        ">HH", port, 53)
    fam = 0x11 if stream else 0x12
    return SIG + bytes([command, fam]) + struct.pack(">H", len(body)) + body


class ProxyApexd(servers.Server):
    """apexd with a plain port and a proxy-protocol-port, the feature zone
    transferable by 192.0.2.7 and 127.0.0.3 only."""

    kind = "apexd"

    def __init__(self, workdir, extra=()):
        super().__init__(workdir, [])
        self.proxy_port = servers.free_port()
        self.metrics_port = servers.free_port()
        self.extra = list(extra)
        # a copy: provide-xfr keeps a journal beside the zone's file
        self.zone = os.path.join(workdir, "example.zone")
        shutil.copyfile(zone_path("example.zone"), self.zone)

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port,
                 "    listen: 127.0.0.1@%d" % self.proxy_port,
                 "    proxy-protocol-port: %d" % self.proxy_port, "    workers: 2",
                 "    metrics: 127.0.0.1@%d" % self.metrics_port] + [
                     "    " + e for e in self.extra] + [
                 "zone:", "    name: example.", '    file: "%s"' % self.zone,
                 "    provide-xfr: 192.0.2.7 NOKEY", "    provide-xfr: 127.0.0.3 NOKEY"]
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]

    def start(self):
        super().start()
        deadline = time.monotonic() + 30
        while not servers.answers_soa(self.port, "example."):
            assert time.monotonic() < deadline, self.log_tail()
            time.sleep(0.1)
        return self

    def metrics(self):
        url = "http://127.0.0.1:%d/metrics" % self.metrics_port
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()


def udp_exchange(port, data, source="127.0.0.1", timeout=1.0):
    """data sent over UDP from source; the reply, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        s.settimeout(timeout)
        s.sendto(data, ("127.0.0.1", port))
        try:
            return s.recv(65535)
        except socket.timeout:
            return None


def tcp_exchange(port, data, source="127.0.0.1"):
    """data written on a new TCP connection; the first framed message
    back, or None when the connection closes first."""
    with socket.create_connection(("127.0.0.1", port), 5, source_address=(source, 0)) as s:
        s.sendall(data)
        try:
            size = s.recv(2, socket.MSG_WAITALL)
        except ConnectionResetError:
            return None
        if len(size) < 2:
            return None
        return s.recv(struct.unpack(">H", size)[0], socket.MSG_WAITALL)


def tcp_messages(port, data):
    """Every framed message back on a TCP connection given data, until it closes."""
    out = []
    with socket.create_connection(("127.0.0.1", port), 10) as s:
        s.sendall(data)
        while True:
            size = s.recv(2, socket.MSG_WAITALL)
            if len(size) < 2:
                return out
            out.append(dns.message.from_wire(
                s.recv(struct.unpack(">H", size)[0], socket.MSG_WAITALL)))


def framed(msg):
    wire = msg.to_wire()
    return struct.pack(">H", len(wire)) + wire


def metric(text, transport, reason):
    line = 'apex_proxy_rejected_total{transport="%s",reason="%s"} ' % (transport, reason)
    for row in text.splitlines():
        if row.startswith(line):
            return int(row[len(line):])
    raise AssertionError("no %s in the metrics" % line)


@pytest.fixture(scope="module")
def apex(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("proxy"))
    # rate limiting per address, this test's own (its start-up polls, a
    # LOCAL header's queries) and the clients of the tests but the rate
    # limiting ones left out
    server = ProxyApexd(d, ["rrl-responses-per-second: 2", "rrl-slip: 0",
                            "rrl-ipv4-prefix-length: 32", "rrl-whitelist: 127.0.0.1/32",
                            "rrl-whitelist: 192.0.2.0/24"]).start()
    yield server
    assert server.stop() == 0, server.log_tail()


def test_headers_written_by_hand(apex):
    q = dns.message.make_query("www.example.", T.A)
    wire = q.to_wire()
    # UDP: answered after the header, to the proxy
    r = dns.message.from_wire(udp_exchange(apex.proxy_port, proxy_header("192.0.2.1") + wire))
    assert r.id == q.id and r.rcode() == dns.rcode.NOERROR and r.answer, r
    # LOCAL (a health check): the sender's own address stands
    r = udp_exchange(apex.proxy_port, SIG + b"\x20\x00\x00\x00" + wire)
    assert dns.message.from_wire(r).rcode() == dns.rcode.NOERROR
    before = apex.metrics()
    # no header, a TCP header over UDP, a header cut short: dropped
    assert udp_exchange(apex.proxy_port, wire) is None
    assert udp_exchange(apex.proxy_port, proxy_header("192.0.2.1", stream=True) + wire) is None
    assert udp_exchange(apex.proxy_port, proxy_header("192.0.2.1")[:20]) is None
    # TCP: the header, then the framed query
    data = tcp_exchange(apex.proxy_port, proxy_header("192.0.2.1", stream=True) + framed(q))
    assert dns.message.from_wire(data).answer
    # the header in pieces
    with socket.create_connection(("127.0.0.1", apex.proxy_port), 5) as s:
        whole = proxy_header("192.0.2.1", stream=True) + framed(q)
        for i in range(0, len(whole), 7):
            s.sendall(whole[i:i + 7])
            time.sleep(0.01)
        size = struct.unpack(">H", s.recv(2, socket.MSG_WAITALL))[0]
        assert dns.message.from_wire(s.recv(size, socket.MSG_WAITALL)).answer
    # without a header, or with one for UDP: closed without an answer
    assert tcp_exchange(apex.proxy_port, framed(q)) is None
    assert tcp_exchange(apex.proxy_port, proxy_header("192.0.2.1") + framed(q)) is None
    after = apex.metrics()
    assert metric(after, "udp", "malformed") - metric(before, "udp", "malformed") == 3
    assert metric(after, "tcp", "malformed") - metric(before, "tcp", "malformed") == 2
    # the plain port as before
    assert dns.message.from_wire(udp_exchange(apex.port, wire)).answer


def test_acl_sees_the_header_address(apex):
    q = dns.message.make_query("example.", T.AXFR)
    allowed = tcp_messages(apex.proxy_port, proxy_header("192.0.2.7", stream=True) + framed(q))
    assert allowed[0].rcode() == dns.rcode.NOERROR
    assert sum(len(m.answer) for m in allowed) > 2
    refused = tcp_messages(apex.proxy_port, proxy_header("192.0.2.8", stream=True) + framed(q))
    assert [m.rcode() for m in refused] == [dns.rcode.REFUSED]
    # and on the plain port, 127.0.0.1 is not allowed either
    assert [m.rcode() for m in tcp_messages(apex.port, framed(q))] == [dns.rcode.REFUSED]


def test_rrl_sees_the_header_address(apex):
    wire = dns.message.make_query("www.example.", T.A).to_wire()
    flood = proxy_header("198.51.100.9") + wire
    answered = sum(udp_exchange(apex.proxy_port, flood, timeout=0.2) is not None
                   for _ in range(20))
    assert answered < 10, answered
    # another client behind the same proxy
    other = udp_exchange(apex.proxy_port, proxy_header("203.0.113.9") + wire)
    assert other is not None and dns.message.from_wire(other).answer


def cookie_of(reply):
    """The COOKIE option's bytes (client and server cookie) of a reply."""
    for o in dns.message.from_wire(reply).options:
        if o.otype == 10:
            return o.to_wire() if hasattr(o, "to_wire") else o.data
    raise AssertionError("no cookie in the reply")


def test_cookies_see_the_header_address(apex):
    """A server cookie is made for the client the header names: valid when
    that client sends it back, not when another one does."""
    def ask(client, cookie):
        q = dns.message.make_query("www.example.", T.A, use_edns=0,
                                   options=[dns.edns.GenericOption(10, cookie)])
        return udp_exchange(apex.proxy_port, proxy_header(client) + q.to_wire())

    first = ask("192.0.2.21", b"\x01" * 8)
    full = cookie_of(first)
    assert len(full) == 24 and full[:8] == b"\x01" * 8
    before = apex.metrics()
    assert ask("192.0.2.21", full) is not None
    assert ask("192.0.2.22", full) is not None  # answered: cookies are not required
    after = apex.metrics()
    counter = 'apex_cookie_queries_total{cookie="%s"} '

    def count(text, kind):
        return int(next(r for r in text.splitlines()
                        if r.startswith(counter % kind)).split()[-1])
    assert count(after, "valid") - count(before, "valid") == 1
    assert count(after, "invalid") - count(before, "invalid") == 1


def test_allow_proxy(tmp_path):
    apex = ProxyApexd(str(tmp_path), ["allow-proxy: 127.0.0.2"]).start()
    try:
        q = dns.message.make_query("www.example.", T.A)
        header = proxy_header("192.0.2.1")
        assert udp_exchange(apex.proxy_port, header + q.to_wire()) is None
        r = udp_exchange(apex.proxy_port, header + q.to_wire(), source="127.0.0.2")
        assert r is not None and dns.message.from_wire(r).answer
        stream = proxy_header("192.0.2.1", stream=True) + framed(q)
        assert tcp_exchange(apex.proxy_port, stream) is None
        assert tcp_exchange(apex.proxy_port, stream, source="127.0.0.2") is not None
        text = apex.metrics()
        assert metric(text, "udp", "not_allowed") == 1, text
        assert metric(text, "tcp", "not_allowed") == 1, text
    finally:
        assert apex.stop() == 0, apex.log_tail()


class Dnsdist(servers.Server):
    """dnsdist on 127.0.0.1, forwarding to a backend with a PROXY v2 header."""

    kind = "dnsdist"

    def __init__(self, workdir, backend_port):
        super().__init__(workdir, [])
        self.backend_port = backend_port

    def command(self):
        conf = os.path.join(self.workdir, "dnsdist.conf")
        with open(conf, "w") as f:
            f.write('setLocal("127.0.0.1:%d")\n' % self.port)
            f.write('setACL({"127.0.0.0/8"})\n')
            f.write('newServer({address="127.0.0.1:%d", useProxyProtocol=true, '
                    'checkInterval=3600})\n' % self.backend_port)
            f.write('setConsoleACL({})\n')
        return ["dnsdist", "--supervised", "--disable-syslog", "-C", conf]


@pytest.mark.skipif(shutil.which("dnsdist") is None, reason="dnsdist not installed")
def test_dnsdist_in_front(apex, tmp_path):
    proxy = Dnsdist(str(tmp_path), apex.proxy_port)
    proxy.start()
    try:
        deadline = time.monotonic() + 30
        while not servers.answers_soa(proxy.port, "example."):
            assert proxy.alive() and time.monotonic() < deadline, proxy.log_tail()
            time.sleep(0.2)
        axfr = dns.message.make_query("example.", T.AXFR)
        ok = dns.query.tcp(axfr, "127.0.0.1", port=proxy.port, source="127.0.0.3", timeout=10)
        assert ok.rcode() == dns.rcode.NOERROR and ok.answer, ok
        refused = dns.query.tcp(axfr, "127.0.0.1", port=proxy.port, source="127.0.0.4",
                                timeout=10)
        assert refused.rcode() == dns.rcode.REFUSED, refused
        # rate limiting per client behind dnsdist
        q = dns.message.make_query("www.example.", T.A)
        answered = 0
        for _ in range(20):
            try:
                dns.query.udp(q, "127.0.0.1", port=proxy.port, source="127.0.0.3",
                              timeout=0.3)
                answered += 1
            except dns.exception.Timeout:
                pass
        assert answered < 10, answered
        r = dns.query.udp(q, "127.0.0.1", port=proxy.port, source="127.0.0.4", timeout=5)
        assert r.answer
    finally:
        proxy.stop()


def test_proxy_on_a_tls_port_is_refused(tmp_path):
    conf = os.path.join(str(tmp_path), "apex.conf")
    cert = os.path.join(str(tmp_path), "cert.pem")
    key = os.path.join(str(tmp_path), "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "1", "-subj", "/CN=apex.test"], check=True, capture_output=True)
    with open(conf, "w") as f:
        f.write("server:\n  listen: 127.0.0.1@8853\n  tls-port: 8853\n"
                "  tls-service-key: %s\n  tls-service-pem: %s\n"
                "  proxy-protocol-port: 8853\n" % (key, cert))
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 0
    assert "a proxy-protocol-port that is also a TLS port is not supported" in r.stderr, r
