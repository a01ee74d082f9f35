#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""DNS over TLS and zone transfers over TLS: apexd side by side with BIND
9.18 (XoT) and NSD 4.6 (DoT).

  contrib/bench/tls.py [--only xot-out,xot-in,dot,handshakes,memory,udp]
                       [--zones nu.nsec3[,root]] [--repeat 3] [--seconds 10]
                       [--dot-rates max,40000] [--connections 10000]
                       [--queries 10000] [--key ec|rsa] [--bound 600]

Certificates (a CA, the servers' "server.bench" with 127.0.0.1, and a
client's "client.bench"; ECDSA P-256, or RSA 2048 with --key rsa) are
made once with the openssl command in the scratch directory.  Servers are
pinned to BENCH_SERVER_CPU, this script (the clients) and the programs it
runs as clients to BENCH_CLIENT_CPU.  Only loopback; every process is
stopped by its PID; every loop is bounded in time and in count.  The
parts (--only):

  xot-out     Outgoing AXFR of --zones (the 1M-record nu.nsec3 by default):
              axfr_out.py's reader (it only takes the messages off the
              socket, over TCP or TLS with ALPN "dot") asks for the zone
              --repeat times from: apexd over TCP; apexd over its tls-port
              (tls-auth-xfr-only off, provide-xfr without a tls-auth name);
              a second apexd over its tls-auth-port (a client certificate,
              provide-xfr naming a tls-auth whose auth-domain-name the
              certificate carries: RFC 9103's mutual TLS); BIND over TLS
              (listen-on port P tls NAME, allow-transfer port P transport
              tls { any; }); BIND over TCP.  Per transfer: the wall time
              from connect to the closing SOA (median) and the server's
              CPU time, user + system of all its threads (the mean: /proc
              counts 10 ms ticks).  Targets: apexd over TLS <= 1.2x apexd
              over TCP, and below BIND over TLS.
  xot-in      apexd as a secondary of BIND (BIND pinned to the client CPU)
              for the same zones, with no copy of its own: the time from
              apexd's start to its answering the zone's SOA with BIND's
              serial, request-xfr over TLS (a tls-auth naming BIND's
              certificate, verified against the CA) or over TCP, taking
              turns; the transfer's time from apexd's log; apexd's CPU
              time until then.  Target: TLS <= 1.2x TCP.
  dot         The root zone and the root query mix of side-by-side.py;
              dnsperf, 10 connections kept open, 100 queries outstanding,
              -m dot and -m tcp, --seconds a run, against apexd (workers:
              1) and NSD (tls-port), --repeat rounds in rotating order, as
              fast as it goes and at each rate of --dot-rates: the server's
              CPU time per answered query.  Targets: apexd DoT <= 1.5x
              apexd TCP, below NSD's DoT.
  handshakes  One connection at a time on the DoT port for --seconds:
              openssl s_time -new, -reuse (its "r" marks say whether a
              connection resumed; with TLS 1.3 s_time never reads the
              tickets that follow the handshake, so it does not), and
              -reuse with TLS 1.2; a Python loop of TLS 1.3 handshakes,
              full or resumed with a ticket, without and with one SOA query
              on each connection (then the first answer's latency too).
              Connections a second and the server's CPU per connection.
  memory      --connections idle DoT connections, handshakes done, opened
              in batches of 500 and held: the server's resident memory
              (VmRSS, summed over its processes) before and with them all
              open, per connection.  apexd with tcp-max-connections: 20000,
              NSD with tcp-count: 20000, both with a 600 s idle time-out;
              the descriptor limit raised to the hard one.  A sample of 20
              connections is asked a query at the end: still open.
  udp         User-space instructions per UDP query under callgrind
              (instructions.py's method: the first --queries queries of the
              root mix, DO=0) of apexd with and without a DoT listener
              configured: the figure should not move.

Build first (make); see contrib/bench/benchlib.py for the environment.
"""

import argparse
import os
import re
import resource
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import axfr_out  # noqa: E402
import benchlib as B  # noqa: E402
import instructions  # noqa: E402

PARTS = ["xot-out", "xot-in", "dot", "handshakes", "memory", "udp"]
SERVER_NAME = "server.bench"  # in the servers' certificate
CLIENT_NAME = "client.bench"  # in the client's certificate
LOOP_MAX = 200000  # the most iterations of any timed loop
MAX_CONNECTIONS = 20000  # the servers' connection limit in the memory part
DNSPERF_CONNECTIONS = 10  # NSD stalls on one connection with 100 queries outstanding


def parse_cpus(text):
    cpus = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


# ------------------------------------------------------------ certificates

class Certs:
    """A CA, the servers' certificate and a client certificate, made once
    in dir with openssl."""

    def __init__(self, tmp, key_type):
        self.dir = os.path.join(tmp, "certs-%s" % key_type)
        os.makedirs(self.dir, exist_ok=True)
        self.key_type = key_type
        p = lambda n: os.path.join(self.dir, n)  # noqa: E731
        self.ca, self.ca_key = p("ca.pem"), p("ca.key")
        self.server, self.server_key = p("server.pem"), p("server.key")
        self.client, self.client_key = p("client.pem"), p("client.key")
        if not all(os.path.exists(f) for f in (self.ca, self.server, self.client)):
            self.make()

    def newkey(self):
        if self.key_type == "rsa":
            return ["-newkey", "rsa:2048"]
        return ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]

    def openssl(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, timeout=60, cwd=self.dir,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def make(self):
        B.log("making %s certificates in %s" % (self.key_type, self.dir))
        self.openssl("req", "-x509", *self.newkey(), "-nodes", "-days", "30",
                     "-keyout", self.ca_key, "-out", self.ca, "-subj", "/CN=apex bench CA",
                     "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        usage = "digitalSignature" + (",keyEncipherment" if self.key_type == "rsa" else "")
        for cert, key, name, eku, san in (
                (self.server, self.server_key, SERVER_NAME, "serverAuth",
                 "DNS:%s,IP:127.0.0.1" % SERVER_NAME),
                (self.client, self.client_key, CLIENT_NAME, "clientAuth",
                 "DNS:%s" % CLIENT_NAME)):
            csr, ext = cert + ".csr", cert + ".ext"
            self.openssl("req", *self.newkey(), "-nodes", "-keyout", key, "-out", csr,
                         "-subj", "/CN=%s" % name)
            with open(ext, "w") as f:
                f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,%s\n"
                        "extendedKeyUsage=%s\nsubjectAltName=%s\n" % (usage, eku, san))
            self.openssl("x509", "-req", "-in", csr, "-CA", self.ca, "-CAkey", self.ca_key,
                         "-CAcreateserial", "-days", "30", "-out", cert, "-extfile", ext)
        for key in (self.ca_key, self.server_key, self.client_key):
            os.chmod(key, 0o600)

    def client_context(self, with_cert=False):
        """A client context: TLS 1.2 or later, the server verified against
        the CA, ALPN "dot" (RFC 7858, RFC 9103)."""
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_verify_locations(self.ca)
        ctx.set_alpn_protocols(["dot"])
        if with_cert:
            ctx.load_cert_chain(self.client, self.client_key)
        return ctx


# ----------------------------------------------------------------- servers

def distinct_ports(count):
    ports = []
    while len(ports) < count:
        p = B.free_port()
        if p not in ports:
            ports.append(p)
    return ports


class TlsApexd(B.Server):
    """apexd with one worker, a plain listener (self.port), a DoT one
    (self.dot_port, tls-port) and a client-certificate one (self.auth_port,
    tls-auth-port).  provide: the provide-xfr entry (None: none); primary:
    (port, tls) to be a secondary of 127.0.0.1@port, over TLS or not;
    many: room for MAX_CONNECTIONS idle connections."""

    def __init__(self, workdir, zones, certs, name="apexd", provide=None, primary=None,
                 many=False):
        self.name = name
        super().__init__(workdir, zones)
        self.certs = certs
        self.provide = provide
        self.primary = primary
        self.many = many

    def pick_port(self):
        self.port, self.dot_port, self.auth_port = distinct_ports(3)
        return self.port

    def command(self):
        c = self.certs
        lines = ["server:"] + ["    listen: %s@%d" % (B.LOOPBACK, p)
                               for p in (self.port, self.dot_port, self.auth_port)]
        lines += ["    workers: 1", "    control-socket: none", "    journal-size: 0"]
        if self.many:
            lines += ["    tcp-max-connections: %d" % MAX_CONNECTIONS,
                      "    tcp-max-connections-per-client: 0", "    tcp-idle-timeout: 600"]
        lines += ['    tls-service-key: "%s"' % c.server_key,
                  '    tls-service-pem: "%s"' % c.server,
                  "    tls-port: %d" % self.dot_port, "    tls-auth-port: %d" % self.auth_port,
                  "    tls-auth-xfr-only: no", '    tls-cert-bundle: "%s"' % c.ca,
                  "tls-auth:", "    name: bench-client",
                  "    auth-domain-name: %s" % CLIENT_NAME,
                  "tls-auth:", "    name: bench-primary",
                  "    auth-domain-name: %s" % SERVER_NAME]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin, '    file: "%s"' % os.path.abspath(path)]
            if self.provide:
                lines.append("    provide-xfr: %s" % self.provide)
            if self.primary:
                port, tls = self.primary
                lines.append("    request-xfr: %s@%d NOKEY%s" % (
                    B.LOOPBACK, port, " bench-primary" if tls else ""))
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]


class TlsNsd(B.Nsd):
    """NSD (one server process) with a DoT listener on self.dot_port;
    many: room for MAX_CONNECTIONS idle connections."""

    def __init__(self, workdir, zones, certs, many=False):
        super().__init__(workdir, zones)
        self.certs = certs
        self.many = many

    def pick_port(self):
        self.port, self.dot_port = distinct_ports(2)
        return self.port

    def command(self):
        cmd = super().command()
        conf = cmd[-1]
        with open(conf) as f:
            text = f.read()
        extra = ["    ip-address: %s@%d" % (B.LOOPBACK, self.dot_port),
                 '    tls-service-key: "%s"' % self.certs.server_key,
                 '    tls-service-pem: "%s"' % self.certs.server,
                 "    tls-port: %d" % self.dot_port]
        if self.many:
            extra += ["    tcp-count: %d" % MAX_CONNECTIONS, "    tcp-timeout: 600"]
        text = text.replace("remote-control:", "\n".join(extra) + "\nremote-control:")
        with open(conf, "w") as f:
            f.write(text)
        return cmd


class Bind(B.Server):
    """BIND 9.18, one worker thread (-n 1), a plain listener (self.port)
    and a TLS one (self.tls_port) with the servers' certificate; transfers
    allowed by the allow-transfer statement acl (a format string given the
    ports)."""

    def __init__(self, workdir, zones, certs, name, acl, cpus=None):
        self.name = name
        super().__init__(workdir, zones, cpus=cpus)
        self.certs = certs
        self.acl = acl

    def pick_port(self):
        self.port, self.tls_port = distinct_ports(2)
        return self.port

    def command(self):
        d = self.workdir
        lines = ['tls bench-tls { key-file "%s"; cert-file "%s"; };' % (
                     self.certs.server_key, self.certs.server),
                 "options {", '    directory "%s";' % d, '    pid-file "%s/named.pid";' % d,
                 "    listen-on port %d { 127.0.0.1; };" % self.port,
                 "    listen-on port %d tls bench-tls { 127.0.0.1; };" % self.tls_port,
                 "    listen-on-v6 { none; };", "    recursion no;", "    notify no;",
                 "    dnssec-validation no;",
                 "    " + self.acl.format(port=self.port, tls_port=self.tls_port),
                 "};", "controls { };"]
        for origin, path in self.zones:  # load-time checks only: no effect on transfers
            lines.append('zone "%s" { type primary; file "%s"; check-integrity no; };' % (
                origin, os.path.abspath(path)))
        conf = os.path.join(d, "named.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [shutil.which("named") or "/usr/sbin/named", "-g", "-n", "1", "-c", conf]

    def ready(self, origin):
        if B.Server.ready(self, origin):
            return True
        self.log.flush()
        with open(os.path.join(self.workdir, "log"), errors="replace") as f:
            if "not loaded due to errors" in f.read():
                self.stop()
                raise RuntimeError("BIND did not load %s; see %s/log" % (origin, self.workdir))
        return False


BIND_TLS_ACL = "allow-transfer port {tls_port} transport tls {{ any; }};"
BIND_TCP_ACL = "allow-transfer port {port} transport tcp {{ any; }};"
BIND_ANY_ACL = "allow-transfer {{ any; }};"


def have(program):
    return shutil.which(program) is not None or os.path.exists("/usr/sbin/" + program)


# ------------------------------------------------------------- DNS helpers

def connect(port, ctx=None, session=None, timeout=60):
    """A TCP connection to 127.0.0.1:port (TCP_NODELAY: a query written
    after the handshake's last message must not wait for its ACK), with a
    completed TLS handshake when ctx is given."""
    s = socket.create_connection((B.LOOPBACK, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if ctx is None:
        return s
    try:
        return ctx.wrap_socket(s, server_hostname=SERVER_NAME, session=session)
    except BaseException:
        s.close()
        raise


def query_wire(origin, rtype, qid=0x4242):
    wire = b""
    for label in [x for x in origin.rstrip(".").split(".") if x]:
        wire += bytes([len(label)]) + label.encode()
    return struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 0) + wire + b"\0" + struct.pack("!HH", rtype, 1)


def stream_query(s, origin="."):
    """One SOA query on a stream (TCP or TLS); the answer's RCODE."""
    wire = query_wire(origin, 6)
    s.sendall(struct.pack("!H", len(wire)) + wire)
    n = struct.unpack("!H", axfr_out.recv_exact(s, 2))[0]
    msg = axfr_out.recv_exact(s, n)
    return msg[3] & 0x0F


def soa_serial(port, origin, timeout=0.3):
    """The serial of origin's SOA as 127.0.0.1:port answers it over UDP."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(query_wire(origin, 6), (B.LOOPBACK, port))
            msg = s.recv(65535)
        except OSError:
            return None
    if len(msg) < 12 or (msg[3] & 0x0F) != 0 or struct.unpack("!H", msg[6:8])[0] == 0:
        return None
    pos = axfr_out.skip_name(msg, 12) + 4
    pos = axfr_out.skip_name(msg, pos)
    rtype, _, _, rdlen = struct.unpack("!HHIH", msg[pos:pos + 10])
    if rtype != 6:
        return None
    rdata = pos + 10
    rdata = axfr_out.skip_name(msg, axfr_out.skip_name(msg, rdata))
    return struct.unpack("!I", msg[rdata:rdata + 4])[0]


def axfr(port, origin, ctx=None):
    """One AXFR, over TLS when ctx is given: (seconds from connect to the
    closing SOA, messages, bytes)."""
    q = query_wire(origin, 252)
    t0 = time.monotonic()
    with connect(port, ctx) as s:
        s.sendall(struct.pack("!H", len(q)) + q)
        messages = size = 0
        while True:
            n = struct.unpack("!H", axfr_out.recv_exact(s, 2))[0]
            msg = axfr_out.recv_exact(s, n)
            messages += 1
            size += n
            if (msg[3] & 0x0F) != 0:
                raise RuntimeError("the server answered RCODE %d" % (msg[3] & 0x0F))
            if messages > 1 or struct.unpack("!H", msg[6:8])[0] > 1:
                if axfr_out.last_record_is_soa(msg):
                    break
    return time.monotonic() - t0, messages, size


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def stopping(servers):
    """Stop every server of the list (those started)."""
    for s in servers:
        s.stop()


# ------------------------------------------------------------ 1. XoT out

def part_xot_out(args, tmp, certs):
    rows, summary = [], []
    for label, zones in xot_zones(args, tmp):
        origin = zones[0][0]
        work = os.path.join(tmp, "xot-out", label)
        # (server factory, [(row name, port attribute, client context)])
        plans = [
            (lambda: TlsApexd(work, zones, certs, "apexd", provide="127.0.0.1 NOKEY"),
             [("apexd tcp", "port", None),
              ("apexd tls (tls-port)", "dot_port", certs.client_context())]),
            (lambda: TlsApexd(work, zones, certs, "apexd-mtls",
                              provide="127.0.0.1 NOKEY bench-client"),
             [("apexd tls (tls-auth-port, client cert)", "auth_port",
               certs.client_context(with_cert=True))]),
        ]
        if have("named"):
            plans += [
                (lambda: Bind(work, zones, certs, "bind-tls", BIND_TLS_ACL),
                 [("bind tls", "tls_port", certs.client_context())]),
                (lambda: Bind(work, zones, certs, "bind-tcp", BIND_TCP_ACL),
                 [("bind tcp", "port", None)]),
            ]
        else:
            B.log("named is not installed: BIND skipped")
        medians = {}
        for make, variants in plans:
            server = make()
            B.log("xot-out %s: starting %s" % (label, server.name))
            server.start()
            try:
                for row, attr, ctx in variants:
                    walls, cpus, msgs, sizes = [], [], [], []
                    for _ in range(args.repeat):
                        cpu0 = server.cpu_seconds()
                        wall, m, size = axfr(getattr(server, attr), origin, ctx)
                        cpus.append(server.cpu_seconds() - cpu0)
                        walls.append(wall)
                        msgs.append(m)
                        sizes.append(size)
                        B.log("xot-out %s %s: %.3f s, server CPU %.3f s, %d messages, %d bytes"
                              % (label, row, wall, cpus[-1], m, size))
                    # CPU: the mean, /proc counts in ticks of 10 ms
                    medians[row] = (B.median(walls), sum(cpus) / len(cpus))
                    rows.append([label, row, "%.3f" % medians[row][0], "%.3f" % medians[row][1],
                                 "%d" % B.median(msgs), "%.1f" % (B.median(sizes) / 1e6)])
            finally:
                server.stop()
        tcp = medians.get("apexd tcp", (0, 0))
        bind = medians.get("bind tls", (0, 0))
        for row in ("apexd tls (tls-port)", "apexd tls (tls-auth-port, client cert)"):
            tls = medians.get(row, (0, 0))
            summary.append([label, row, ratio(tls[0], tcp[0]), ratio(tls[1], tcp[1]),
                            ratio(tls[0], bind[0]), ratio(tls[1], bind[1])])
    print("XoT: outgoing AXFR (wall: median of %d; server CPU: their mean)" % args.repeat)
    print(B.table(["zone", "server, transport", "wall s", "server CPU s", "messages", "MB"],
                  rows))
    print()
    print(B.table(["zone", "apexd over TLS", "wall / apexd tcp (<= 1.2)",
                   "CPU / apexd tcp (<= 1.2)", "wall / bind tls (< 1)", "CPU / bind tls (< 1)"],
                  summary))
    print()


def xot_zones(args, tmp):
    out = []
    for label in args.zones.split(","):
        if label == "root":
            out.append((label, [(".", os.path.join(B.SRCDIR, "zones", "root.zone"))]))
        else:
            path = B.synthetic_zone(tmp, label)
            if path is not None:
                out.append((label, [(zone_origin(path), path)]))
    return out


def zone_origin(path):
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 4 and "SOA" in fields[2:4]:
                return fields[0]
    raise RuntimeError("no SOA in %s" % path)


# ------------------------------------------------------------- 2. XoT in

def part_xot_in(args, tmp, certs):
    if not have("named"):
        B.log("named is not installed: xot-in skipped")
        return
    rows, summary = [], []
    for label, zones in xot_zones(args, tmp):
        origin = zones[0][0]
        work = os.path.join(tmp, "xot-in", label)
        primary = Bind(work, zones, certs, "bind-primary", BIND_ANY_ACL, cpus=B.CLIENT_CPU)
        B.log("xot-in %s: starting BIND as the primary" % label)
        primary.start()
        try:
            serial = soa_serial(primary.port, origin, timeout=2)
            times = {"tls": [], "tcp": []}
            cpus = {"tls": [], "tcp": []}
            xfrs = {"tls": [], "tcp": []}
            for r in range(args.repeat):
                for mode in (("tls", "tcp") if r % 2 == 0 else ("tcp", "tls")):
                    seconds, cpu, xfr = secondary_start(work, origin, certs, primary, mode,
                                                        serial, args.bound)
                    times[mode].append(seconds)
                    cpus[mode].append(cpu)
                    xfrs[mode].append(xfr)
                    B.log("xot-in %s over %s: serial %d served %.3f s after the start (the "
                          "transfer %s s), apexd CPU %.3f s" % (label, mode, serial, seconds,
                                                               xfr, cpu))
        finally:
            primary.stop()
        for mode in ("tcp", "tls"):
            rows.append([label, "apexd from bind, %s" % mode, "%.3f" % B.median(times[mode]),
                         "%.3f" % B.median(xfrs[mode]), "%.3f" % B.median(cpus[mode])])
        summary.append([label, ratio(B.median(times["tls"]), B.median(times["tcp"])),
                        ratio(B.median(cpus["tls"]), B.median(cpus["tcp"]))])
    print("XoT: apexd as a secondary of BIND, from start to the zone served (medians of %d)"
          % args.repeat)
    print(B.table(["zone", "secondary, transport", "seconds to serve", "transfer s (its log)",
                   "apexd CPU s"], rows))
    print()
    print(B.table(["zone", "time tls / tcp (<= 1.2)", "CPU tls / tcp"], summary))
    print()


def secondary_start(work, origin, certs, primary, mode, serial, bound):
    """apexd started with no copy of the zone: (seconds from its start to
    its answering the primary's serial, its CPU time until then, the
    transfer's time as its log gives it)."""
    copy = os.path.join(work, "secondary.zone")
    for leftover in (copy, copy + ".jnl"):
        if os.path.exists(leftover):
            os.unlink(leftover)
    port = primary.tls_port if mode == "tls" else primary.port
    apex = TlsApexd(work, [(origin, copy)], certs, "apexd-secondary-%s" % mode,
                    primary=(port, mode == "tls"))
    apex.start(timeout=bound)  # returns once the zone's SOA is answered
    try:
        t0 = time.monotonic() - apex.ready_seconds
        while soa_serial(apex.port, origin, 0.05) != serial:
            if time.monotonic() - t0 > bound:
                raise RuntimeError("apexd did not serve serial %d within %d s" % (serial, bound))
            time.sleep(0.005)
        seconds = time.monotonic() - t0
        cpu = apex.cpu_seconds()
    finally:
        apex.stop()
    with open(os.path.join(apex.workdir, "log"), errors="replace") as f:
        m = re.findall(r"AXFR serial \d+ from .*: \d+ messages, \d+ bytes, ([\d.]+) s", f.read())
    return seconds, cpu, float(m[-1]) if m else None


# ------------------------------------------------------------------ 3. DoT

def part_dot(args, tmp, certs):
    zones = [(".", os.path.join(B.SRCDIR, "zones", "root.zone"))]
    qfile = B.query_file(tmp, "root", zones, "root")
    work = os.path.join(tmp, "dot")
    servers = [TlsApexd(work, zones, certs)]
    if have("nsd"):
        servers.append(TlsNsd(work, zones, certs))
    else:
        B.log("nsd is not installed: NSD skipped")
    rates = [0 if r == "max" else int(r) for r in args.dot_rates.split(",")]
    results = {}
    try:
        for s in servers:
            s.start()
            B.log("dot: %s ready on %d (DoT %d)" % (s.name, s.port, s.dot_port))
        runs = [(s, mode, attr) for s in servers
                for mode, attr in (("tcp", "port"), ("dot", "dot_port"))]
        for rate in rates:
            for r in range(args.repeat):
                for s, mode, attr in runs[r % len(runs):] + runs[:r % len(runs)]:
                    res = stream_measure(s, getattr(s, attr), mode, qfile, args.seconds, rate)
                    B.log("dot %s round %d %s -m %s: qps %.0f lost %d CPU %.2f us/q" % (
                        rate or "max", r + 1, s.name, mode, res["qps"], res["lost"],
                        res["cpu_us_per_q"]))
                    results.setdefault((rate, s.name, mode), []).append(res)
    finally:
        stopping(servers)
    rows, summary, med = [], [], {}
    for (rate, name, mode), rs in results.items():
        m = {k: B.median([x[k] for x in rs]) for k in ("qps", "lost", "latency_us", "cpu_us_per_q")}
        med[(rate, name, mode)] = m["cpu_us_per_q"]
        rows.append([rate or "max", name, mode, "%.0f" % m["qps"], "%.0f" % m["lost"],
                     "%.0f" % m["latency_us"], "%.2f" % m["cpu_us_per_q"]])
    for rate in rates:
        cpu = lambda n, m: med.get((rate, n, m), 0)  # noqa: E731
        summary.append([rate or "max", "%.2f" % cpu("apexd", "dot"),
                        ratio(cpu("apexd", "dot"), cpu("apexd", "tcp")),
                        ratio(cpu("apexd", "dot"), cpu("nsd", "dot")),
                        ratio(cpu("nsd", "dot"), cpu("nsd", "tcp"))])
    print("DoT: root zone and mix, dnsperf with %d connections kept open and 100 queries "
          "outstanding (medians of %d rounds of %g s)" % (DNSPERF_CONNECTIONS, args.repeat,
                                                          args.seconds))
    print(B.table(["rate", "server", "mode", "QPS", "lost", "latency us",
                   "server CPU us/query"], rows))
    print()
    print(B.table(["rate", "apexd dot us/q", "/ apexd tcp (<= 1.5)", "/ nsd dot (< 1)",
                   "nsd dot / nsd tcp"], summary))
    print()


def stream_measure(server, port, mode, qfile, seconds, rate):
    """dnsperf -m mode against port for seconds (at rate queries a second,
    0: as fast as it goes), with the server's CPU per answered query."""
    extra = ["-m", mode, "-c", str(DNSPERF_CONNECTIONS)] + (["-Q", str(rate)] if rate else [])
    cpu0 = server.cpu_seconds()
    res, out = B.dnsperf(port, qfile, seconds=seconds, extra=extra)
    cpu = server.cpu_seconds() - cpu0
    done = res["completed"]
    if not done:
        B.log(out)
    res["cpu_us_per_q"] = cpu / done * 1e6 if done else 0
    return res


# ----------------------------------------------------------- 4. handshakes

def part_handshakes(args, tmp, certs):
    zones = [(".", os.path.join(B.SRCDIR, "zones", "root.zone"))]
    work = os.path.join(tmp, "handshakes")
    servers = [TlsApexd(work, zones, certs)]
    if have("nsd"):
        servers.append(TlsNsd(work, zones, certs))
    rows, notes = [], []
    try:
        for s in servers:
            s.start()
        for s in servers:
            for how in HANDSHAKE_CLIENTS:
                rates, cpus, resumed, first = [], [], [], []
                for _ in range(args.repeat):
                    cpu0 = s.cpu_seconds()
                    if how.startswith("s_time"):
                        count, reused, wall = s_time(s.dot_port, how.split()[1], args.seconds,
                                                     tls12="1.2" in how)
                        latencies = []
                    else:
                        count, reused, wall, latencies = python_handshakes(
                            s.dot_port, certs, "resumed" in how, "query" in how, args.seconds)
                    cpu = s.cpu_seconds() - cpu0
                    rates.append(count / wall if wall else 0)
                    cpus.append(cpu / count * 1e6 if count else 0)
                    resumed.append(reused / count * 100 if count else 0)
                    first.append(B.median(latencies) * 1e3 if latencies else None)
                    B.log("handshakes %s %s: %d in %.2f s (%.0f/s), %d resumed, server CPU "
                          "%.0f us each" % (s.name, how, count, wall, rates[-1], reused,
                                            cpus[-1]))
                rows.append([s.name, how, "%.0f" % B.median(rates), "%.0f" % B.median(cpus),
                             "%.0f%%" % B.median(resumed),
                             "%.2f" % B.median(first) if "query" in how else ""])
                if "reuse" in how and B.median(resumed) < 50:
                    notes.append("%s: %s did not resume (%.0f%%)%s" % (
                        s.name, how, B.median(resumed),
                        "" if "1.2" in how else ": s_time never reads the TLS 1.3 tickets, "
                        "which come after the handshake; see the python rows"))
    finally:
        stopping(servers)
    print("Handshakes: one connection at a time on the DoT port, %g s each (medians of %d); "
          "s_time: TLS 1.3 unless it says 1.2; python: TLS 1.3, a handshake, with \"query\" "
          "one SOA query and its answer" % (args.seconds, args.repeat))
    print(B.table(["server", "client", "connections/s", "server CPU us/connection", "resumed",
                   "first answer ms"], rows))
    for n in notes:
        print("note: " + n)
    print()


HANDSHAKE_CLIENTS = ("s_time -new", "s_time -reuse", "s_time -reuse TLS 1.2", "python full",
                     "python resumed", "python full + query", "python resumed + query")


def s_time(port, how, seconds, tls12=False):
    """openssl s_time -new or -reuse (with TLS 1.2 when tls12):
    (connections, resumed, wall seconds).  With -reuse s_time prints a
    mark per connection: "r" for one that resumed, "*" for one that did
    not."""
    cmd = ["taskset", "-c", B.CLIENT_CPU, "openssl", "s_time", "-connect",
           "%s:%d" % (B.LOOPBACK, port), how, "-time", "%d" % max(1, round(seconds))]
    cmd += ["-tls1_2"] if tls12 else []
    t0 = time.monotonic()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=seconds + 60).stdout.decode("utf-8", "replace")
    wall = time.monotonic() - t0
    m = re.findall(r"(\d+) connections in [\d.]+s;", out)
    if not m:
        B.log(out)
        return 0, 0, wall
    reused = sum(line.count("r") for line in out.splitlines()
                 if line and set(line) <= set("r*t3"))
    return int(m[-1]), reused, wall


def python_handshakes(port, certs, resume, query, seconds):
    """Connections one after the other for seconds (at most LOOP_MAX),
    each with a full or (resume) a resumed handshake, and with query one
    SOA query: (connections, resumed, wall seconds, the first answers'
    latencies).  Without a query every connection resumes the session of
    a first connection (uncounted) whose TLS 1.3 ticket came with its
    answer; with one, the session the connection before left."""
    ctx = certs.client_context()
    session = None
    count = reused = 0
    latencies = []
    if resume:
        with connect(port, ctx, timeout=5) as s:
            stream_query(s)
            session = s.session
    t0 = time.monotonic()
    while count < LOOP_MAX and time.monotonic() - t0 < seconds:
        with connect(port, ctx, session=session, timeout=5) as s:
            reused += s.session_reused
            if query:
                t1 = time.monotonic()
                if stream_query(s) != 0:
                    raise RuntimeError("the SOA query over DoT failed")
                latencies.append(time.monotonic() - t1)
                if resume:
                    session = s.session
        count += 1
    return count, reused, time.monotonic() - t0, latencies


# --------------------------------------------------------------- 5. memory

def rss(server):
    total = 0
    for pid in server.pids():
        try:
            total += B.proc_status(pid, "VmRSS")
        except OSError:
            pass
    return total


def part_memory(args, tmp, certs):
    # the soft limit up to the hard one, for this client and the servers
    # it starts (MAX_CONNECTIONS and a few more if the hard limit allows)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = MAX_CONNECTIONS + 1000 if hard == resource.RLIM_INFINITY else hard
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    if want < args.connections + 200:
        B.log("memory: the descriptor limit (%d) is too low for %d connections: skipped" % (
            want, args.connections))
        return
    zones = [(".", os.path.join(B.SRCDIR, "zones", "root.zone"))]
    work = os.path.join(tmp, "memory")
    makers = [lambda: TlsApexd(work, zones, certs, many=True)]
    if have("nsd"):
        makers.append(lambda: TlsNsd(work, zones, certs, many=True))
    rows, per_server = [], {}
    for make in makers:
        runs = []
        for _ in range(args.repeat):
            s = make().start()
            try:
                before, after, opened, alive = hold_connections(s, certs, args.connections,
                                                                args.bound)
            finally:
                s.stop()
            per = (after - before) / opened if opened else 0
            runs.append((opened, before, after, per, alive))
            B.log("memory %s: %d connections, RSS %.1f MiB before, %.1f MiB after: %.1f KiB "
                  "each; %d of the sample still answer" % (
                      s.name, opened, before / 2**20, after / 2**20, per / 1024, alive))
        med = [B.median([r[i] for r in runs]) for i in range(5)]
        per_server[s.name] = med[3]
        rows.append([s.name, "%d" % med[0], "%.1f" % (med[1] / 2**20), "%.1f" % (med[2] / 2**20),
                     "%.1f" % (med[3] / 1024), "%d" % min(r[4] for r in runs)])
    print("Memory: idle DoT connections held open (medians of %d)" % args.repeat)
    print(B.table(["server", "connections", "RSS before MiB", "RSS after MiB",
                   "KiB per connection", "sample answering (of 20, fewest)"], rows))
    print("apexd / nsd per connection: %s" % ratio(per_server.get("apexd", 0),
                                                   per_server.get("nsd", 0)))
    print()


def hold_connections(server, certs, count, bound, batch=500):
    """Open count DoT connections (handshakes done) in batches, hold them:
    (RSS before, RSS with them all open, connections open, how many of a
    sample of 20 still answer a query)."""
    ctx = certs.client_context()
    for _ in range(10):  # the first connections' one-time allocations
        with connect(server.dot_port, ctx, timeout=5) as s:
            stream_query(s)
    time.sleep(1)
    before = rss(server)
    conns = []
    t0 = time.monotonic()
    try:
        while len(conns) < count and time.monotonic() - t0 < bound:
            for _ in range(min(batch, count - len(conns))):
                conns.append(connect(server.dot_port, ctx, timeout=10))
            time.sleep(0.05)
        if len(conns) < count:
            B.log("memory %s: only %d connections in %d s" % (server.name, len(conns), bound))
        time.sleep(2)
        after = rss(server)
        step = max(1, len(conns) // 20)
        alive = 0
        for s in conns[::step][:20]:
            try:
                s.settimeout(5)
                alive += stream_query(s) == 0
            except OSError:
                pass
    finally:
        for s in conns:
            s.close()
    return before, after, len(conns), alive


# ------------------------------------------------------------------ 6. UDP

class UdpApexd(B.Apexd):
    """apexd as instructions.py runs it (-n 1, -l, -z) with a config file
    that sets no listener or zone; the DoT variant adds a DoT listener with
    its certificate."""

    certs = None
    tls = False

    def pick_port(self):
        self.port, self.dot_port = distinct_ports(2)
        return self.port

    def command(self):
        lines = ["server:", "    control-socket: none"]
        cmd = super().command()
        if self.tls:
            lines += ['    tls-service-key: "%s"' % self.certs.server_key,
                      '    tls-service-pem: "%s"' % self.certs.server,
                      "    tls-port: %d" % self.dot_port]
            cmd += ["-l", "%s@%d" % (B.LOOPBACK, self.dot_port)]
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return cmd + ["-c", conf]


def part_udp(args, tmp, certs):
    zones = [(".", os.path.join(B.SRCDIR, "zones", "root.zone"))]
    full = B.query_file(tmp, "root", zones, "root")
    qfile = os.path.join(tmp, "root.first%d" % args.queries)
    with open(full) as src, open(qfile, "w") as dst:
        for i, line in enumerate(src):
            if i >= args.queries:
                break
            dst.write(line)
    plain = type("UdpApexdPlain", (UdpApexd,), {"name": "apexd-udp", "certs": certs})
    dot = type("UdpApexdDot", (UdpApexd,), {"name": "apexd-udp-dot", "certs": certs,
                                            "tls": True})
    rows, per = [], {}
    for cls, what in ((plain, "UDP only"), (dot, "UDP + a DoT listener")):
        B.log("udp: %s under callgrind" % what)
        ir, done, lost = instructions.measure(cls, tmp, zones, qfile, False)
        per[what] = ir / done if done else 0
        rows.append(["root", what, "%d" % done, "%d" % lost, "%.0f" % per[what]])
    print("UDP with TLS configured: instructions per UDP query (callgrind, root zone, first %d "
          "queries of the mix, DO=0)" % args.queries)
    print(B.table(["zone", "apexd", "answered", "lost", "instructions/query"], rows))
    print("with DoT / without: %s" % ratio(per["UDP + a DoT listener"], per["UDP only"]))
    print()


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default=",".join(PARTS),
                    help="parts, comma-separated: " + ",".join(PARTS))
    ap.add_argument("--zones", default="nu.nsec3", help="xot-out and xot-in: root,nu.nsec3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10,
                    help="dnsperf runs and handshake loops")
    ap.add_argument("--dot-rates", default="max,40000",
                    help="dot: dnsperf's rates, queries a second (max: as fast as it goes)")
    ap.add_argument("--connections", type=int, default=10000, help="the memory part")
    ap.add_argument("--queries", type=int, default=10000, help="the udp part")
    ap.add_argument("--key", choices=["ec", "rsa"], default="ec",
                    help="the certificates' keys: ECDSA P-256 or RSA 2048")
    ap.add_argument("--bound", type=int, default=600,
                    help="seconds any start, transfer in or connection opening may take")
    args = ap.parse_args()
    only = args.only.split(",")
    unknown = [p for p in only if p not in PARTS]
    if unknown:
        ap.error("unknown part(s) %s; parts: %s" % (",".join(unknown), ",".join(PARTS)))
    if not (1 <= args.repeat <= 20 and 0 < args.seconds <= 120
            and 1 <= args.connections <= 15000 and 100 <= args.queries <= 200000
            and 10 <= args.bound <= 3600):
        ap.error("--repeat 1..20, --seconds (0, 120], --connections 1..15000, "
                 "--queries 100..200000, --bound 10..3600")
    os.sched_setaffinity(0, parse_cpus(B.CLIENT_CPU))  # the clients: this process
    tmp = B.scratch_dir()
    certs = Certs(tmp, args.key)
    B.log("scratch directory %s" % tmp)
    for part, run in (("xot-out", part_xot_out), ("xot-in", part_xot_in), ("dot", part_dot),
                      ("handshakes", part_handshakes), ("memory", part_memory),
                      ("udp", part_udp)):
        if part in only:
            run(args, tmp, certs)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
