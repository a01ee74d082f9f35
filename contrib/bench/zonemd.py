#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""ZONEMD verification: what checking a zone's digest adds to its load.

  contrib/bench/zonemd.py [--zones root,nu.nsec3] [--repeat 3]

For each zone, `apexd -t` loads it with its ZONEMD record checked
(zonemd-verify: yes) and unchecked (no), --repeat times each, alternating.
The root zone carries its own ZONEMD; the synthetic nu.nsec3 zone gets
one (SHA-384) computed by apexd itself on a first run (the digest of a
placeholder record is reported in the mismatch message).  Reported: the
load time apexd logs, the verification time it logs, and the ratio of
the two; medians.
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

LOADED = re.compile(r"loaded from .*: serial \d+, (\d+) records, ([0-9.]+) s")
VERIFIED = re.compile(r"ZONEMD verified \(([^,]+), serial \d+\) in ([0-9.]+) s")
MISMATCH = re.compile(r"its data gives ([0-9A-F]+)")


def check(tmp, origin, path, verify):
    conf = os.path.join(tmp, "zonemd-bench.conf")
    with open(conf, "w") as f:
        f.write("zone:\n    name: %s\n    file: %s\n    zonemd-verify: %s\n"
                % (origin, path, "yes" if verify else "no"))
    r = subprocess.run([os.path.join(B.BUILDDIR, "apexd"), "-t", "-c", conf, "-l",
                        "127.0.0.1@1"], capture_output=True, text=True, timeout=600)
    return r.stdout + r.stderr


def with_zonemd(tmp, origin, path):
    """path, or a copy of it with a ZONEMD record (SHA-384) when it has none."""
    with open(path, "rb") as f:
        if b"ZONEMD" in f.read():
            return path
    out = os.path.join(tmp, os.path.basename(path) + ".zonemd")
    if os.path.exists(out):
        return out
    serial = None
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) > 6 and fields[3] == "SOA":
                serial = fields[6]
                break
    for digest in ("0" * 96, None):
        if digest is None:
            digest = MISMATCH.search(check(tmp, origin, out, True)).group(1)
        with open(path) as f, open(out, "w") as g:
            g.write(f.read())
            g.write("%s 3600 IN ZONEMD %s 1 1 %s\n" % (origin, serial, digest))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zones", default="root,nu.nsec3")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = B.scratch_dir()
    rows = []
    for label, zones, _ in B.zone_sets(tmp):
        if label not in args.zones.split(","):
            continue
        origin, path = zones[0]
        path = with_zonemd(tmp, origin, path)
        loads = {True: [], False: []}
        verifies = []
        records = 0
        for _ in range(args.repeat):
            for verify in (True, False):
                out = check(tmp, origin, path, verify)
                m = LOADED.search(out)
                if m is None:
                    B.log(out)
                    sys.exit("%s: no load line" % label)
                records = int(m.group(1))
                loads[verify].append(float(m.group(2)))
                v = VERIFIED.search(out)
                if verify:
                    if v is None:
                        B.log(out)
                        sys.exit("%s: not verified" % label)
                    verifies.append(float(v.group(2)))
        load = B.median(loads[False])
        check_s = B.median(verifies)
        rows.append([label, str(records), "%.3f" % load, "%.3f" % B.median(loads[True]),
                     "%.3f" % check_s, "%.0f%%" % (100.0 * check_s / load)])
    print(B.table(["zone", "records", "load s (no check)", "load s (check on)",
                   "verify s", "verify / load"], rows))


if __name__ == "__main__":
    main()
