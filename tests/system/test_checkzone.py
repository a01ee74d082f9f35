# SPDX-License-Identifier: BSD-3-Clause
"""apex-checkzone: a zone file loaded and checked as apexd would, then its
DNSSEC records checked against each other.

Exit 0 when apexd would serve the zone and nothing is wrong, 2 when it
would serve it with warnings (missing glue, signatures expired or not yet
valid or missing, NSEC or NSEC3 chain breaks), 1 when it would not (a
syntax error, CNAME beside other data, data outside the zone, a ZONEMD
digest mismatch: each with FILE:LINE or both digests), 64 on bad usage.
The bundled zones are real: the root zone and fj. are clean at a time
inside their signatures' validity, and their signatures have expired by
now.
"""

import os
import subprocess

import servers
from conftest import zone as zone_path

ROOT_VALID = "20241015000000"  # inside the root zone's RRSIG validity
FJ_VALID = "20241013000000"


def checkzone(*args):
    path = os.path.join(os.path.dirname(servers.apexd_path()), "apex-checkzone")
    return subprocess.run([path] + list(args), capture_output=True, text=True, timeout=300)


def edited(tmp_path, name, source, edit):
    with open(zone_path(source)) as f:
        lines = f.read().splitlines()
    lines = edit(lines)
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def test_clean_zones_at_a_valid_time():
    r = checkzone("-t", ROOT_VALID, ".", zone_path("root.zone"))
    assert r.returncode == 0, r.stderr
    assert "apexd would serve it; 0 warning(s), 0 DNSSEC finding(s)" in r.stdout, r.stdout
    assert "ZONEMD verified (SHA-384, serial 2024101100)" in r.stderr
    # an NSEC3 zone with opt-out
    r = checkzone("-q", "--time", FJ_VALID, "fj.", zone_path("fj.zone"))
    assert r.returncode == 2 and "0 DNSSEC finding(s)" in r.stdout, r.stdout + r.stderr
    assert "missing glue: no address for the name server ssswztcfjilq.www.smc.ac.fj." in r.stderr
    r = checkzone("example.", zone_path("example.nsec.zone"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_signatures_by_time():
    r = checkzone(".", zone_path("root.zone"))
    assert r.returncode == 2, r.stderr
    assert ". SOA: RRSIG (key tag 61050) expired at 20241024050000" in r.stderr, r.stderr
    assert "RRSIGs expired in all (the first 10 above)" in r.stderr
    r = checkzone("-t", "1704067200", "example.", zone_path("example.nsec3.zone"))  # 2024-01-01
    assert r.returncode == 2 and "not valid before 20250101000000" in r.stderr, r.stderr


def test_what_apexd_would_not_serve(tmp_path):
    cases = [
        ("syntax.zone", lambda ls: ls[:20] + ["broken A not-an-address"] + ls[20:], ":21:"),
        ("cname.zone", lambda ls: ls + ["www CNAME elsewhere.example.", "www TXT \"x\""],
         "CNAME and other data"),
        ("outside.zone", lambda ls: ls + ["name.other. A 192.0.2.1"], "outside the zone"),
    ]
    for name, edit, text in cases:
        path = edited(tmp_path, name, "example.zone", edit)
        r = checkzone("example.", path)
        assert r.returncode == 1, (name, r.stderr)
        assert text in r.stderr and "apexd would not serve it" in r.stderr, (name, r.stderr)
        if text.startswith(":"):
            assert path + text in r.stderr, r.stderr
    tampered = edited(tmp_path, "root.zone", "root.zone",
                      lambda ls: [l.replace("\t198.41.0.4", "\t198.41.0.5") for l in ls])
    r = checkzone("-t", ROOT_VALID, ".", tampered)
    assert r.returncode == 1 and "ZONEMD digest mismatch (SHA-384)" in r.stderr, r.stderr
    r = checkzone("-t", ROOT_VALID, "--no-zonemd", ".", tampered)
    assert r.returncode == 0, r.stderr


def test_dnssec_breaks(tmp_path):
    # an NSEC record taken out: a name without NSEC, and its predecessor's
    # next name is no longer the next NSEC owner
    path = edited(tmp_path, "nonsec.zone", "example.nsec.zone",
                  lambda ls: [l for l in ls if not (l.startswith("_sip._tcp.example.")
                                                    and " NSEC\t" in l)])
    r = checkzone("example.", path)
    assert r.returncode == 2, r.stderr
    assert "_sip._tcp.example.: no NSEC" in r.stderr, r.stderr
    # a signature taken out
    path = edited(tmp_path, "unsigned.zone", "example.nsec.zone",
                  lambda ls: [l for l in ls if "RRSIG\tMX " not in l])
    r = checkzone("example.", path)
    assert r.returncode == 2 and "example. MX: no RRSIG" in r.stderr, r.stderr
    # an NSEC3 record taken out of fj.'s chain
    path = edited(tmp_path, "fj.zone", "fj.zone",
                  lambda ls: [l for l in ls
                              if not l.startswith("001c7kiucojftmkmqeuspo9bc9ojiu6b.fj.")])
    r = checkzone("-t", FJ_VALID, "fj.", path)
    assert r.returncode == 2, r.stderr
    assert ("0007k6pvuvp58h69r6elj7jr139nfadr.fj. NSEC3: the next hashed owner is not the "
            "next hash of the chain") in r.stderr, r.stderr


def test_usage():
    assert checkzone().returncode == 64
    assert checkzone("-t", "yesterday", ".", zone_path("root.zone")).returncode == 64
    assert checkzone("bad..origin", zone_path("root.zone")).returncode == 64
    r = checkzone("example.", "/nonexistent/zone")
    assert r.returncode == 1 and "/nonexistent/zone" in r.stderr, r.stderr
