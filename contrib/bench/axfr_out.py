#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Outgoing AXFR: time and server CPU per transfer, apexd vs NSD vs Knot.

  contrib/bench/axfr_out.py [--servers apexd,nsd,knot] [--zones root,nu.nsec3]
                            [--repeat 3] [--tsig]

Each server serves the zone alone, pinned to BENCH_SERVER_CPU, and allows
transfers to 127.0.0.1 (with --tsig: signed with an hmac-sha256 key).  A
client pinned to BENCH_CLIENT_CPU (a small reader in this file that takes
the messages off the socket and looks only at their last record's type, so
that the client is not what is measured) asks for the zone --repeat times
in a row.  Reported per transfer: the wall time from the request to the
closing SOA, the server's CPU time (user + system, all of its threads,
from /proc), messages and bytes; medians.
"""

import argparse
import base64
import os
import shutil
import socket
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

import dns.message  # noqa: E402
import dns.name  # noqa: E402
import dns.rdatatype  # noqa: E402
import dns.tsig  # noqa: E402
import dns.tsigkeyring  # noqa: E402

KEY_NAME = "bench-key"
SECRET = base64.b64encode(b"apex benchmark key of 32 bytes!!").decode()


class XfrApexd(B.Server):
    name = "apexd"

    def __init__(self, workdir, zones, tsig):
        super().__init__(workdir, zones)
        self.tsig = tsig

    def command(self):
        key = KEY_NAME if self.tsig else "NOKEY"
        lines = ["server:", "    listen: %s@%d" % (B.LOOPBACK, self.port), "    workers: 1",
                 "    control-socket: none", "    journal-size: 0",
                 "key:", '    name: "%s"' % KEY_NAME, "    algorithm: hmac-sha256",
                 '    secret: "%s"' % SECRET]
        for origin, path in self.zones:
            lines += ["zone:", '    name: "%s"' % origin,
                      '    file: "%s"' % os.path.abspath(path),
                      "    provide-xfr: 127.0.0.1 %s" % key]
        conf = os.path.join(self.workdir, "apex.conf")
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return [os.path.join(B.BUILDDIR, "apexd"), "-f", "-c", conf]


class XfrNsd(B.Nsd):
    def __init__(self, workdir, zones, tsig):
        super().__init__(workdir, zones)
        self.tsig = tsig

    def command(self):
        cmd = super().command()
        conf = cmd[-1]
        key = KEY_NAME if self.tsig else "NOKEY"
        with open(conf) as f:
            text = f.read()
        text = text.replace('    zonefile: ', "    provide-xfr: 127.0.0.1 %s\n    zonefile: " % key)
        text += 'key:\n    name: "%s"\n    algorithm: hmac-sha256\n    secret: "%s"\n' % (
            KEY_NAME, SECRET)
        with open(conf, "w") as f:
            f.write(text)
        return cmd


class XfrKnot(B.Knot):
    def __init__(self, workdir, zones, tsig):
        super().__init__(workdir, zones)
        self.tsig = tsig

    def command(self):
        cmd = super().command()
        conf = cmd[-1]
        with open(conf) as f:
            text = f.read()
        acl = ["key:", "  - id: %s" % KEY_NAME, "    algorithm: hmac-sha256",
               "    secret: %s" % SECRET,
               "acl:", "  - id: xfr", "    address: 127.0.0.1", "    action: transfer"]
        if self.tsig:
            acl.append("    key: %s" % KEY_NAME)
        text = text.replace("template:", "\n".join(acl) + "\ntemplate:")
        text = text.replace("    dnssec-signing: off", "    dnssec-signing: off\n    acl: xfr")
        with open(conf, "w") as f:
            f.write(text)
        return cmd


SERVERS = {"apexd": XfrApexd, "nsd": XfrNsd, "knot": XfrKnot}


def recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("the server closed the connection in the middle of the transfer")
        buf += chunk
    return bytes(buf)


def last_record_is_soa(msg):
    """Whether the message's answer section ends with an SOA record: the
    last record's fixed part is found by walking the records' names."""
    ancount = struct.unpack("!H", msg[6:8])[0]
    if ancount == 0:
        return False
    pos = 12
    qdcount = struct.unpack("!H", msg[4:6])[0]
    for _ in range(qdcount):
        pos = skip_name(msg, pos) + 4
    rtype = None
    for _ in range(ancount):
        pos = skip_name(msg, pos)
        rtype, _, _, rdlen = struct.unpack("!HHIH", msg[pos:pos + 10])
        pos += 10 + rdlen
    return rtype == dns.rdatatype.SOA


def skip_name(msg, pos):
    while True:
        n = msg[pos]
        if n & 0xC0 == 0xC0:
            return pos + 2
        if n == 0:
            return pos + 1
        pos += 1 + n


def axfr(port, origin, tsig):
    """One AXFR: (seconds, messages, bytes)."""
    q = dns.message.make_query(origin, dns.rdatatype.AXFR)
    if tsig:
        q.use_tsig(dns.tsigkeyring.from_text({KEY_NAME: ("hmac-sha256", SECRET)}), KEY_NAME,
                   algorithm="hmac-sha256")
    wire = q.to_wire()
    t0 = time.monotonic()
    with socket.create_connection((B.LOOPBACK, port), timeout=60) as s:
        s.sendall(struct.pack("!H", len(wire)) + wire)
        messages = size = soas = 0
        while True:
            n = struct.unpack("!H", recv_exact(s, 2))[0]
            msg = recv_exact(s, n)
            messages += 1
            size += n
            if (msg[3] & 0x0F) != 0:
                raise RuntimeError("the server answered RCODE %d" % (msg[3] & 0x0F))
            if messages > 1 or struct.unpack("!H", msg[6:8])[0] > 1:
                if last_record_is_soa(msg):
                    break
    return time.monotonic() - t0, messages, size


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default="apexd,nsd,knot")
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tsig", action="store_true")
    args = ap.parse_args()
    tmp = B.scratch_dir()
    rows = []
    for label, zones, _ in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        origin = zones[0][0]
        for name in args.servers.split(","):
            if name != "apexd" and shutil.which({"nsd": "nsd", "knot": "knotd"}[name]) is None:
                B.log("%s is not installed: skipped" % name)
                continue
            server = SERVERS[name](os.path.join(tmp, label), zones, args.tsig).start()
            try:
                walls, cpus, msgs, sizes = [], [], [], []
                for _ in range(args.repeat):
                    cpu0 = server.cpu_seconds()
                    wall, m, size = axfr(server.port, origin, args.tsig)
                    cpus.append(server.cpu_seconds() - cpu0)
                    walls.append(wall)
                    msgs.append(m)
                    sizes.append(size)
                    B.log("%s %s: %.3f s, CPU %.3f s, %d messages, %d bytes" % (
                        label, name, wall, cpus[-1], m, size))
            finally:
                server.stop()
            rows.append([label, name, "%.3f" % B.median(walls), "%.3f" % B.median(cpus),
                         "%d" % B.median(msgs), "%.1f" % (B.median(sizes) / 1e6)])
    print(B.table(["zone", "server", "wall s", "server CPU s", "messages", "MB"], rows))


if __name__ == "__main__":
    main()
