# SPDX-License-Identifier: BSD-3-Clause
"""The statistics monitoring systems read: the Prometheus endpoint
(metrics: in apex.conf(5)) and RSSAC002's measurements in `apexctl stats`.

apexd serves two zones; the test sends a known set of queries (UDP and
TCP, IPv4 and IPv6 when the machine has ::1, with and without EDNS and
DO, for each zone and for a name in no zone), then scrapes /metrics:
every family has HELP and TYPE and `promtool check metrics` passes, and
each counter moved by exactly what was sent: queries and responses by
transport and family, the size histograms (RSSAC002's 16-byte buckets),
rcodes, EDNS and DO, queries per zone.  `apexctl stats --json` reports
the same numbers under RSSAC002's names.  Bad HTTP (unknown paths and
methods, garbage, an oversized head, too many connections, a client that
sends nothing) gets its HTTP error and costs apexd nothing: it answers
DNS and scrapes throughout.  A bad metrics: value is refused with FILE:LINE,
and a port already taken stops apexd with the address.
"""

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request

import dns.edns
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype
import pytest

import servers

T = dns.rdatatype
ZONES = {"metrics.test.": 2026010101, "second.test.": 7}


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


IPV6 = has_ipv6_loopback()


def zone_file(tmp, origin, serial):
    path = os.path.join(tmp, origin + "zone")
    with open(path, "w") as f:
        f.write("$ORIGIN %s\n$TTL 3600\n@ IN SOA ns1 hostmaster %d 3600 900 604800 300\n"
                "@ IN NS ns1\nns1 IN A 192.0.2.1\nwww IN A 192.0.2.2\n"
                'txt IN TXT "%s"\n' % (origin, serial, "x" * 200))
    return path


class MetricsApexd(servers.Server):
    """apexd with a metrics: endpoint and a control socket."""

    kind = "apexd-metrics"

    def __init__(self, workdir, zones, metrics_line=None):
        super().__init__(workdir, zones)
        self.metrics_port = servers.free_port()
        self.metrics_line = metrics_line or "    metrics: 127.0.0.1@%d" % self.metrics_port
        self.socket = os.path.join(workdir, "ctl.sock")
        self.conf = os.path.join(workdir, "apex.conf")

    def command(self):
        lines = ["server:", "    listen: 127.0.0.1@%d" % self.port, "    workers: 2",
                 self.metrics_line, '    control-socket: "%s"' % self.socket]
        if IPV6:
            lines.append("    listen: ::1@%d" % self.port)
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % path]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [servers.apexd_path(), "-f", "-c", self.conf]

    def url(self, path="/metrics"):
        return "http://127.0.0.1:%d%s" % (self.metrics_port, path)


@pytest.fixture(scope="module")
def apex(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("metrics"))
    zones = [(o, zone_file(tmp, o, s)) for o, s in ZONES.items()]
    server = MetricsApexd(os.path.join(tmp, "apexd"), zones).start()
    yield server
    assert server.stop() == 0, server.log_tail()
    # the counters' line at shutdown, the TLS ones at its end (no TLS listener)
    with open(server.logpath) as f:
        log = f.read()
    assert ("; tls queries=0 handshakes=0 resumed=0 failed-protocol=0 failed-certificate=0 "
            "failed-timeout=0\n") in log, server.log_tail()


def scrape(apex):
    with urllib.request.urlopen(apex.url(), timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
        return r.read().decode()


def samples(text):
    """{(name, frozenset of label pairs): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        metric, value = line.rsplit(" ", 1)
        labels = frozenset()
        if "{" in metric:
            name, rest = metric.split("{", 1)
            pairs = []
            for item in rest.rstrip("}").split('",'):
                k, v = item.split("=", 1)
                pairs.append((k, v.strip('"')))
            labels = frozenset(pairs)
        else:
            name = metric
        out[(name, labels)] = float(value)
    return out


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())), 0.0)


def apexctl(apex, *args):
    r = subprocess.run([os.path.join(os.path.dirname(servers.apexd_path()), "apexctl"), "-s",
                        apex.socket] + list(args), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


# The queries sent, and what each adds up to.
def send_queries(apex):
    """Send the queries; returns what they must add to the counters."""
    sent = {"udp4": 0, "tcp4": 0, "udp6": 0, "tcp6": 0, "edns": 0, "do": 0,
            "metrics.test.": 0, "second.test.": 0, "refused": 0,
            "request_sizes": [], "response_sizes": {"udp": [], "tcp": []}}

    def ask(name, rdtype, host="127.0.0.1", tcp=False, edns=-1, do=False):
        q = dns.message.make_query(name, rdtype, use_edns=edns, want_dnssec=do)
        wire = q.to_wire()
        query = dns.query.tcp if tcp else dns.query.udp
        r = query(q, host, port=apex.port, timeout=5)
        transport = "tcp" if tcp else "udp"
        sent[transport + ("6" if ":" in host else "4")] += 1
        sent["request_sizes"].append((transport, len(wire)))
        sent["response_sizes"][transport].append(len(r.to_wire()))
        if edns >= 0:
            sent["edns"] += 1
            sent["do"] += do
        zone = next((z for z in ZONES if name.endswith(z)), None)
        if zone is None:
            assert r.rcode() == dns.rcode.REFUSED
            sent["refused"] += 1
        else:
            sent[zone] += 1
        return r

    for i in range(7):
        ask("www.metrics.test.", T.A)
    for i in range(3):
        ask("txt.metrics.test.", T.TXT, edns=0, do=True)
    ask("www.second.test.", T.A, edns=0)
    ask("www.second.test.", T.A, tcp=True)
    ask("www.nowhere.example.", T.A)
    if IPV6:
        ask("www.metrics.test.", T.AAAA, host="::1")
        ask("txt.second.test.", T.TXT, host="::1", tcp=True, edns=0)
    return sent


def test_prometheus_counts_what_was_sent(apex):
    before = samples(scrape(apex))
    sent = send_queries(apex)
    text = scrape(apex)
    after = samples(text)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    for key, transport, family in (("udp4", "udp", "ipv4"), ("tcp4", "tcp", "ipv4"),
                                   ("udp6", "udp", "ipv6"), ("tcp6", "tcp", "ipv6")):
        assert delta("apex_queries_total", transport=transport, family=family) == sent[key], key
        assert delta("apex_responses_total", transport=transport, family=family) == sent[key]
    for transport in ("udp", "tcp"):
        sizes = [n for t, n in sent["request_sizes"] if t == transport]
        assert delta("apex_request_size_bytes_count", transport=transport) == len(sizes)
        assert delta("apex_request_size_bytes_sum", transport=transport) == sum(sizes)
        replies = sent["response_sizes"][transport]
        assert delta("apex_response_size_bytes_sum", transport=transport) == sum(replies)
        # cumulative buckets: each size counted from its 16-byte bucket upwards
        for le in (15, 31, 47, 63, 95, 127, 255, 287):
            assert delta("apex_request_size_bytes_bucket", transport=transport,
                         le=str(le)) == sum(1 for n in sizes if n <= le), (transport, le)
        for le in (63, 127, 255, 511, 4095):
            assert delta("apex_response_size_bytes_bucket", transport=transport,
                         le=str(le)) == sum(1 for n in replies if n <= le), (transport, le)
        assert delta("apex_response_size_bytes_bucket", transport=transport,
                     le="+Inf") == len(replies)
    assert delta("apex_edns_queries_total") == sent["edns"]
    assert delta("apex_dnssec_ok_queries_total") == sent["do"]
    assert delta("apex_responses_by_rcode_total", rcode="REFUSED") == sent["refused"]
    for zone in ZONES:
        assert delta("apex_zone_queries_total", zone=zone) == sent[zone], zone
        assert value(after, "apex_zone_serial", zone=zone) == ZONES[zone]
        assert value(after, "apex_zone_expired", zone=zone) == 0
        assert value(after, "apex_zone_records", zone=zone) == 5
        assert value(after, "apex_zone_memory_bytes", zone=zone) > 0
        assert abs(value(after, "apex_zone_loaded_timestamp_seconds", zone=zone)
                   - time.time()) < 600
    assert value(after, "apex_zones_served") == 2
    # no TLS listener: the TLS counters are there, at 0
    for name, labels in (("apex_tls_queries_total", {}), ("apex_tls_handshakes_total", {}),
                         ("apex_tls_resumed_handshakes_total", {}),
                         ("apex_tls_handshake_failures_total", {"reason": "protocol"}),
                         ("apex_tls_handshake_failures_total", {"reason": "certificate"}),
                         ("apex_tls_handshake_failures_total", {"reason": "timeout"})):
        assert after.get((name, frozenset(labels.items()))) == 0, (name, labels)
    assert value(after, "apex_workers") == 2
    total = sum(sent[k] for k in ("udp4", "tcp4", "udp6", "tcp6"))
    assert sum(value(after, "apex_worker_queries_total", worker=str(w)) -
               value(before, "apex_worker_queries_total", worker=str(w)) for w in (0, 1)) == total

    # every family has HELP and TYPE
    families = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
    helps = {line.split()[2] for line in text.splitlines() if line.startswith("# HELP ")}
    assert families == helps
    for name, _ in after:
        base = name
        for suffix in ("_bucket", "_sum", "_count"):
            if name.endswith(suffix) and name[:-len(suffix)] in families:
                base = name[:-len(suffix)]
        assert base in families, name


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="promtool is not installed (Debian package prometheus)")
def test_promtool_check_metrics(apex):
    send_queries(apex)
    r = subprocess.run(["promtool", "check", "metrics"], input=scrape(apex),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_apexctl_stats_rssac002(apex):
    send_queries(apex)
    st = json.loads(apexctl(apex, "stats", "--json"))
    prom = samples(scrape(apex))
    st2 = json.loads(apexctl(apex, "stats", "--json"))
    # nothing was sent between the two reads of apexctl: the same numbers
    # as the scrape between them
    assert st["rssac002"] == st2["rssac002"]
    vol = st["rssac002"]["traffic-volume"]
    for transport in ("udp", "tcp"):
        for family in ("ipv4", "ipv6"):
            assert vol["dns-%s-queries-received-%s" % (transport, family)] == value(
                prom, "apex_queries_total", transport=transport, family=family)
            assert vol["dns-%s-responses-sent-%s" % (transport, family)] == value(
                prom, "apex_responses_total", transport=transport, family=family)
        sizes = st["rssac002"]["traffic-sizes"]["%s-request-sizes" % transport]
        assert sum(sizes.values()) == value(prom, "apex_request_size_bytes_count",
                                            transport=transport)
        for bucket in sizes:
            low, high = bucket.split("-")
            assert int(low) % 16 == 0 and (high == "" or int(high) == int(low) + 15), bucket
    assert st["rssac002"]["rcode-volume"]["5"] == value(prom, "apex_responses_by_rcode_total",
                                                        rcode="REFUSED")
    for zone in ZONES:
        assert st["zones"][zone] == value(prom, "apex_zone_queries_total", zone=zone)
    assert st["total"]["edns"] == value(prom, "apex_edns_queries_total")
    # no TLS listener: zeros, in the total and each worker, and in text
    no_tls = {"queries": 0, "handshakes": 0, "resumed": 0,
              "failed": {"protocol": 0, "certificate": 0, "timeout": 0}}
    assert st["total"]["tls"] == no_tls
    assert [w["tls"] for w in st["workers"]] == [no_tls] * len(st["workers"])
    assert list(st["total"])[-1] == "tls"  # appended: the members before it unchanged
    text = apexctl(apex, "stats")
    assert text.count("\n  tls: queries 0, handshakes 0 (resumed 0), failed protocol=0 "
                      "certificate=0 timeout=0\n") == 1 + len(st["workers"])
    assert "dns-udp-queries-received-ipv4: %d" % vol["dns-udp-queries-received-ipv4"] in text
    assert "udp-request-sizes:" in text and "queries by zone: " in text


def http_exchange(port, data, timeout=15):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as c:
        c.sendall(data)
        chunks = []
        while True:
            try:
                chunk = c.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def test_http_errors(apex):
    port = apex.metrics_port
    cases = [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"HTTP/1.1 404 "),
        (b"GET /metricsx HTTP/1.1\r\n\r\n", b"HTTP/1.1 404 "),
        (b"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", b"HTTP/1.1 405 "),
        (b"\x00\xff garbage\r\n\r\n", b"HTTP/1.1 400 "),
        (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", b"HTTP/1.1 400 "),
        (b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 9000, b"HTTP/1.1 431 "),
    ]
    for request, status in cases:
        reply = http_exchange(port, request)
        assert reply.startswith(status), (request[:40], reply[:200])
        assert b"Connection: close\r\n" in reply
    reply = http_exchange(port, b"POST /metrics HTTP/1.1\r\n\r\n")
    assert b"\r\nAllow: GET, HEAD\r\n" in reply
    # HEAD: the headers of the GET, no body
    reply = http_exchange(port, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK") and body == b""
    length = int([h for h in head.split(b"\r\n") if h.startswith(b"Content-Length:")][0].split()[1])
    assert length > 1000
    assert servers.answers_soa(apex.port, "metrics.test.")


def test_idle_and_too_many_clients(apex):
    """Clients that connect and send nothing hold a connection each until
    the read timeout; past the connection limit the next gets 503 at once,
    and DNS and a scrape after they are gone work throughout."""
    idle = []
    try:
        for _ in range(16):
            idle.append(socket.create_connection(("127.0.0.1", apex.metrics_port), timeout=5))
        time.sleep(0.2)
        reply = http_exchange(apex.metrics_port, b"GET /metrics HTTP/1.1\r\n\r\n")
        assert reply.startswith(b"HTTP/1.1 503 "), reply[:200]
        assert servers.answers_soa(apex.port, "metrics.test.")
    finally:
        for c in idle:
            c.close()
    deadline = time.monotonic() + 10
    while True:
        try:
            scrape(apex)
            break
        except urllib.error.HTTPError as e:
            assert e.code == 503 and time.monotonic() < deadline
            time.sleep(0.1)
    assert apex.alive()


def test_bad_metrics_values(tmp_path):
    tmp = str(tmp_path)
    zone = zone_file(tmp, "metrics.test.", 1)
    for bad in ("127.0.0.1@0", "127.0.0.1@65536", "localhost@9100", "@9100", "::1@x"):
        conf = os.path.join(tmp, "apex.conf")
        with open(conf, "w") as f:
            f.write('server:\n    metrics: "%s"\nzone:\n    name: metrics.test.\n'
                    '    file: "%s"\n' % (bad, zone))
        r = subprocess.run([servers.apexd_path(), "-t", "-c", conf], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 1 and "%s:2:" % conf in r.stderr and "metrics" in r.stderr, (
            bad, r.stderr)


def test_metrics_port_taken(tmp_path):
    tmp = str(tmp_path)
    zone = zone_file(tmp, "metrics.test.", 1)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        server = MetricsApexd(os.path.join(tmp, "apexd"), [("metrics.test.", zone)],
                              metrics_line="    metrics: 127.0.0.1@%d" % port)
        with pytest.raises(RuntimeError) as failure:
            server.start()
        assert "metrics 127.0.0.1@%d: address already in use" % port in str(failure.value).lower(), (
            str(failure.value))
