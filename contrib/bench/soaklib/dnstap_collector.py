# SPDX-License-Identifier: BSD-3-Clause
"""A dnstap collector on a Unix socket: the Frame Streams handshake of a
bidirectional reader (READY -> ACCEPT, START, data frames, STOP ->
FINISH), counting the data frames and checking that one in 997 is a
dnstap protobuf message (field 15, the type, present).  It reads as fast
as it can and keeps nothing, so that apexd's writer sees a live collector.

It runs as a process of its own (python3 dnstap_collector.py SOCKET
COUNTS), so that reading some 10^5 frames a second does not hold the
soak's probes up: the counts are written to the file COUNTS as JSON every
second and when SIGTERM stops it.
"""

import json
import os
import signal
import socket
import struct
import sys
import threading

CONTENT_TYPE = b"protobuf:dnstap.Dnstap"
ACCEPT, START, STOP, READY, FINISH = 1, 2, 3, 4, 5
FIELD_CONTENT_TYPE = 1


def control_frame(ctype, content_type=None):
    body = struct.pack("!I", ctype)
    if content_type is not None:
        body += struct.pack("!II", FIELD_CONTENT_TYPE, len(content_type)) + content_type
    return struct.pack("!II", 0, len(body)) + body


def looks_like_dnstap(frame):
    """The Dnstap message's type (field 15, varint) is its last field."""
    return len(frame) >= 2 and frame[-2] == 0x78


class Collector:
    def __init__(self, path):
        self.path = path
        self.frames = 0
        self.bad_frames = 0
        self.connections = 0
        self.errors = []
        self.stopping = threading.Event()
        if os.path.exists(path):
            os.unlink(path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(4)
        self.listener.settimeout(0.2)
        self.thread = threading.Thread(target=self.run, name="dnstap", daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.thread.join(10)
        self.listener.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def run(self):
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except socket.timeout:
                continue
            self.connections += 1
            conn.settimeout(0.2)
            try:
                self.serve(conn)
            except Exception as e:  # noqa: BLE001 (reported in the table)
                self.errors.append(str(e))
            finally:
                conn.close()

    def serve(self, conn):
        """Until the end of the stream; once stopping, until it stays quiet
        for 0.2 s (what apexd wrote before it stopped is still read)."""
        buf = bytearray()
        while True:
            try:
                data = conn.recv(1 << 20)
            except socket.timeout:
                if self.stopping.is_set():
                    return
                continue
            if not data:
                return
            buf += data
            used = self.frames_in(conn, buf)
            del buf[:used]

    def frames_in(self, conn, buf):
        """Handles the complete frames at the start of buf; returns the
        bytes they took."""
        pos, n = 0, len(buf)
        check_every = 997
        while pos + 4 <= n:
            length = struct.unpack_from("!I", buf, pos)[0]
            if length == 0:  # a control frame: escape, its length, its body
                if pos + 8 > n:
                    break
                clen = struct.unpack_from("!I", buf, pos + 4)[0]
                if pos + 8 + clen > n:
                    break
                ctype = struct.unpack_from("!I", buf, pos + 8)[0]
                if ctype == READY:
                    if CONTENT_TYPE not in bytes(buf[pos + 12:pos + 8 + clen]):
                        raise RuntimeError("READY without %s" % CONTENT_TYPE.decode())
                    conn.sendall(control_frame(ACCEPT, CONTENT_TYPE))
                elif ctype == STOP:
                    conn.sendall(control_frame(FINISH))
                pos += 8 + clen
                continue
            if pos + 4 + length > n:
                break
            self.frames += 1
            if self.frames % check_every == 1 and \
                    not looks_like_dnstap(bytes(buf[pos + 4:pos + 4 + length])):
                self.bad_frames += 1
            pos += 4 + length
        return pos


def write_counts(collector, path):
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump({"frames": collector.frames, "bad_frames": collector.bad_frames,
                   "connections": collector.connections, "errors": collector.errors[:10]}, f)
    os.rename(tmp, path)


def read_counts(path):
    """The counts the collector process wrote last (zeros before its first)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"frames": 0, "bad_frames": 0, "connections": 0, "errors": []}


def run_process(sock_path, counts_path):
    collector = Collector(sock_path).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the soak stops it by its PID
    while not done.wait(1.0):
        write_counts(collector, counts_path)
    collector.stop()
    write_counts(collector, counts_path)


if __name__ == "__main__":
    run_process(sys.argv[1], sys.argv[2])
