# SPDX-License-Identifier: BSD-3-Clause
"""The client side of the AF_XDP tests (test_xdp.py), run inside the
client's network namespace (ip netns exec) with a JSON request on stdin
and a JSON answer on stdout.

{"op": "exchange", "server": ADDR, "port": P, "transport": "udp"|"tcp",
 "queries": [HEX...]}
    -> {"answers": [HEX or null...]}: each query's answer (null: none
    within the timeout).
{"op": "frames", "interface": IF, "port": P, "frames": [HEX...],
 "wait": SECONDS}
    -> {"udp": [HEX...], "frames": [[HEX, VLAN]...]}: the Ethernet frames
    sent as they are on IF (AF_PACKET), then what arrived within wait
    seconds: the payloads received on a UDP socket bound to port P (the
    source port of the crafted queries), and every frame seen on IF that
    was not sent from this host, with its VLAN tag (null: none; the
    kernel takes the tag out of the frame into its packet metadata), as a
    VLAN-tagged answer reaches no socket.
"""

import json
import select
import socket
import struct
import sys
import time

from client import recv_exact  # beside this file

UDP_TIMEOUT = 1.0
ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10


def exchange_udp(server, port, queries):
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    answers = []
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.connect((server, port))
        for q in queries:
            wire = bytes.fromhex(q)
            answer = None
            for _ in range(3):
                s.send(wire)
                deadline = time.monotonic() + UDP_TIMEOUT
                while answer is None and time.monotonic() < deadline:
                    s.settimeout(max(0.01, deadline - time.monotonic()))
                    try:
                        data = s.recv(65535)
                    except socket.timeout:
                        break
                    if data[:2] == wire[:2]:
                        answer = data.hex()
                if answer is not None:
                    break
            answers.append(answer)
    return answers


def exchange_tcp(server, port, queries):
    family = socket.AF_INET6 if ":" in server else socket.AF_INET
    answers = []
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect((server, port))
        for q in queries:
            wire = bytes.fromhex(q)
            s.sendall(struct.pack("!H", len(wire)) + wire)
            (n,) = struct.unpack("!H", recv_exact(s, 2))
            answers.append(recv_exact(s, n).hex())
    return answers


def frames(interface, port, sent, wait):
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("0.0.0.0", port))
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    raw.bind((interface, 0))
    raw.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    for f in sent:
        raw.send(bytes.fromhex(f))
    got_udp, got_frames = [], []
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        ready, _, _ = select.select([udp, raw], [], [], max(0.01, deadline - time.monotonic()))
        if udp in ready:
            got_udp.append(udp.recv(65535).hex())
        if raw in ready:
            data, ancillary, _, addr = raw.recvmsg(65535, 256)
            vlan = None
            for level, kind, aux in ancillary:
                if level == SOL_PACKET and kind == PACKET_AUXDATA and len(aux) >= 20:
                    status, _, _, _, _, tci = struct.unpack_from("=IIIHHH", aux)
                    if status & TP_STATUS_VLAN_VALID:
                        vlan = tci & 0xfff
            if addr[2] != socket.PACKET_OUTGOING:
                got_frames.append([data.hex(), vlan])
    return {"udp": got_udp, "frames": got_frames}


def main():
    req = json.load(sys.stdin)
    if req["op"] == "exchange":
        fn = exchange_tcp if req["transport"] == "tcp" else exchange_udp
        out = {"answers": fn(req["server"], req["port"], req["queries"])}
    else:
        out = frames(req["interface"], req["port"], req["frames"], req["wait"])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
