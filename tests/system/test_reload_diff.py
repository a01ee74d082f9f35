# SPDX-License-Identifier: BSD-3-Clause
"""A reload of a zone served, derived from the version served.

apexd serves reload.test. (test_reload.py's zone); its file is edited
and reloaded with `apexctl reload`.  An edit is compared with the version
served and the new version derived from the change: the new content is
served and the log says it was derived in place.  A file reloaded
unchanged costs no new version: the version served stays (same load
time in zone-status) and the log says so.  An edit that breaks the zone
(a CNAME beside other data) keeps the version served and names the file
and the line, as a whole load does.  A chain of derived reloads is built
compact once it crosses the rule of a secondary's IXFRs (32 versions
here), and the compact version answers byte for byte as a whole load of
the same file.
"""

import os
import re
import socket

import dns.message
import pytest

from test_reload import (ORIGIN, T, VERSIONS, ReloadServer, check_clean_exit, write_atomically,
                         zone_text)

# xfr/version_compact.h: APEX_COMPACT_DEPTH, the versions derived in a row
# after which the version served is built compact
COMPACT_DEPTH = 32


@pytest.fixture(scope="module")
def server(workdir):
    s = ReloadServer(workdir, "reload-diff")
    yield s
    check_clean_exit(s, s.stop())


def edited(serial, changes=()):
    """Version A of the zone with another serial, lines replaced
    (prefix -> new line, None removes it) and appended."""
    lines = zone_text("A").splitlines()
    lines[2] = "@ SOA ns1 hostmaster %d 3600 600 86400 300" % serial
    out = []
    for line in lines:
        for prefix, new in changes:
            if prefix is not None and line.startswith(prefix):
                line = new
                break
        if line is not None:
            out.append(line)
    out += [new for prefix, new in changes if prefix is None]
    return "\n".join(out) + "\n"


def addresses(s, name):
    r = s.query(name + "." + ORIGIN, T.A)
    return sorted(rr.address for rrset in r.answer for rr in rrset)


def zone_status(s):
    return s.ctl_json("zone-status", ORIGIN)["zones"][0]


def test_edit_is_derived_in_place(server):
    s = server
    write_atomically(s.zonefile, zone_text("A"))
    s.ctl_ok("reload", ORIGIN)
    assert s.serial() == VERSIONS["A"]
    serial = VERSIONS["A"] + 1
    write_atomically(s.zonefile, edited(serial, [
        ("host5 ", "host5 A 10.9.9.9"),  # RDATA changed
        ("host7 ", None),                # a name removed
        (None, "added A 192.0.2.77"),    # a name added
        (None, "host9 A 10.8.8.8"),      # a record added to an RRset
    ]))
    out = s.ctl_ok("reload", ORIGIN)
    assert "serial %d" % serial in out, out
    assert s.serial() == serial
    assert addresses(s, "host5") == ["10.9.9.9"]
    assert s.query("host7." + ORIGIN, T.A).rcode() == 3  # NXDOMAIN
    assert addresses(s, "added") == ["192.0.2.77"]
    assert addresses(s, "host9") == ["10.1.0.9", "10.8.8.8"]
    assert addresses(s, "host10") == ["10.1.0.10"]
    log = s.log()
    assert re.search(r"reload\.test\.: \S+ against serial %d: 2 removed, 3 added, serial %d "
                     r"derived in place" % (VERSIONS["A"], serial), log), log[-3000:]


def test_unchanged_file_keeps_the_version(server):
    s = server
    serial = VERSIONS["A"] + 2
    write_atomically(s.zonefile, edited(serial, [(None, "same A 192.0.2.8")]))
    s.ctl_ok("reload", ORIGIN)
    before = zone_status(s)
    assert before["serial"] == serial and before["state"] == "loaded"
    out = s.ctl_ok("reload", ORIGIN)
    assert "serial %d" % serial in out, out
    after = zone_status(s)
    assert after["state"] == "loaded" and after["serial"] == serial
    assert after["loads"] == before["loads"] + 1
    # the same version: loaded at the same time, no new one published
    assert after["loaded_at"] == before["loaded_at"], (before, after)
    # the derived version kept the file's SHA-256: not parsed again
    assert "%s unchanged (serial %d, the same bytes): the version served is kept" \
        % (s.zonefile, serial) in s.log()
    assert addresses(s, "same") == ["192.0.2.8"]

    # the same bytes written anew (another file renamed over it)
    write_atomically(s.zonefile, edited(serial, [(None, "same A 192.0.2.8")]))
    mark = len(s.log())
    s.ctl_ok("reload", ORIGIN)
    assert "%s unchanged (serial %d, the same bytes)" % (s.zonefile, serial) \
        in s.log()[mark:], s.log()[mark:]
    assert zone_status(s)["loaded_at"] == before["loaded_at"]

    # other bytes, the same records: compared, and still the same version
    write_atomically(s.zonefile,
                     edited(serial, [(None, "; a comment"), (None, "same A 192.0.2.8")]))
    mark = len(s.log())
    s.ctl_ok("reload", ORIGIN)
    assert "%s unchanged (serial %d, the same records)" % (s.zonefile, serial) \
        in s.log()[mark:], s.log()[mark:]
    assert zone_status(s)["loaded_at"] == before["loaded_at"]


def test_included_file_changed_alone_is_served(server, workdir):
    """A file read through $INCLUDE keeps no digest: the zone file's bytes
    unchanged, an edit of the included file alone is still served."""
    s = server
    serial = VERSIONS["A"] + 3
    inc = os.path.join(workdir, "reload-diff-part.inc")
    write_atomically(inc, "included A 192.0.2.81\n")
    write_atomically(s.zonefile, edited(serial, [(None, "$INCLUDE " + inc)]))
    s.ctl_ok("reload", ORIGIN)
    assert s.serial() == serial
    assert addresses(s, "included") == ["192.0.2.81"]
    write_atomically(inc, "included A 192.0.2.82\n")
    mark = len(s.log())
    s.ctl_ok("reload", ORIGIN)
    assert addresses(s, "included") == ["192.0.2.82"], s.log()[mark:]
    assert "unchanged" not in s.log()[mark:], s.log()[mark:]


def test_cname_beside_data_keeps_the_version(server):
    s = server
    serial = VERSIONS["A"] + 3
    write_atomically(s.zonefile, edited(serial - 1, [(None, "kept A 192.0.2.9")]))
    s.ctl_ok("reload", ORIGIN)
    good = s.serial()
    text = edited(serial, [(None, "kept A 192.0.2.9")])
    lines = text.splitlines()
    lines.insert(5, "ns1 CNAME elsewhere.example.")  # line 6: beside ns1's A
    write_atomically(s.zonefile, "\n".join(lines) + "\n")
    r = s.ctl("reload", ORIGIN)
    assert r.returncode != 0
    err = r.stderr.strip()
    assert "%s:" % s.zonefile in err and "CNAME" in err, err
    assert re.search(re.escape(s.zonefile) + r":\d+:", err), err
    assert s.serial() == good
    zs = zone_status(s)
    assert zs["state"] == "failed" and zs["served"] and zs["serial"] == good
    # the same file loaded whole says the same
    assert zs["error"] in err
    # fixed: reloaded
    write_atomically(s.zonefile, text)
    s.ctl_ok("reload", ORIGIN)
    assert s.serial() == serial


def raw_answer(port, query):
    """The bytes of the UDP answer to query (bytes) from 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(5.0)
        sock.sendto(query, ("127.0.0.1", port))
        return sock.recv(65535)


def answer_set(port, chain):
    """The answers of port to queries over every kind of name of the zone
    and the names the chain added: positive, CNAME, additional data,
    NODATA and NXDOMAIN."""
    names = [(ORIGIN, T.SOA), (ORIGIN, T.NS), ("marker." + ORIGIN, T.TXT),
             ("alias." + ORIGIN, T.TXT), ("mx." + ORIGIN, T.MX), ("mail." + ORIGIN, T.AAAA),
             ("host1." + ORIGIN, T.AAAA), ("nothere." + ORIGIN, T.A),
             ("below.host3." + ORIGIN, T.A)]
    names += [("host%d.%s" % (i, ORIGIN), T.A) for i in range(0, 2000, 97)]
    names += [("chain%d.%s" % (i, ORIGIN), T.A) for i in range(1, chain + 2)]
    out = []
    for qid, (name, rdtype) in enumerate(names):
        q = dns.message.make_query(name, rdtype)
        q.id = qid
        out.append((name, rdtype, raw_answer(port, q.to_wire())))
    return out


def test_chain_of_derived_reloads_is_built_compact(server, workdir):
    s = server
    base = VERSIONS["A"] + 100
    start = len(s.log())
    compacted = None
    for i in range(1, COMPACT_DEPTH + 1):
        text = edited(base + i, [(None, "chain%d A 198.18.0.%d" % (j, j)) for j in range(1, i + 1)])
        write_atomically(s.zonefile, text)
        s.ctl_ok("reload", ORIGIN)
        log = s.log()[start:]
        assert re.search(r"against serial \d+: \d+ removed, \d+ added, serial %d derived in place"
                         % (base + i), log), log[-3000:]
        loaded_at = zone_status(s)["loaded_at"]
        # the file reloaded unchanged: its reply comes once the reload
        # thread is past any compaction the reload above began
        out = s.ctl_ok("reload", ORIGIN)
        assert "serial %d" % (base + i) in out, out
        # a compact version is the same version to zone-status
        assert zone_status(s)["loaded_at"] == loaded_at
        compacted = re.search(r"zone reload\.test\.: serial (\d+) built compact in [\d.]+ s, "
                              r"[\d.]+ MiB of derived versions let go \(a chain of (\d+)\)",
                              s.log()[start:])
        if compacted is not None:
            break
    assert compacted is not None, \
        "no compaction after %d derived reloads:\n%s" % (COMPACT_DEPTH, s.log()[start:][-3000:])
    assert int(compacted.group(1)) == base + i and int(compacted.group(2)) <= COMPACT_DEPTH
    assert "kept as derived" not in s.log()[start:]
    assert s.serial() == base + i
    # the compact version answers as a whole load of the same file
    assert_answers_as_whole_load(s, workdir, "reload-diff-whole", text, i)


def assert_answers_as_whole_load(s, workdir, name, text, chain):
    """s answers answer_set() byte for byte as a second apexd (name) that
    loaded text whole."""
    whole = ReloadServer(workdir, name, workers=1, text=text)
    try:
        expected = answer_set(whole.port, chain)
        assert "derived" not in whole.log()
    finally:
        check_clean_exit(whole, whole.stop())
    got = answer_set(s.port, chain)
    for (qname, rdtype, want), (_, _, have) in zip(expected, got):
        assert have == want, "%s/%s: %r != %r" % (qname, rdtype, have, want)
    assert len(got) == len(expected) > 30


def test_chain_built_again_in_parts(workdir, monkeypatch):
    """A zone from APEX_TEST_COMPACT_PARTS_FROM bytes (a test hook: the
    daemon's threshold is 64 MiB) is made compact part by part rather than
    built whole: the parts are published one after the other, and the
    version served at the end answers byte for byte as a whole load of the
    same file."""
    monkeypatch.setenv("APEX_TEST_COMPACT_PARTS_FROM", "0")
    s = ReloadServer(workdir, "reload-diff-parts")
    monkeypatch.delenv("APEX_TEST_COMPACT_PARTS_FROM")
    try:
        base = VERSIONS["A"] + 500
        start = len(s.log())
        parts = None
        for i in range(1, COMPACT_DEPTH + 1):
            text = edited(base + i,
                          [(None, "chain%d A 198.18.0.%d" % (j, j)) for j in range(1, i + 1)])
            write_atomically(s.zonefile, text)
            s.ctl_ok("reload", ORIGIN)
            # the reload thread's reply to an unchanged file: past the parts
            s.ctl_ok("reload", ORIGIN)
            parts = re.search(r"zone reload\.test\.: serial (\d+) built again in (\d+) parts in "
                              r"[\d.]+ s, [\d.]+ MiB of derived versions let go \(a chain of "
                              r"(\d+)\), [\d.]+ MiB left", s.log()[start:])
            if parts is not None:
                break
        assert parts is not None, \
            "no compaction after %d derived reloads:\n%s" % (COMPACT_DEPTH, s.log()[start:][-3000:])
        assert int(parts.group(1)) == base + i and int(parts.group(2)) > 1
        assert "APEX_TEST_COMPACT_PARTS_FROM=0: a test hook" in s.log()
        assert "built compact" not in s.log()[start:]
        assert "not built again in parts" not in s.log()[start:]
        assert s.serial() == base + i
        assert_answers_as_whole_load(s, workdir, "reload-diff-parts-whole", text, i)
        # and the chain goes on: one more reload is derived from the parts
        text = edited(base + i + 1,
                      [(None, "chain%d A 198.18.0.%d" % (j, j)) for j in range(1, i + 2)])
        write_atomically(s.zonefile, text)
        s.ctl_ok("reload", ORIGIN)
        assert re.search(r"serial %d derived in place" % (base + i + 1), s.log()[start:])
        assert s.serial() == base + i + 1
    finally:
        check_clean_exit(s, s.stop())
