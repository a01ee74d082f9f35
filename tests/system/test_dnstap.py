# SPDX-License-Identifier: BSD-3-Clause
"""dnstap (the dnstap: section of apex.conf(5)), read with the tools
collectors use: fstrm_capture (package fstrm-bin) writes what apexd sends
to a Frame Streams file, BIND's dnstap-read (package bind9-dnsutils)
decodes it.

Every query sent is there as AUTH_QUERY and its response as
AUTH_RESPONSE, with the client's address and port, the transport (DOT
for DNS over TLS), the message bytes, apexd's identity and version; only what the configuration
asks is logged.  Without a collector apexd answers as before, counts the
frames lost and connects once one appears.  A collector that stops
reading makes the workers drop frames (counted), never wait: every query
is still answered, and apexd stops in time.  A collector killed mid-run
costs nothing.  A dnstap section without a socket path is refused.  On a
proxy-protocol-port the client logged is the one the PROXY v2 header
names.
"""

import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time

import dns.message
import dns.query
import dns.rdatatype
import pytest

import servers
import tls_util

T = dns.rdatatype
ORIGIN = "tap.test."
CONTENT_TYPE = b"protobuf:dnstap.Dnstap"
WAIT = 15.0

pytestmark = pytest.mark.skipif(
    shutil.which("fstrm_capture") is None or shutil.which("dnstap-read") is None,
    reason="fstrm_capture (fstrm-bin) and dnstap-read (bind9-dnsutils) are not installed")


def zone_file(tmp):
    path = os.path.join(tmp, "tap.test.zone")
    with open(path, "w") as f:
        f.write("$ORIGIN tap.test.\n$TTL 3600\n@ IN SOA ns1 hostmaster 1 3600 900 604800 300\n"
                "@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.2\n")
    return path


class TapApexd(servers.Server):
    """apexd with a dnstap: section."""

    kind = "apexd-dnstap"

    def __init__(self, workdir, zone, socket_path, queries=True, responses=True):
        super().__init__(workdir, [(ORIGIN, zone)])
        self.zone = zone
        self.socket_path = socket_path
        self.queries, self.responses = queries, responses
        self.ctl_socket = os.path.join(workdir, "ctl.sock")

    def command(self):
        conf = os.path.join(self.workdir, "apex.conf")
        yes = {True: "yes", False: "no"}
        with open(conf, "w") as f:
            f.write("\n".join([
                "server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                '    control-socket: "%s"' % self.ctl_socket,
                "dnstap:", "    dnstap-enable: yes",
                '    dnstap-socket-path: "%s"' % self.socket_path,
                "    dnstap-log-auth-query-messages: %s" % yes[self.queries],
                "    dnstap-log-auth-response-messages: %s" % yes[self.responses],
                '    dnstap-identity: "tap-test-1"', '    dnstap-version: "apex-under-test"',
                "zone:", '    name: "%s"' % ORIGIN, '    file: "%s"' % self.zone]) + "\n")
        return [servers.apexd_path(), "-f", "-c", conf]

    def stats(self):
        r = subprocess.run([os.path.join(os.path.dirname(servers.apexd_path()), "apexctl"), "-s",
                            self.ctl_socket, "--json", "stats"], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)


class Capture:
    """fstrm_capture on a Unix socket, writing a Frame Streams file."""

    def __init__(self, tmp, socket_path):
        self.socket_path = socket_path
        self.output = os.path.join(tmp, "capture.fstrm")
        self.log = open(os.path.join(tmp, "fstrm_capture.log"), "wb")
        self.proc = subprocess.Popen(["fstrm_capture", "-t", CONTENT_TYPE.decode(), "-u",
                                      socket_path, "-w", self.output],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + WAIT
        while not os.path.exists(socket_path):
            assert time.monotonic() < deadline and self.proc.poll() is None, "no socket"
            time.sleep(0.05)

    def stop(self):
        """SIGINT (fstrm_capture then closes its file) and wait, by PID."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()

    def records(self):
        """dnstap-read -y: one dict per frame with the fields the test reads."""
        r = subprocess.run(["dnstap-read", "-y", self.output], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        out = []
        for doc in r.stdout.split("\n---"):
            rec = {}
            for line in doc.splitlines():
                s = line.strip()
                for key in ("identity", "version", "type", "socket_protocol", "socket_family",
                            "query_address", "query_port", "message_size"):
                    if s.startswith(key + ":") and key not in rec:
                        value = s.split(":", 1)[1].strip().strip('"')
                        if key != "type" or value != "MESSAGE":  # the frame's, not the message's
                            rec[key] = value
                if s.startswith("- '") and "question" not in rec:
                    rec["question"] = s[3:-1]
            if rec:
                out.append(rec)
        return out


def ask(port, name, rdtype, tcp=False):
    q = dns.message.make_query(name, rdtype, use_edns=0)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM if tcp else socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        client_port = s.getsockname()[1]
        if tcp:
            s.settimeout(5)
            s.connect(("127.0.0.1", port))  # dnspython wants a connected stream
            r = dns.query.tcp(q, "127.0.0.1", port=port, timeout=5, sock=s)
        else:
            r = dns.query.udp(q, "127.0.0.1", port=port, timeout=5, sock=s)
    return q, r, client_port


def wait_for(predicate, what):
    deadline = time.monotonic() + WAIT
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_queries_and_responses(tmp_path):
    tmp = str(tmp_path)
    sock = os.path.join(tmp, "dnstap.sock")
    capture = Capture(tmp, sock)
    apex = TapApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock).start()
    try:
        sent = [ask(apex.port, "www.tap.test.", T.A), ask(apex.port, "tap.test.", T.SOA, tcp=True),
                ask(apex.port, "nowhere.tap.test.", T.AAAA)]
        # the SOA probes of the start-up wait were logged too: count them in
        wait_for(lambda: apex.stats()["dnstap"]["written"] >= 2 * len(sent), "frames written")
        st = apex.stats()
    finally:
        assert apex.stop() == 0, apex.log_tail()
        capture.stop()
    recs = capture.records()
    assert len(recs) == st["dnstap"]["written"] == st["total"]["dnstap_frames"], (recs, st)
    assert st["dnstap"]["lost"] == 0 and st["total"]["dnstap_dropped"] == 0
    for rec in recs:
        assert rec["identity"] == "tap-test-1" and rec["version"] == "apex-under-test", rec
        assert rec["socket_family"] == "INET" and rec["query_address"] == "127.0.0.1", rec
    for q, r, client_port in sent:
        mine = [rec for rec in recs if rec.get("query_port") == str(client_port)]
        types = sorted(rec["type"] for rec in mine)
        assert types == ["AUTH_QUERY", "AUTH_RESPONSE"], mine
        qname = q.question[0].name.to_text()
        for rec in mine:
            size = len(q.to_wire()) if rec["type"] == "AUTH_QUERY" else len(r.to_wire())
            assert rec["message_size"] == "%db" % size, (rec, size)
            assert rec["question"].startswith(qname + " IN "), rec
            tcp = qname == "tap.test."
            assert rec["socket_protocol"] == ("TCP" if tcp else "UDP"), rec


class TapProxyApexd(TapApexd):
    """TapApexd with a proxy-protocol-port beside its plain port."""

    def command(self):
        self.proxy_port = servers.free_port()
        cmd = super().command()
        conf = cmd[-1]
        with open(conf) as f:
            text = f.read()
        text = text.replace("    workers: 2\n", "    workers: 2\n    listen: 127.0.0.1@%d\n"
                            "    proxy-protocol-port: %d\n" % (self.proxy_port, self.proxy_port))
        with open(conf, "w") as f:
            f.write(text)
        return cmd


def proxied(client, port, stream):
    """A PROXY v2 header: client (IPv4) at port, to 127.0.0.1 port 53."""
    body = socket.inet_aton(client) + socket.inet_aton("127.0.0.1") + struct.pack(">HH", port, 53)
    return (b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11 if stream else 0x12]) +
            struct.pack(">H", len(body)) + body)


def test_proxied_client_logged(tmp_path):
    """On a proxy-protocol-port the client the header names is the one
    logged, over UDP and TCP."""
    tmp = str(tmp_path)
    sock = os.path.join(tmp, "dnstap.sock")
    capture = Capture(tmp, sock)
    apex = TapProxyApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock).start()
    try:
        q = dns.message.make_query("www.tap.test.", T.A).to_wire()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(proxied("192.0.2.77", 5300, False) + q, ("127.0.0.1", apex.proxy_port))
            assert dns.message.from_wire(s.recv(65535)).answer
        with socket.create_connection(("127.0.0.1", apex.proxy_port), 5) as s:
            s.sendall(proxied("198.51.100.88", 4242, True) + struct.pack(">H", len(q)) + q)
            assert len(s.recv(2, socket.MSG_WAITALL)) == 2
        wait_for(lambda: apex.stats()["dnstap"]["written"] >= 4, "frames written")
    finally:
        assert apex.stop() == 0, apex.log_tail()
        capture.stop()
    recs = capture.records()
    udp = [r for r in recs if r.get("query_address") == "192.0.2.77"]
    tcp = [r for r in recs if r.get("query_address") == "198.51.100.88"]
    assert sorted(r["type"] for r in udp) == ["AUTH_QUERY", "AUTH_RESPONSE"], recs
    assert all(r["query_port"] == "5300" and r["socket_protocol"] == "UDP" for r in udp), udp
    assert sorted(r["type"] for r in tcp) == ["AUTH_QUERY", "AUTH_RESPONSE"], recs
    assert all(r["query_port"] == "4242" and r["socket_protocol"] == "TCP" for r in tcp), tcp


def test_queries_only(tmp_path):
    tmp = str(tmp_path)
    sock = os.path.join(tmp, "dnstap.sock")
    capture = Capture(tmp, sock)
    apex = TapApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock, responses=False).start()
    try:
        for _ in range(5):
            ask(apex.port, "www.tap.test.", T.A)
        wait_for(lambda: apex.stats()["dnstap"]["written"] >= 5, "frames written")
    finally:
        assert apex.stop() == 0, apex.log_tail()
        capture.stop()
    recs = capture.records()
    assert len(recs) >= 5 and {rec["type"] for rec in recs} == {"AUTH_QUERY"}, recs


def test_collector_absent_then_present_then_killed(tmp_path):
    tmp = str(tmp_path)
    sock = os.path.join(tmp, "dnstap.sock")
    apex = TapApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock).start()
    capture = None
    try:
        for _ in range(10):
            assert ask(apex.port, "www.tap.test.", T.A)[1].answer
        wait_for(lambda: apex.stats()["dnstap"]["lost"] >= 20, "frames lost")
        assert "dnstap: cannot connect to %s" % sock in apex.log_tail(100)
        # a collector appears: apexd connects within a second or two
        capture = Capture(tmp, sock)
        wait_for(lambda: "dnstap: connected" in apex.log_tail(100), "connected")
        before = apex.stats()["dnstap"]["written"]
        for _ in range(5):
            ask(apex.port, "www.tap.test.", T.A)
        wait_for(lambda: apex.stats()["dnstap"]["written"] >= before + 10, "written")
        # killed without a goodbye: apexd answers on, and counts what it loses
        capture.proc.kill()
        capture.proc.wait(10)
        for _ in range(20):
            assert ask(apex.port, "www.tap.test.", T.A)[1].answer
        wait_for(lambda: "dnstap: writing to %s failed" % sock in apex.log_tail(100)
                 or apex.stats()["dnstap"]["lost"] > 20, "write failure noticed")
        assert apex.alive()
    finally:
        assert apex.stop() == 0, apex.log_tail()
        if capture is not None:
            capture.stop()


def varint(b, i):
    """A protobuf varint at b[i:]: (its value, the index after it)."""
    value = shift = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def protobuf_fields(b):
    """The fields of a protobuf message: [(number, int or bytes)]."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, i = varint(b, i)
        elif wire_type == 2:
            size, i = varint(b, i)
            value, i = b[i:i + size], i + size
        else:
            assert wire_type in (1, 5), wire_type
            size = 8 if wire_type == 1 else 4
            value, i = b[i:i + size], i + size
        out.append((number, value))
    return out


def raw_messages(path):
    """The Message of every data frame of a Frame Streams file, as
    {field number: value} (dnstap.proto: 1 type, 3 socket_protocol, 6
    query_port, ...): BIND 9.18's dnstap-read shows a socket protocol that
    is not TCP as UDP, so DOT (3) is read here from the bytes."""
    with open(path, "rb") as f:
        data = f.read()
    out, i = [], 0
    while i < len(data):
        (size,) = struct.unpack(">I", data[i:i + 4])
        i += 4
        if size == 0:  # a control frame: its length, then it
            (size,) = struct.unpack(">I", data[i:i + 4])
            i += 4 + size
            continue
        frame, i = data[i:i + size], i + size
        out += [dict(protobuf_fields(v)) for n, v in protobuf_fields(frame) if n == 14]
    return out


class TapTlsApexd(TapApexd):
    """TapApexd with DNS over TLS on dot_port too (the certificate
    primary.example of tls_util.Certs)."""

    kind = "apexd-dnstap-tls"

    def __init__(self, workdir, zone, socket_path, certs):
        super().__init__(workdir, zone, socket_path)
        self.certs = certs
        self.dot_port = servers.free_port()

    def command(self):
        cmd = super().command()
        conf = cmd[-1]
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace("server:\n", "server:\n    listen: 127.0.0.1@%d\n"
                                 "    tls-port: %d\n    tls-service-key: \"%s\"\n"
                                 "    tls-service-pem: \"%s\"\n" % (
                                     self.dot_port, self.dot_port, self.certs.server_key,
                                     self.certs.server), 1))
        return cmd


def test_dot_query(tmp_path):
    """A query over DNS over TLS and its response are logged with the
    socket protocol DOT (3), the client's port, the message sizes; one over
    plain TCP beside it is still TCP (2)."""
    tmp = str(tmp_path)
    certs = tls_util.Certs(os.path.join(tmp, "certs"))
    sock = os.path.join(tmp, "dnstap.sock")
    capture = Capture(tmp, sock)
    apex = TapTlsApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock, certs).start()
    try:
        q = dns.message.make_query("www.tap.test.", T.A, use_edns=0)
        with tls_util.Dot(apex.dot_port, certs.context()) as conn:
            client_port = conn.sock.getsockname()[1]
            r = dns.message.from_wire(conn.exchange(q.to_wire()))
        assert r.answer
        tcp = ask(apex.port, "tap.test.", T.SOA, tcp=True)

        def all_written():
            # a worker queues the frames of a query before it answers
            st = apex.stats()
            return st["dnstap"]["written"] == st["total"]["dnstap_frames"] >= 6

        wait_for(all_written, "frames written")
        st = apex.stats()
    finally:
        assert apex.stop() == 0, apex.log_tail()
        capture.stop()
    recs = capture.records()
    assert len(recs) == st["dnstap"]["written"], (recs, st)
    mine = [rec for rec in recs if rec.get("query_port") == str(client_port)]
    assert sorted(rec["type"] for rec in mine) == ["AUTH_QUERY", "AUTH_RESPONSE"], mine
    for rec in mine:
        assert rec["question"].startswith("www.tap.test. IN A"), rec
        size = len(q.to_wire()) if rec["type"] == "AUTH_QUERY" else len(r.to_wire())
        assert rec["message_size"] == "%db" % size, (rec, size)
    plain = [rec for rec in recs if rec.get("query_port") == str(tcp[2])]
    assert len(plain) == 2 and {rec["socket_protocol"] for rec in plain} == {"TCP"}, plain
    # the socket protocol, from the frames' bytes: DOT is 3 (TCP 2, UDP 1)
    raw = raw_messages(capture.output)
    assert len(raw) == len(recs)
    by_port = {}
    for m in raw:
        by_port.setdefault(m.get(6), []).append((m[1], m.get(3)))
    assert sorted(by_port[client_port]) == [(1, 3), (2, 3)], by_port  # AUTH_QUERY, _RESPONSE
    assert sorted(by_port[tcp[2]]) == [(1, 2), (2, 2)], by_port


def stalled_collector(path, ready):
    """Accept one Frame Streams writer, answer its READY with ACCEPT, then
    never read again.  Returns the listening and the accepted socket."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    ready.set()
    conn, _ = srv.accept()
    head = conn.recv(8)  # escape (0) and the control frame's length
    length = struct.unpack(">I", head[4:8])[0]
    body = b""
    while len(body) < length:
        body += conn.recv(length - len(body))
    assert struct.unpack(">I", body[:4])[0] == 4  # READY
    accept = struct.pack(">II", 1, 1) + struct.pack(">I", len(CONTENT_TYPE)) + CONTENT_TYPE
    conn.sendall(struct.pack(">II", 0, len(accept)) + accept)
    return srv, conn


def test_stalled_collector_never_blocks_a_worker(tmp_path):
    tmp = str(tmp_path)
    sock = os.path.join(tmp, "dnstap.sock")
    ready = threading.Event()
    result = {}
    t = threading.Thread(target=lambda: result.update(pair=stalled_collector(sock, ready)))
    t.start()
    ready.wait(10)
    apex = TapApexd(os.path.join(tmp, "apexd"), zone_file(tmp), sock).start()
    try:
        t.join(WAIT)
        assert "pair" in result, "apexd never connected"
        # far more frames than the socket buffer and both rings hold
        q = dns.message.make_query("www.tap.test.", T.A).to_wire()
        answered = 0
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(2)
            deadline = time.monotonic() + 60
            for i in range(30000):
                if time.monotonic() > deadline:
                    break
                s.sendto(q, ("127.0.0.1", apex.port))
                try:
                    s.recv(4096)
                    answered += 1
                except socket.timeout:
                    pass
        st = apex.stats()
        assert answered >= 0.99 * i, (answered, i)
        assert st["total"]["dnstap_dropped"] > 0, st["total"]
        started = time.monotonic()
    finally:
        status = apex.stop()
        for s in result.get("pair", ()):
            s.close()
    assert status == 0, apex.log_tail()
    assert time.monotonic() - started < servers.STOP_TIMEOUT


def test_enable_without_a_socket_path(tmp_path):
    tmp = str(tmp_path)
    conf = os.path.join(tmp, "apex.conf")
    with open(conf, "w") as f:
        f.write("dnstap:\n    dnstap-enable: yes\nzone:\n    name: tap.test.\n    file: %s\n"
                % zone_file(tmp))
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "dnstap-enable: yes needs dnstap-socket-path" in r.stderr, r.stderr
    with open(conf, "w") as f:
        f.write("dnstap:\n    dnstap-enable: yes\n    dnstap-frobnicate: 1\n")
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "%s:3:" % conf in r.stderr and "dnstap" in r.stderr, r.stderr
