#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Memory of a reload of an edited zone file: apexd's peak over its steady state.

apexd serves the synthetic nu. zone (NSEC3, about a million records;
../shared/zones/nu.nsec3.synthetic.zone.xz, decompressed into a temporary
directory), started afresh for each case; the file is then replaced and
`apexctl reload nu.` asked for:

  unchanged   the same content (written again);
  100         the next serial, 50 delegations re-pointed (their NS records
              replaced) and 50 new ones, each with the NSEC3 of its name
              inserted in the chain (its predecessor's next hash changed);
  10%         the next serial, the NS records of every fifth delegation
              replaced: about a tenth of the zone's records.

Memory: VmRSS of apexd once loaded and settled (steady), then VmHWM reset
(/proc/PID/clear_refs, 5) just before the reload and read once apexctl
has returned (peak), and VmRSS after.  The new serial must be served.

    /usr/bin/python3 contrib/bench-reload/reload_edit_bench.py [--cases unchanged,100,10%]

APEX_BUILDDIR and APEX_ZONES as for reload_bench.py.  Every process
started is stopped by its PID.  A Markdown table goes to stdout
(doc/reload.md holds a run).
"""

import argparse
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reload_bench import BUILDDIR, ORIGIN, ZONES, Apexd, soa_serial  # noqa: E402

B32 = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", b"0123456789ABCDEFGHIJKLMNOPQRSTUV")


def nsec3_hash(name):
    """NSEC3 hash (SHA-1, no salt, no extra iteration) of name, base32hex."""
    wire = b""
    for label in name.rstrip(".").lower().split("."):
        wire += bytes([len(label)]) + label.encode()
    return base64.b32encode(hashlib.sha1(wire + b"\x00").digest()).translate(B32).decode()


def status(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def bump_serial(line, serial):
    f = line.split()
    f[f.index("SOA") + 3] = str(serial)
    return " ".join(f) + "\n"


def read_zone(path):
    """The lines, the SOA line's index and serial, the delegations (owner ->
    indices of its NS lines) and the NSEC3 lines by hash."""
    lines, delegations, nsec3 = [], {}, {}
    soa = serial = None
    with open(path) as f:
        for i, line in enumerate(f):
            lines.append(line)
            fields = line.split()
            if len(fields) < 4:
                continue
            if fields[3] == "SOA" and soa is None:
                soa, serial = i, int(fields[fields.index("SOA") + 3])
            elif fields[3] == "NS" and fields[0] != ORIGIN:
                delegations.setdefault(fields[0], []).append(i)
            elif fields[3] == "NSEC3":
                nsec3[fields[0].split(".")[0].upper()] = i
    return lines, soa, serial, delegations, nsec3


def repoint(lines, delegations, owners, tag):
    for k, owner in enumerate(owners):
        for j, i in enumerate(delegations[owner]):
            lines[i] = "%s 86400 IN NS ns%d.%s-%d.example.\n" % (owner, j + 1, tag, k)


def add_delegations(lines, nsec3, count):
    """count new delegations, each with its NSEC3 inserted in the chain."""
    hashes = sorted(nsec3)
    added = []
    for k in range(count):
        owner = "zz-new-%d.%s" % (k, ORIGIN)
        h = nsec3_hash(owner)
        added.append("%s 86400 IN NS ns1.new-%d.example.\n" % (owner, k))
        added.append("%s 86400 IN NS ns2.new-%d.example.\n" % (owner, k))
        # the predecessor in the chain now points at h, h at its old next
        pos = max(i for i in range(len(hashes)) if hashes[i] < h) if hashes[0] < h else -1
        prev = hashes[pos]
        f = lines[nsec3[prev]].split()
        nxt = f[8]
        f[8] = h
        lines[nsec3[prev]] = " ".join(f) + "\n"
        added.append("%s.%s 3600 IN NSEC3 1 0 0 - %s NS\n" % (h, ORIGIN, nxt))
        hashes.insert(pos + 1, h)
        nsec3[h] = None
    return added


def write_case(case, zone, workdir):
    lines, soa, serial, delegations, nsec3 = read_zone(zone)
    out = os.path.join(workdir, "nu.%s.zone" % case.rstrip("%"))
    added = []
    owners = sorted(delegations)
    if case == "100":
        lines[soa] = bump_serial(lines[soa], serial + 1)
        repoint(lines, delegations, owners[:: len(owners) // 50][:50], "moved")
        added = add_delegations(lines, dict(nsec3), 50)
    elif case == "10%":
        lines[soa] = bump_serial(lines[soa], serial + 1)
        repoint(lines, delegations, owners[::5], "tenth")
    else:
        serial -= 1
    with open(out, "w") as f:
        f.writelines(lines)
        f.writelines(added)
    return out, serial + 1


def measure(case, zone_a, workdir):
    edited, serial = write_case(case, zone_a, workdir)
    live = os.path.join(workdir, "nu.zone")
    shutil.copy(zone_a, live)
    s = Apexd(workdir, live)
    s.start()
    try:
        time.sleep(3)
        pid = s.proc.pid
        steady = status(pid, "VmRSS")
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        os.rename(edited, live)
        t0 = time.monotonic()
        r = subprocess.run([os.path.join(BUILDDIR, "apexctl"), "-s", s.sock, "reload", ORIGIN],
                           capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - t0
        peak = status(pid, "VmHWM")
        after = status(pid, "VmRSS")
        served = soa_serial(s.port, timeout=2.0)
        with open(os.path.join(s.dir, "server.log"), errors="replace") as f:
            log = [line.strip() for line in f if "nu.:" in line or "zone nu." in line]
    finally:
        s.stop()
    if r.returncode != 0 or served != serial:
        raise RuntimeError("%s: reload failed (%s%s), serial %s" % (case, r.stdout, r.stderr, served))
    return {"case": case, "steady": steady, "peak": peak, "after": after, "seconds": seconds,
            "log": log[-2:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", default="unchanged,100,10%")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="apex-reload-edit-")
    try:
        zone_a = os.path.join(workdir, "nu.a.zone")
        with open(zone_a, "wb") as out:
            subprocess.run(["xz", "-dc", os.path.join(ZONES, "nu.nsec3.synthetic.zone.xz")],
                           stdout=out, check=True)
        results = []
        for case in args.cases.split(","):
            r = measure(case, zone_a, workdir)
            print("%s: %r" % (case, r), file=sys.stderr, flush=True)
            results.append(r)
        print("| file reloaded | steady (MiB) | peak (MiB) | peak / steady | after (MiB) | reload (s) |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in results:
            print("| %s | %.0f | %.0f | %.2f | %.0f | %.2f |" % (
                r["case"], r["steady"] / 2**20, r["peak"] / 2**20, r["peak"] / r["steady"],
                r["after"] / 2**20, r["seconds"]))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
