#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the seed corpus of fuzz_tls_stream: tests/fuzz/corpus/tls_stream/.

Stream seeds (byte 0 even): byte 0 chooses the size of the server's
reads (bits 1-3) and a final close_notify (bit 4), bytes 1-4 the sizes
of the client's writes, then DNS messages each after a two-byte length:
queries whole and pipelined, read a byte at a time, many in one record,
a length of 0 in the middle and at the end, a message cut at the end, the largest
message (65535 bytes) and one after it, enough answers for several
flushes.

Raw seeds (byte 0 odd): byte 1 chooses the size of the reads, then the
bytes fed to the server as ciphertext: a TLS 1.3 and a TLS 1.2
ClientHello made by hand (fixed random and key share), cut short and
whole; garbage; and, after a real handshake (bit 1 of byte 0), records
the server cannot decrypt.

The output is deterministic (the standard library only). Run from the
source tree: python3 tests/fuzz/gen_tls_stream_corpus.py
"""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "tls_stream")

# byte 0 of a stream seed: the server's read size, by index
READ_16K, READ_1, READ_3, READ_64, READ_517, READ_1500, READ_5000, READ_9000 = range(8)
CLOSE_NOTIFY = 0x10


def name(text):
    out = b""
    for label in text.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(qid, qname, qtype, do=False, edns=True, payload=1232):
    msg = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 1 if edns else 0)
    msg += name(qname) + struct.pack("!HH", qtype, 1)
    if edns:
        msg += b"\0" + struct.pack("!HHIH", 41, payload, 0x8000 if do else 0, 0)
    return msg


def framed(*msgs):
    return b"".join(struct.pack("!H", len(m)) + m for m in msgs)


def stream(read, chunks, body, close=False):
    """chunks: four write sizes, each a byte as fuzz_tls_stream reads it."""
    return bytes([read << 1 | (CLOSE_NOTIFY if close else 0)]) + bytes(chunks) + body


QUERIES = [
    query(1, ".", 6),
    query(2, "example.", 1, do=True),
    query(3, "example.", 48, do=True),
    query(4, "nonexistent.example.", 1, do=True),
    query(5, "example.", 252),  # AXFR: refused by the engine (no transfer thread here)
    query(6, "version.bind.", 16, edns=False),
]


def ext(kind, body):
    return struct.pack("!HH", kind, len(body)) + body


def client_hello(tls13):
    """A ClientHello for dot.fuzz.example offering ALPN "dot"."""
    host = b"dot.fuzz.example"
    sni = struct.pack("!HBH", len(host) + 3, 0, len(host)) + host
    exts = ext(0, sni)
    exts += ext(10, struct.pack("!HHH", 4, 0x001D, 0x0017))  # x25519, P-256
    exts += ext(11, b"\x01\x00")  # EC point formats: uncompressed
    exts += ext(13, struct.pack("!HHHH", 6, 0x0403, 0x0804, 0x0401))
    exts += ext(16, struct.pack("!H", 4) + b"\x03dot")
    exts += ext(23, b"")  # extended master secret
    if tls13:
        share = bytes(range(9, 41))  # any 32 bytes are an X25519 key
        exts += ext(43, b"\x02\x03\x04")  # supported versions: TLS 1.3
        exts += ext(45, b"\x01\x01")  # PSK modes: psk_dhe_ke
        exts += ext(51, struct.pack("!HHH", 36, 0x001D, 32) + share)
        suites = [0x1301, 0x1302, 0x1303]
    else:
        suites = [0xC02B, 0xC02C, 0xCCA9]  # ECDHE-ECDSA with AES-GCM, ChaCha20
    body = b"\x03\x03" + bytes(range(32))  # legacy version, random
    body += b"\x20" + bytes(range(100, 132))  # session id
    body += struct.pack("!H", 2 * len(suites)) + b"".join(struct.pack("!H", s) for s in suites)
    body += b"\x01\x00" + struct.pack("!H", len(exts)) + exts
    hs = b"\x01" + struct.pack("!I", len(body))[1:] + body
    return b"\x16\x03\x01" + struct.pack("!H", len(hs)) + hs


def raw(read, body, after_handshake=False):
    return bytes([0x03 if after_handshake else 0x01, read]) + body


def seeds():
    q = framed(*QUERIES)
    yield "queries", stream(READ_16K, [191, 191, 191, 191], q)
    yield "byte_reads", stream(READ_1, [0, 6, 99, 2], q)
    yield "small_reads_close", stream(READ_3, [30, 40, 50, 60], q, close=True)
    yield "one_record", stream(READ_517, [255, 255, 255, 255], q, close=True)
    yield "zero_length", stream(READ_64, [191, 191, 191, 191], framed(*QUERIES[:2]) + b"\0\0" + q)
    yield "zero_at_end", stream(READ_3, [191, 191, 191, 191], q + b"\0\0")
    yield "cut_at_end", stream(READ_1500, [10, 191, 191, 191], q + framed(QUERIES[0])[:9])
    yield "length_cut", stream(READ_16K, [191, 191, 191, 191], q + b"\x00")
    largest = query(7, "example.", 1)
    largest += b"\0" * (65535 - len(largest))  # trailing garbage: FORMERR
    yield "largest", stream(READ_16K, [255, 255, 255, 255], framed(largest, QUERIES[1]))
    many = framed(*[query(100 + i, "example.", 48, do=True) for i in range(120)])
    yield "many_answers", stream(READ_5000, [192, 193, 200, 255], many)
    yield "empty", stream(READ_16K, [0, 0, 0, 0], b"")

    for tls13 in (True, False):
        hello = client_hello(tls13)
        tag = "13" if tls13 else "12"
        yield "raw_hello" + tag, raw(0, hello)
        yield "raw_hello" + tag + "_reads", raw(5, hello)
        yield "raw_hello" + tag + "_cut", raw(0, hello[: len(hello) // 2])
        yield "raw_hello" + tag + "_then_garbage", raw(0, hello + b"\x16\x03\x03\x00\x01\x00")
    yield "raw_garbage", raw(0, bytes((i * 37 + 11) & 0xFF for i in range(300)))
    yield "raw_http", raw(0, b"GET / HTTP/1.1\r\nHost: dot.fuzz.example\r\n\r\n")
    yield "raw_big_record", raw(200, b"\x16\x03\x01\x40\x00" + b"\x01" * 16384)
    yield "raw_after_data", raw(0, b"\x17\x03\x03\x00\x20" + bytes(range(32)), True)
    yield "raw_after_alert", raw(0, b"\x15\x03\x03\x00\x02\x01\x00", True)
    yield "raw_after_hello", raw(0, client_hello(True), True)


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    for fname, data in seeds():
        with open(os.path.join(OUT, fname), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
