# SPDX-License-Identifier: BSD-3-Clause
"""Hardening of apexd: DNS cookies (RFC 7873, RFC 9018), response rate
limiting with slip, TCP connection exhaustion (per-client limit, idle and
I/O timeouts against slowloris) and the privilege drop, each against its
own apexd with the settings under test, and the counters of `apexctl stats`.
"""

import json
import os
import pwd
import resource
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import dns.edns
import dns.flags
import dns.message
import dns.rcode
import pytest

import client
import servers
from conftest import SANITIZER_RE, zone

EXAMPLE = [("example.", zone("example.zone"))]
COOKIE = 10


def apexctl(sock, *args):
    builddir = os.environ.get("APEX_BUILDDIR") or os.environ.get("APEX_SRCDIR") or os.getcwd()
    return subprocess.run([os.path.join(builddir, "apexctl"), "-s", sock, "-t", "20"] + list(args),
                          capture_output=True, text=True, timeout=30)


def stats(sock):
    r = apexctl(sock, "--json", "stats")
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)["total"]


class Instance:
    """apexd with extra server: lines and a control socket, in its own directory."""

    def __init__(self, tmp, name, settings, zones=EXAMPLE, args=()):
        self.dir = os.path.join(tmp, name)
        os.makedirs(self.dir, exist_ok=True)
        self.socket = os.path.join(self.dir, "ctl.sock")
        conf = os.path.join(self.dir, "apex.conf")
        with open(conf, "w") as f:
            f.write("server:\n" + "".join("    %s\n" % line for line in settings))
        self.server = servers.Apexd(self.dir, zones, extra_args=[
            "-c", conf, "-s", self.socket] + list(args))

    def __enter__(self):
        self.server.start()
        return self

    def __exit__(self, *exc):
        alive = self.server.alive()
        status = self.server.stop()
        with open(self.server.logpath, "rb") as f:
            log = f.read().decode("utf-8", "replace")
        assert alive, "apexd exited early:\n" + self.server.log_tail()
        assert status == 0, "apexd exit status %s:\n%s" % (status, self.server.log_tail())
        assert not SANITIZER_RE.search(log), "sanitizer report:\n" + log[-4000:]

    @property
    def port(self):
        return self.server.port


@pytest.fixture(scope="module")
def tmp():
    d = tempfile.mkdtemp(prefix="apex-hardening-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def udp_ask(port, msg, source="127.0.0.1", timeout=2.0):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        s.settimeout(timeout)
        s.sendto(msg.to_wire(), (client.LOOPBACK, port))
        return dns.message.from_wire(s.recv(65535))


def tcp_ask(port, msg, source="127.0.0.1", timeout=2.0):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect((client.LOOPBACK, port))
        wire = msg.to_wire()
        s.sendall(struct.pack("!H", len(wire)) + wire)
        (size,) = struct.unpack("!H", client.recv_exact(s, 2))
        return dns.message.from_wire(client.recv_exact(s, size))


def cookie_of(response):
    for o in response.options:
        if o.otype == COOKIE:
            return o.to_wire() if hasattr(o, "to_wire") else o.data
    return None


def soa_query(cookie=None):
    options = [dns.edns.GenericOption(COOKIE, cookie)] if cookie is not None else []
    m = dns.message.make_query("example.", "SOA", use_edns=0, options=options)
    m.flags = 0
    return m


# ---------------------------------------------------------------- cookies

def test_cookies(tmp):
    """A client cookie gets a server cookie back (client cookie + the 16-byte
    RFC 9018 server cookie); that server cookie is then verified; a forged
    one is counted invalid but still answered (cookies are not required);
    over TCP too; a malformed COOKIE option is FORMERR (RFC 7873 5.2.2)."""
    with Instance(tmp, "cookies", ["cookie-secret: 000102030405060708090a0b0c0d0e0f"]) as a:
        client_cookie = bytes.fromhex("0123456789abcdef")
        r = udp_ask(a.port, soa_query(client_cookie))
        assert r.rcode() == dns.rcode.NOERROR and len(r.answer) == 1
        c = cookie_of(r)
        assert c is not None and len(c) == 24, c
        assert c[:8] == client_cookie
        assert c[8] == 1 and c[9:12] == b"\0\0\0"  # RFC 9018 version 1, reserved
        stamp = struct.unpack("!I", c[12:16])[0]
        assert abs(stamp - time.time()) < 60

        # the server cookie returned is valid, over UDP and TCP
        r2 = udp_ask(a.port, soa_query(c))
        assert r2.rcode() == dns.rcode.NOERROR and cookie_of(r2)[:8] == client_cookie
        r3 = tcp_ask(a.port, soa_query(c))
        assert r3.rcode() == dns.rcode.NOERROR and len(cookie_of(r3)) == 24
        # the same server cookie from another address is not valid
        udp_ask(a.port, soa_query(c), source="127.0.0.2")
        # a forged server cookie: answered, counted invalid
        forged = c[:16] + bytes(8)
        r4 = udp_ask(a.port, soa_query(forged))
        assert r4.rcode() == dns.rcode.NOERROR and len(r4.answer) == 1
        # malformed: 5 bytes, 12 bytes (9..15 is not allowed)
        for bad in (b"12345", bytes(12)):
            assert udp_ask(a.port, soa_query(bad)).rcode() == dns.rcode.FORMERR
        s = stats(a.socket)
        assert s["cookie_client"] == 1, s
        assert s["cookie_valid"] == 2, s
        assert s["cookie_invalid"] == 2, s
        assert s["rcode"].get("FORMERR") == 2, s

    # a second server with the same secret accepts the first one's cookie;
    # with cookies off no COOKIE option is returned
    with Instance(tmp, "cookies2", ["cookie-secret: 000102030405060708090a0b0c0d0e0f"]) as b:
        udp_ask(b.port, soa_query(c))
        assert stats(b.socket)["cookie_valid"] == 1
    with Instance(tmp, "nocookies", ["cookies: no"]) as n:
        r = udp_ask(n.port, soa_query(client_cookie))
        assert r.rcode() == dns.rcode.NOERROR and cookie_of(r) is None


BADCOOKIE = 23


def test_required_cookies(tmp):
    """require-server-cookie: over UDP a query with a client cookie alone,
    or with a server cookie that does not verify, gets BADCOOKIE (RFC 7873
    5.2.3, 5.2.4) with a new server cookie and no records; with that cookie
    it is answered.  A query without a cookie, and any query over TCP, is
    answered as before."""
    settings = ["cookie-secret: 000102030405060708090a0b0c0d0e0f", "require-server-cookie: yes"]
    with Instance(tmp, "require", settings) as a:
        client_cookie = bytes.fromhex("0123456789abcdef")
        r = udp_ask(a.port, soa_query(client_cookie))
        assert r.rcode() == BADCOOKIE and not r.answer and not r.authority, r
        c = cookie_of(r)
        assert c is not None and len(c) == 24 and c[:8] == client_cookie
        r = udp_ask(a.port, soa_query(c))
        assert r.rcode() == dns.rcode.NOERROR and len(r.answer) == 1
        r = udp_ask(a.port, soa_query(c[:16] + bytes(8)))  # forged
        assert r.rcode() == BADCOOKIE and not r.answer
        assert udp_ask(a.port, soa_query()).rcode() == dns.rcode.NOERROR
        r = tcp_ask(a.port, soa_query(client_cookie))
        assert r.rcode() == dns.rcode.NOERROR and len(r.answer) == 1
        s = stats(a.socket)
        assert s["rcode"].get("BADCOOKIE") == 2, s
    conf = os.path.join(tmp, "require-nocookies.conf")
    with open(conf, "w") as f:
        f.write("server:\n    cookies: no\n    require-server-cookie: yes\n")
    r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "require-server-cookie: yes needs cookies: yes" in r.stderr


def test_cookie_secret_rotation(tmp):
    """cookie-staging-secret: server cookies made with it are accepted
    too, new ones are made with cookie-secret only, so that an anycast
    group can move to a new secret without a cookie turning invalid."""
    old = "000102030405060708090a0b0c0d0e0f"
    new = "f0e0d0c0b0a090807060504030201000"
    client_cookie = bytes.fromhex("1122334455667788")
    with Instance(tmp, "rotate-old", ["cookie-secret: " + old]) as a:
        old_cookie = cookie_of(udp_ask(a.port, soa_query(client_cookie)))
    with Instance(tmp, "rotate-new", ["cookie-secret: " + new,
                                      "cookie-staging-secret: " + old]) as b:
        r = udp_ask(b.port, soa_query(old_cookie))
        new_cookie = cookie_of(r)
        assert stats(b.socket)["cookie_valid"] == 1
    with Instance(tmp, "rotate-check", ["cookie-secret: " + old]) as c:
        udp_ask(c.port, soa_query(new_cookie))  # made with the new secret: not the old
        s = stats(c.socket)
        assert s["cookie_invalid"] == 1 and s["cookie_valid"] == 0, s


def cookie_flood(port, source, query, count, duration):
    """flood() with query; the answers' rcodes and TC flags: {(rcode, tc): n}."""
    seen = {}

    def tally(data):
        r = dns.message.from_wire(data)
        key = (r.rcode(), bool(r.flags & dns.flags.TC))
        seen[key] = seen.get(key, 0) + 1

    flood(port, source, count, duration, query.to_wire(), tally)
    return seen


def test_rrl_and_cookies(tmp):
    """A valid server cookie proves the client's address: its queries are
    not rate limited.  A client that sends a cookie but is limited gets, as
    its slip, BADCOOKIE with a server cookie to come back with, not TC."""
    settings = ["rrl-responses-per-second: 20", "rrl-slip: 2",
                "cookie-secret: 000102030405060708090a0b0c0d0e0f"]
    with Instance(tmp, "rrl-cookies", settings) as a:
        client_cookie = bytes.fromhex("0123456789abcdef")
        valid = cookie_of(udp_ask(a.port, soa_query(client_cookie), source="127.0.0.6"))
        seen = cookie_flood(a.port, "127.0.0.6", soa_query(valid), 400, 1.0)
        assert seen == {(dns.rcode.NOERROR, False): 400}, seen
        seen = cookie_flood(a.port, "127.0.0.7", soa_query(client_cookie), 400, 1.0)
        slipped = seen.get((BADCOOKIE, False), 0)
        print("rrl with a client cookie: %s" % seen)
        assert (dns.rcode.NOERROR, True) not in seen, seen  # no TC slip
        assert seen.get((dns.rcode.NOERROR, False), 0) <= 10 + 10 + 10, seen
        limited = 400 - seen.get((dns.rcode.NOERROR, False), 0)
        assert abs(slipped - limited / 2) <= 0.1 * limited + 2, seen
        s = stats(a.socket)
        assert s["rrl_slipped"] == slipped and s["cookie_valid"] >= 400, s


# ---------------------------------------------------------------- RRL

def flood(port, source, count, duration, wire=None, on_reply=None):
    """Send count queries (an SOA query, or wire) from source spread over
    duration seconds; each reply goes to on_reply(data), by default
    counted as answered or truncated: returns (answers, truncated)."""
    wire = wire if wire is not None else soa_query().to_wire()
    counts = {"ok": 0, "tc": 0}
    on_reply = on_reply or (lambda data: count_reply(counts, data))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        s.setblocking(False)
        start = time.monotonic()
        for i in range(count):
            due = start + duration * i / count
            while time.monotonic() < due:
                drain(s, on_reply, max(0.0, due - time.monotonic()))
            s.sendto(wire, (client.LOOPBACK, port))
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            drain(s, on_reply, end - time.monotonic())
    return counts["ok"], counts["tc"]


def count_reply(counts, data):
    if data[2] & 0x02:
        counts["tc"] += 1
        assert data[7] == 0 and data[9] == 0 and data[11] == 0, "slipped reply with records"
    else:
        counts["ok"] += 1


def drain(s, on_reply, wait):
    if select.select([s], [], [], wait)[0]:
        try:
            on_reply(s.recv(65535))
        except BlockingIOError:
            pass


def test_rrl_limits_one_prefix_and_slips(tmp):
    """Rate 20/s over 2 workers (10/s per worker table; one client socket
    lands on one worker): 600 queries in 1.5 s from 127.0.0.5 get about
    10 + 1.5 * 10 answers, every second limited one slipped (TC, empty),
    the rest dropped; a query stream from 127.0.1.5 (another /24) at the
    same time is unaffected, as is the whitelisted 127.0.2.0/24."""
    settings = ["rrl-responses-per-second: 20", "rrl-slip: 2", "rrl-whitelist: 127.0.2.0/24"]
    with Instance(tmp, "rrl", settings) as a:
        ok, tc = flood(a.port, "127.0.0.5", 600, 1.5)
        print("rrl: 600 queries from 127.0.0.5 in 1.5 s: %d answered, %d slipped" % (ok, tc))
        assert 10 <= ok <= 10 + 1.5 * 10 + 10, (ok, tc)
        limited = 600 - ok
        assert abs(tc - limited / 2) <= 0.1 * limited, (ok, tc)
        # another prefix, in parallel worth of a normal client: all answered
        other_ok, other_tc = flood(a.port, "127.0.1.5", 15, 1.0)
        assert (other_ok, other_tc) == (15, 0)
        white_ok, white_tc = flood(a.port, "127.0.2.9", 300, 0.5)
        assert (white_ok, white_tc) == (300, 0)
        s = stats(a.socket)
        assert s["rrl_slipped"] == tc, s
        assert s["rrl_dropped"] == limited - tc, s
    with Instance(tmp, "norrl", []) as b:
        ok, tc = flood(b.port, "127.0.0.5", 300, 0.3)
        assert (ok, tc) == (300, 0), "RRL must be off by default"


# ---------------------------------------------------------------- TCP exhaustion

def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect_many(port, sources, per_source):
    conns = []
    for src in sources:
        for _ in range(per_source):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((src, 0))
            s.settimeout(2.0)
            s.connect((client.LOOPBACK, port))
            s.setblocking(False)
            conns.append(s)
    return conns


def closed_by_server(s):
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def timed(fn):
    t0 = time.monotonic()
    r = fn()
    return r, time.monotonic() - t0


def test_tcp_exhaustion(tmp):
    """1000 idle connections and 1000 slowloris connections (a byte every
    0.5 s, never a whole message) from 20 addresses, 100 each (the
    per-client limit), plus 50 over the limit from one of them: the
    50 are closed at once, UDP and a fresh TCP query from 127.0.0.2 are
    answered promptly meanwhile; the slow connections are closed by the
    I/O timeout (2 s) although they keep sending, while the idle ones,
    opened before them, are all still open; those are closed by the idle
    timeout (6 s); the counters say so.  Every check of time is measured
    from when the connections concerned were opened, so a slow machine
    cannot turn an idle connection's age into a failure."""
    idle_timeout, io_timeout = 6, 2
    limit = raise_nofile(2400 + 200)
    if limit < 2300:
        pytest.skip("RLIMIT_NOFILE %d too low for 2000 connections" % limit)
    settings = ["tcp-max-connections: 3000", "tcp-max-connections-per-client: 100",
                "tcp-idle-timeout: %d" % idle_timeout, "tcp-io-timeout: %d" % io_timeout]
    with Instance(tmp, "tcp", settings) as a:
        # the idle connections' timers start at the earliest when the first is opened
        t_idle = time.monotonic()
        idle = connect_many(a.port, ["127.0.0.%d" % i for i in range(10, 20)], 100)
        slow = connect_many(a.port, ["127.0.0.%d" % i for i in range(20, 30)], 100)
        extra = connect_many(a.port, ["127.0.0.10"], 50)
        try:
            t_start = time.monotonic()
            for s in slow:
                s.send(b"\x01")  # first byte of a 256-byte length prefix
            # the 50 over the per-client limit are closed at once
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and not all(closed_by_server(s) for s in extra):
                time.sleep(0.05)
            assert all(closed_by_server(s) for s in extra)
            # UDP and a fresh TCP query from another address stay prompt
            r, t_udp = timed(lambda: udp_ask(a.port, soa_query()))
            assert r.rcode() == dns.rcode.NOERROR and t_udp < 0.5, t_udp
            r, t_tcp = timed(lambda: tcp_ask(a.port, soa_query(), source="127.0.0.2"))
            assert r.rcode() == dns.rcode.NOERROR and t_tcp < 0.5, t_tcp
            # slowloris: keep dribbling a byte every 0.5 s until the I/O
            # timeout has closed them all (it is at t_start + io_timeout)
            deadline = t_start + io_timeout + 3
            while time.monotonic() < deadline and not all(closed_by_server(s) for s in slow):
                time.sleep(0.5)
                for s in slow:
                    try:
                        s.send(b"\x00")
                    except OSError:
                        pass
                r, t_udp = timed(lambda: udp_ask(a.port, soa_query()))
                assert t_udp < 0.5, t_udp
            t_slow_closed = time.monotonic()
            closed_slow = sum(closed_by_server(s) for s in slow)
            open_idle = sum(not closed_by_server(s) for s in idle)
            assert closed_slow == 1000, closed_slow
            # their first byte went at t_start (0.2 s for the server's coarse clock)
            assert t_slow_closed >= t_start + io_timeout - 0.2, \
                "slow connections closed %.1f s after their first byte" % (t_slow_closed - t_start)
            # the idle ones were opened before the slow ones: all still open
            # (checked after the slow ones went, still short of their timeout)
            assert t_slow_closed < t_idle + idle_timeout, \
                "machine too slow: %.1f s after the idle connections" % (t_slow_closed - t_idle)
            assert open_idle == 1000, "idle connections closed before tcp-idle-timeout"
            # the idle ones go at idle_timeout
            deadline = time.monotonic() + idle_timeout + 3
            while time.monotonic() < deadline and not all(closed_by_server(s) for s in idle):
                time.sleep(0.2)
            assert all(closed_by_server(s) for s in idle)
            r, t_tcp = timed(lambda: tcp_ask(a.port, soa_query(), source="127.0.0.10"))
            assert r.rcode() == dns.rcode.NOERROR and t_tcp < 0.5
            s = stats(a.socket)
            print("tcp: udp %.3f s, fresh tcp %.3f s; stats %s" % (t_udp, t_tcp, {
                k: s[k] for k in ("tcp_connections", "tcp_rejected_per_client",
                                  "tcp_io_timeouts", "tcp_timeouts")}))
            assert s["tcp_rejected_per_client"] == 50, s
            assert s["tcp_io_timeouts"] == 1000, s
            assert s["tcp_timeouts"] == 1000, s
            assert s["tcp_rejected"] == 0, s
        finally:
            for s in idle + slow + extra:
                s.close()


# A sanitizer build's allocator keeps freed memory (ASan's quarantine) and
# pads every block, so resident size says nothing there: contrib/test-all.sh
# sets APEX_RELOAD_SKIP_RSS for it, and the memory bounds are not checked
# (the rest of each test is).
RSS_MEANINGFUL = not os.environ.get("APEX_RELOAD_SKIP_RSS")


def vm_rss(pid):
    """The resident size of process pid in bytes (VmRSS)."""
    return int(proc_status(pid)["VmRSS"][0]) * 1024


def wait_accepted(sock, count, timeout=30):
    """Wait until apexd has accepted count TCP connections in all (its
    tcp_connections counter): a client's connect() returns before that."""
    deadline = time.monotonic() + timeout
    while True:
        s = stats(sock)
        if s["tcp_connections"] >= count or time.monotonic() > deadline:
            return s["tcp_connections"]
        time.sleep(0.2)


IDLE_CONNECTIONS = 2000
IDLE_TCP_BYTES = 4096  # resident bytes apexd may spend on an idle TCP connection
BIG = "big.test."


def big_zone(d):
    """A zone whose txt.big.test. TXT answer is about 4 KiB (16 records of
    240 bytes): answers that fill a few pages of a connection's buffers."""
    path = os.path.join(d, "big.test.zone")
    with open(path, "w") as f:
        f.write("$ORIGIN %s\n$TTL 300\n@ SOA ns hostmaster 1 3600 600 86400 300\n"
                "@ NS ns\nns A 192.0.2.1\n" % BIG)
        for i in range(16):
            f.write('txt TXT "%02d%s"\n' % (i, "x" * 238))
    return path


def big_queries(first_id, count):
    """count queries for txt.big.test. TXT in wire form, IDs from first_id."""
    wires = []
    for k in range(count):
        m = dns.message.make_query("txt." + BIG, "TXT")
        m.id = (first_id + k) & 0xFFFF
        wires.append(m.to_wire())
    return wires


def check_big_answer(wire, query):
    r = dns.message.from_wire(wire)
    assert wire[:2] == query[:2] and r.rcode() == dns.rcode.NOERROR, r
    assert len(r.answer) == 1 and len(r.answer[0]) == 16, r


def test_idle_tcp_connections_memory(tmp):
    """2000 idle TCP connections cost apexd less than 4 KiB of resident
    memory each (the connection's libuv handles and its state: its input
    and output buffers come from the worker's pool only while a message is
    under way).  Then two pipelined queries on every one of them, with
    answers of 4 KiB, are all answered, a UDP query in the middle is
    answered, and with every query answered the connections, still open,
    still cost less than the bound: the buffers went back to the pool."""
    n = IDLE_CONNECTIONS
    limit = raise_nofile(n + 200)
    if limit < n + 100:
        pytest.skip("RLIMIT_NOFILE %d too low for %d connections" % (limit, n))
    settings = ["tcp-max-connections: %d" % (n + 100), "tcp-max-connections-per-client: 0",
                "tcp-idle-timeout: 120"]
    d = os.path.join(tmp, "idle-memory")
    os.makedirs(d)
    zones = EXAMPLE + [(BIG, big_zone(d))]
    with Instance(tmp, "idle-memory", settings, zones=zones) as a:
        pid = a.server.proc.pid
        # the workers' first connections and answers (loops, pools, allocator) set up
        for i in range(20):
            r = tcp_ask(a.port, soa_query(), source="127.0.0.%d" % (10 + i % 4))
            assert r.rcode() == dns.rcode.NOERROR
        warm = wait_accepted(a.socket, 20)
        before = vm_rss(pid)
        conns = connect_many(a.port, ["127.0.0.%d" % i for i in range(10, 14)], n // 4)
        try:
            assert wait_accepted(a.socket, warm + n) >= warm + n, "not all accepted"
            time.sleep(0.5)
            idle = vm_rss(pid)
            per_conn = (idle - before) / n
            print("idle tcp: %d connections, %.0f bytes each (VmRSS %d -> %d)"
                  % (n, per_conn, before, idle))
            assert per_conn < IDLE_TCP_BYTES or not RSS_MEANINGFUL, \
                "%.0f bytes of VmRSS per idle TCP connection (at most %d)" % (
                    per_conn, IDLE_TCP_BYTES)

            queries = []
            for i, s in enumerate(conns):
                wires = big_queries(2 * i, 2)
                queries.append(wires)
                s.setblocking(True)
                s.settimeout(10)
                s.sendall(b"".join(struct.pack("!H", len(w)) + w for w in wires))
                if i == n // 2:
                    r, t_udp = timed(lambda: udp_ask(a.port, soa_query()))
                    assert r.rcode() == dns.rcode.NOERROR and r.answer, r
            for s, wires in zip(conns, queries):
                for w in wires:
                    (size,) = struct.unpack("!H", client.recv_exact(s, 2))
                    check_big_answer(client.recv_exact(s, size), w)
            time.sleep(0.5)
            answered = vm_rss(pid)
            per_conn = (answered - before) / n
            print("after %d queries: %.0f bytes each (VmRSS %d); udp %.3f s"
                  % (2 * n, per_conn, answered, t_udp))
            assert per_conn < IDLE_TCP_BYTES or not RSS_MEANINGFUL, \
                "%.0f bytes of VmRSS per TCP connection once answered" % per_conn
            for s in conns:
                s.setblocking(False)
            assert not any(closed_by_server(s) for s in conns), "connections closed"
            s = stats(a.socket)
            assert s["tcp_rejected"] == 0 and s["tcp_timeouts"] == 0, s
        finally:
            for s in conns:
                s.close()


# ---------------------------------------------------------------- privileges

def proc_status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return fields


def free_loopback_53():
    """A loopback address whose port 53 is free (UDP and TCP), or None."""
    for addr in ("127.83.0.53", "127.83.1.53", "127.84.0.53"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u, \
                    socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t:
                u.bind((addr, 53))
                t.bind((addr, 53))
            return addr
        except OSError:
            continue
    return None


@pytest.mark.skipif(os.geteuid() != 0, reason="the privilege drop needs root")
def test_privilege_drop(tmp):
    """Started as root with user nobody, bound to port 53 on a loopback
    address as well: afterwards every uid is nobody's and no capability is
    left (CapEff, CapPrm, CapBnd 0, NoNewPrivs 1); it answers, and
    `apexctl reload` (as root, over the socket apexd created and chowned)
    reads the changed zone file as nobody."""
    nobody = pwd.getpwnam("nobody")
    d = os.path.join(tmp, "privs-zones")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o755)
    zonefile = os.path.join(d, "example.zone")
    shutil.copy(zone("example.zone"), zonefile)
    os.chmod(zonefile, 0o644)
    addr53 = free_loopback_53()
    args = ["-u", "nobody"] + (["-l", "%s@53" % addr53] if addr53 else [])
    inst = Instance(tmp, "privs", [], zones=[("example.", zonefile)], args=args)
    with inst as a:
        pid = a.server.proc.pid
        st = proc_status(pid)
        print("privs: port 53 on %s; Uid %s CapEff %s" % (addr53, st["Uid"], st["CapEff"]))
        assert [int(x) for x in st["Uid"]] == [nobody.pw_uid] * 4, st["Uid"]
        assert all(int(x) != 0 for x in st["Gid"]), st["Gid"]
        assert st["CapEff"] == ["0000000000000000"], st["CapEff"]
        assert st["CapPrm"] == ["0000000000000000"], st["CapPrm"]
        assert st["CapBnd"] == ["0000000000000000"], st["CapBnd"]
        assert st["NoNewPrivs"] == ["1"], st["NoNewPrivs"]
        # every thread, not only the main one
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                text = f.read()
            assert "CapEff:\t0000000000000000" in text and "Uid:\t%d" % nobody.pw_uid in text

        r = udp_ask(a.port, soa_query())
        serial = r.answer[0][0].serial
        if addr53:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(2)
                s.sendto(soa_query().to_wire(), (addr53, 53))
                assert dns.message.from_wire(s.recv(65535)).answer[0][0].serial == serial
        with open(zonefile) as f:
            text = f.read()
        assert str(serial) in text
        with open(zonefile, "w") as f:
            f.write(text.replace(str(serial), str(serial + 1), 1))
        r = apexctl(a.socket, "reload")
        assert r.returncode == 0, r.stdout + r.stderr
        assert udp_ask(a.port, soa_query()).answer[0][0].serial == serial + 1
        assert stats(a.socket)["queries"] >= 2


@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_chroot(tmp, monkeypatch):
    """chroot: with user nobody: the process's root is the directory, the
    zone file (given by its path outside) is reloaded from inside, and a
    reconfig reads the config file (inside too) and sees the same zone
    file (no spurious change)."""
    # In a sanitizer build, LeakSanitizer reads /proc at exit, which does
    # not exist inside the chroot: leak checking is off for this process
    # alone (every other test runs apexd with it on).
    asan = os.environ.get("ASAN_OPTIONS")
    monkeypatch.setenv("ASAN_OPTIONS", (asan + ":" if asan else "") + "detect_leaks=0")
    root = os.path.join(tmp, "chrooted")  # the Instance's directory: its config is inside
    os.makedirs(os.path.join(root, "zones"), exist_ok=True)
    os.chmod(root, 0o755)
    os.chmod(os.path.join(root, "zones"), 0o755)
    zonefile = os.path.join(root, "zones", "example.zone")
    shutil.copy(zone("example.zone"), zonefile)
    os.chmod(zonefile, 0o644)
    with Instance(tmp, "chrooted", ["user: nobody", "chroot: %s" % root],
                  zones=[("example.", zonefile)]) as a:
        pid = a.server.proc.pid
        assert os.readlink("/proc/%d/root" % pid) == root
        assert proc_status(pid)["CapEff"] == ["0000000000000000"]
        serial = udp_ask(a.port, soa_query()).answer[0][0].serial
        with open(zonefile) as f:
            text = f.read()
        with open(zonefile, "w") as f:
            f.write(text.replace(str(serial), str(serial + 1), 1))
        r = apexctl(a.socket, "reload")
        assert r.returncode == 0, r.stdout + r.stderr
        assert udp_ask(a.port, soa_query()).answer[0][0].serial == serial + 1
        r = apexctl(a.socket, "reconfig")
        assert r.returncode == 0 and "new file: 0" in r.stdout, r.stdout + r.stderr
