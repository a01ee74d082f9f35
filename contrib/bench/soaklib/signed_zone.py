# SPDX-License-Identifier: BSD-3-Clause
"""The signed nu. zone the soak serves: the synthetic 1M-record
nu.nsec3 zone of the benchmarks when it is there (APEX_ZONEDIR or
APEX_NU_ZONE, see benchlib.py), else one made in the soak's directory,
so that a clean clone can run the soak on its own.

The zone made is the synthetic TLD of contrib/bench/scale.py under nu.
(fixed seed: the same names, NS sets, glue and DS on every machine;
every delegation two NS, one in five a DS, one in 33 its own name
servers with glue), signed by ldns-signzone with NSEC3 as the synthetic
zone is (SHA-1, no salt, 0 iterations, no opt-out) under an
ECDSAP256SHA256 KSK and ZSK made by ldns-keygen for the run.  The
signatures differ from run to run (ECDSA and the keys are random); what
the soak asks and checks does not depend on them.  Made and signed, 1M
records take about 40 s and 600 MB of ldns-signzone on a 2-core machine.
"""

import os
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)
import benchlib as B  # noqa: E402
import scale  # noqa: E402

ORIGIN = "nu."
SEED = 39
ALGORITHM = "ECDSAP256SHA256"
# Each delegation of scale.py's TLD has 2.26 records unsigned; signing
# adds its NSEC3 and the NSEC3's RRSIG, and an RRSIG for its DS one time
# in five (glue below a cut gets neither): 4.46 records signed.
SIGNED_PER_UNSIGNED = 4.46 / scale.RECORDS_PER_DELEGATION
TIMEOUT = 1800.0  # for ldns-signzone, on the slowest machine


def records_in(path):
    """The records of a zone file with one record a line (as
    ldns-signzone and the synthetic zones write them)."""
    n = 0
    with open(path, "rb") as f:
        for line in f:
            if line.strip() and line[:1] not in b";$":
                n += 1
    return n


def keygen(keydir, ksk):
    """A new ECDSAP256SHA256 key of ORIGIN in keydir; its base name."""
    cmd = ["ldns-keygen", "-a", ALGORITHM, "-r", "/dev/urandom"] + (["-k"] if ksk else []) + \
        [ORIGIN]
    r = subprocess.run(cmd, cwd=keydir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    base = r.stdout.decode(errors="replace").strip()
    if r.returncode != 0 or not os.path.exists(os.path.join(keydir, base + ".private")):
        raise RuntimeError("ldns-keygen: %s" % base)
    return os.path.join(keydir, base)


def generate(tmp, records):
    """The signed TLD of about `records` records made in tmp: its path."""
    unsigned = os.path.join(tmp, "nu.generated.unsigned")
    signed = os.path.join(tmp, "nu.generated.zone")
    keydir = os.path.join(tmp, "nu.keys")
    os.makedirs(keydir, exist_ok=True)
    scale.generate(unsigned, int(records / SIGNED_PER_UNSIGNED), SEED, ORIGIN)
    keys = [keygen(keydir, True), keygen(keydir, False)]
    # valid from a year ago for ten years: whatever the date of the run
    now = int(time.time())
    day = 86400
    cmd = ["ldns-signzone", "-n", "-a", "1", "-t", "0",
           "-i", str(now - 365 * day), "-e", str(now + 3650 * day),
           "-o", ORIGIN, "-f", signed + ".tmp", unsigned] + keys
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    os.unlink(unsigned)
    if r.returncode != 0:
        raise RuntimeError("ldns-signzone: %s" % r.stdout.decode(errors="replace").strip())
    os.rename(signed + ".tmp", signed)
    return signed


def nu_zone(tmp, force_generate=False, records=1000000):
    """(path, what it is) of the signed nu. zone: the synthetic zone
    decompressed into tmp if it is there and not force_generate, else one
    generated into tmp."""
    xz = os.path.join(B.ZONEDIR, "nu.nsec3.synthetic.zone.xz")
    if not force_generate and (os.environ.get("APEX_NU_ZONE") or os.path.exists(xz)):
        path = B.synthetic_zone(tmp, "nu.nsec3")
        if path is not None:
            return path, "%s: %d records, NSEC3" % (
                os.path.basename(os.environ.get("APEX_NU_ZONE") or xz), records_in(path))
    why = "asked for" if force_generate else "no %s" % os.path.basename(xz)
    B.log("soak: %s: generating a signed TLD of about %d records under %s" % (
        why, records, ORIGIN))
    t0 = time.monotonic()
    path = generate(tmp, records)
    seconds = time.monotonic() - t0
    n = records_in(path)
    B.log("soak: %d records generated and signed in %.0f s" % (n, seconds))
    return path, ("generated (%s): %d records, scale.py's TLD (seed %d), NSEC3 "
                  "(1 0 0 -) with %s by ldns-signzone, in %.0f s" % (
                      why, n, SEED, ALGORITHM, seconds))
