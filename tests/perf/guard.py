#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The guard on the query path's instructions (doc/performance.md, "The
guard in make check").

  guard.py            count, compare with tests/perf/baseline.txt, fail
                      when a set costs more than 3% over it
  guard.py --update   count and rewrite tests/perf/baseline.txt

tests/perf/count_answers answers tests/perf/root.queries from
zones/root.zone through apex_worker_answer(), once with DO=0 and once
with DO=1, and the queries of a TLD of 20,000 delegations
(tests/perf/tld_zone.py writes them, the same on every machine), whose
referrals are written name by name rather than copied from precomputed
fragments as the root zone's are, with DO=0, and with DO=1 from the same
TLD signed with NSEC3 opt-out (its proofs, and the SHA-1 of the names
its NXDOMAIN answers hash), under valgrind
--tool=callgrind, counting only apex_perf_counted_pass() (the second
pass over the queries; loading and the warm-up pass are not counted).  Each set runs twice, and the two
totals must be equal: the count is a property of the code, not of the
machine or the moment.  The C library's string functions are pinned to
their baseline x86-64 versions (GLIBC_TUNABLES below), so the CPU does
not choose between them.

The counts depend on the compiler, its flags and the C library too: the
baseline names the build it was taken with, and another build skips
(exit 77), or fails when APEX_PERF_REQUIRE=1 (contrib/test-all.sh), as
does a missing valgrind.  A sanitizer build always skips: its counts
mean nothing.

Environment: APEX_SRCDIR (default this script's ../..), APEX_BUILDDIR
(where count_answers was built; default APEX_SRCDIR), APEX_PERF_REQUIRE.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

THRESHOLD = 0.03  # a set may cost this much more than the baseline
MIN_STORED = 0.1  # functions stored in the baseline: at least this many a query
SHOWN = 15  # rows of the per-function difference
# key, label, count_answers' flags, and the origin, zone and queries:
# in the source tree, or (generated) written by tests/perf/tld_zone.py
ROOT = (".", os.path.join("zones", "root.zone"), os.path.join("tests", "perf", "root.queries"),
        False)
TLD = ("tld.", "tld.zone", "tld.queries", True)
TLD_NSEC3 = ("tld.", "tld-nsec3.zone", "tld.queries", True)
SETS = [("do0", "DO=0", [], ROOT), ("do1", "DO=1", ["-D"], ROOT),
        ("tld0", "TLD, DO=0", [], TLD), ("tld1", "TLD with NSEC3, DO=1", ["-D"], TLD_NSEC3)]
# The SHA-1 of NSEC3 (lib/dns/sha1.c) is chosen by the CPU: the counts
# are only a property of the code with the portable one, which valgrind,
# not running SHA instructions, makes apex choose.
SHA_BY_CPU = "sha1_block_shani"
BASELINE = os.path.join("tests", "perf", "baseline.txt")
COUNTED = "apex_perf_counted_pass"
# Every feature above the x86-64 baseline that selects a variant of
# memcpy, memcmp and the like: off, so that every machine runs the SSE2
# versions whatever its CPU (the daemon itself is left to choose).
TUNABLES = "glibc.cpu.hwcaps=" + ",".join("-" + f for f in (
    "AVX", "AVX2", "AVX512F", "AVX512VL", "AVX512BW", "AVX512DQ", "ERMS", "FSRM",
    "SSSE3", "SSE4_1", "SSE4_2", "MOVBE", "BMI1", "BMI2", "LZCNT", "POPCNT",
    "AVX_Fast_Unaligned_Load", "Fast_Unaligned_Copy", "Fast_Unaligned_Load",
    "Prefer_ERMS", "Prefer_FSRM"))
SKIP, FAIL, ERROR = 77, 1, 99


def done(code, message):
    print(message)
    sys.exit(code)


def function_key(name):
    """callgrind_annotate's "file:function [object]" as the function alone,
    without the suffixes of the compiler's clones and symbol versions
    (apex_worker_answer.constprop.0.isra.0, memcpy@GLIBC_2.2.5), which
    change with unrelated code; inlined code counts in its caller."""
    name = re.sub(r"\s+\[[^\]]*\]$", "", name.strip())
    if ":" in name:
        name = name.split(":", 1)[1]
    name = re.sub(r"@.*$", "", name)
    return re.sub(r"(\.(constprop|isra|part|cold|lto_priv|clone)\.\d+)+$", "", name)


def annotate(out_file):
    """(total Ir, {function: Ir}) of a callgrind profile."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no",
                           out_file],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          check=True).stdout
    total, funcs = None, {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+([^=].*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        if m.group(2).strip() == "PROGRAM TOTALS":
            total = ir
        else:
            key = function_key(m.group(2))
            funcs[key] = funcs.get(key, 0) + ir
    if total is None:
        done(ERROR, "callgrind_annotate printed no total for %s:\n%s" % (out_file, text))
    return total, funcs


def inputs(srcdir, tmp, spec):
    """(origin, zone file, query file) of a set."""
    origin, zone, queries, generated = spec
    if not generated:
        return origin, os.path.join(srcdir, zone), os.path.join(srcdir, queries)
    if not os.path.exists(os.path.join(tmp, zone)):
        subprocess.run(["/usr/bin/python3", os.path.join(srcdir, "tests", "perf", "tld_zone.py"),
                        tmp], check=True)
    return origin, os.path.join(tmp, zone), os.path.join(tmp, queries)


def count(prog, srcdir, flags, spec, tmp, tag):
    """One run of count_answers under callgrind: (queries, Ir, {function: Ir})."""
    out_file = os.path.join(tmp, "callgrind.%s" % tag)
    origin, zone, queries = inputs(srcdir, tmp, spec)
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out_file,
           "--toggle-collect=" + COUNTED, prog] + flags + [
           "-q", queries, "-z", origin + "=" + zone]
    env = dict(os.environ, GLIBC_TUNABLES=TUNABLES)
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env)
    m = re.search(r"^(\d+) queries, .*$", res.stdout, re.M)
    if res.returncode != 0 or m is None:
        done(ERROR, "%s failed (%d):\n%s" % (" ".join(cmd), res.returncode, res.stdout))
    total, funcs = annotate(out_file)
    if SHA_BY_CPU in funcs:
        done(ERROR, "%s ran %s: the SHA-1 chosen by this CPU, whose count is not the "
             "portable code's (lib/dns/sha1.c)" % (" ".join(cmd), SHA_BY_CPU))
    return int(m.group(1)), total, funcs, m.group(0)


def measure(prog, srcdir):
    """{set: (queries, Ir, {function: Ir})}, each set counted twice."""
    result = {}
    with tempfile.TemporaryDirectory(prefix="apex-perf.") as tmp:
        for key, label, flags, spec in SETS:
            first = count(prog, srcdir, flags, spec, tmp, key + ".1")
            second = count(prog, srcdir, flags, spec, tmp, key + ".2")
            print(first[3])
            if first[1] != second[1]:
                done(FAIL, "%s: two runs counted %d and %d instructions: the count is not "
                     "deterministic (something time- or address-dependent runs in %s)"
                     % (label, first[1], second[1], COUNTED))
            result[key] = first[:3]
    return result


def read_baseline(path):
    """(build line, {set: (queries, Ir, {function: Ir}, other Ir)})."""
    build, sets = None, {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            word, _, rest = line.partition(" ")
            if word == "build":
                build = rest
                continue
            field, _, value = rest.partition(" ")
            queries, total, funcs, other = sets.get(word, (0, 0, {}, 0))
            if field == "queries":
                queries = int(value)
            elif field == "total":
                total = int(value)
            elif field == "other":
                other = int(value)
            elif field == "fn":
                ir, _, name = value.partition(" ")
                funcs[name] = int(ir)
            sets[word] = (queries, total, funcs, other)
    return build, sets


def write_baseline(path, build, result):
    lines = ["# The query path's instructions (callgrind's Ir) for tests/perf/root.queries",
             "# against zones/root.zone through apex_worker_answer(), DO=0 and DO=1, and",
             "# for tests/perf/tld_zone.py's TLD and queries, DO=0 (tld0), and its TLD",
             "# signed with NSEC3, DO=1 (tld1): the total of a pass and its functions' own",
             "# cost (self Ir), every function of at least %.1f instructions a query;" % MIN_STORED,
             "# the rest in \"other\".  Written by `make perf-baseline`",
             "# (tests/perf/guard.py --update), never by hand; the commit that changes it",
             "# says why (doc/performance.md).",
             "build " + build]
    for key, _, _, _ in SETS:
        queries, total, funcs = result[key]
        top = sorted(((name, ir) for name, ir in funcs.items() if ir >= MIN_STORED * queries),
                     key=lambda kv: (-kv[1], kv[0]))
        lines += ["%s queries %d" % (key, queries), "%s total %d" % (key, total)]
        lines += ["%s fn %d %s" % (key, ir, name) for name, ir in top]
        lines.append("%s other %d" % (key, total - sum(ir for _, ir in top)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def difference(label, base, now):
    """Print the figures and the per-function difference; returns the change."""
    b_queries, b_total, b_funcs, b_other = base
    queries, total, funcs = now
    per_b, per_n = b_total / b_queries, total / queries
    change = per_n / per_b - 1
    print("%s: %.1f instructions per query, baseline %.1f: %+.2f%% (limit %+.0f%%)"
          % (label, per_n, per_b, 100 * change, 100 * THRESHOLD))
    rows = [(name, b_funcs.get(name), funcs.get(name, 0) / queries)
            for name in set(b_funcs) | set(funcs) if name in b_funcs or
            funcs[name] / queries >= 1]
    now_other = sum(ir for name, ir in funcs.items() if name not in b_funcs)
    shown = sorted(rows, key=lambda r: (-abs(r[2] - (r[1] or 0) / b_queries), -r[2], r[0]))
    shown = shown[:SHOWN]
    print("  %-40s %10s %10s %9s" % ("function (self, per query)", "baseline", "now", "change"))
    for name, b_ir, n in shown:
        b = "-" if b_ir is None else "%.1f" % (b_ir / b_queries)
        print("  %-40s %10s %10.1f %+9.1f" % (name[:40], b, n, n - (b_ir or 0) / b_queries))
    print("  %-40s %10.1f %10.1f %+9.1f" % (
        "(all functions not in the baseline)", b_other / b_queries, now_other / queries,
        now_other / queries - b_other / b_queries))
    return change


def check_tools(required):
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            done(FAIL if required else SKIP,
                 "%s is not installed (Debian package valgrind): the instruction guard %s"
                 % (tool, "cannot run" if required else "is skipped"))


def main():
    update = sys.argv[1:] == ["--update"]
    if sys.argv[1:] and not update:
        done(ERROR, __doc__)
    srcdir = os.environ.get("APEX_SRCDIR") or os.path.join(os.path.dirname(__file__), "..", "..")
    builddir = os.environ.get("APEX_BUILDDIR") or srcdir
    required = os.environ.get("APEX_PERF_REQUIRE") == "1"
    prog = os.path.join(builddir, "tests", "perf", "count_answers")
    if not os.access(prog, os.X_OK):
        done(ERROR, "%s is not built (make tests/perf/count_answers)" % prog)
    res = subprocess.run([prog, "-b"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    build = res.stdout.strip()
    if res.returncode != 0:
        done(ERROR, "%s -b failed (%d):\n%s" % (prog, res.returncode, build))
    if build == "instrumented":
        done(SKIP, "a sanitizer build: instructions are not counted here")
    check_tools(required)
    baseline = os.path.join(srcdir, BASELINE)
    if update:
        write_baseline(baseline, build, measure(prog, srcdir))
        done(0, "%s written for %s" % (baseline, build))
    base_build, base = read_baseline(baseline)
    if base_build != build:
        done(FAIL if required else SKIP,
             "the baseline was counted with %s; this build is %s: its counts are not "
             "comparable" % (base_build, build))
    missing = [label for key, label, _, _ in SETS if base.get(key, (0,))[0] == 0]
    if missing:
        done(ERROR, "%s has no figures for %s: `make perf-baseline`" % (baseline,
                                                                      ", ".join(missing)))
    result = measure(prog, srcdir)
    over = []
    for key, label, _, _ in SETS:
        change = difference(label, base[key], result[key])
        if change > THRESHOLD:
            over.append(label)
        elif change < -THRESHOLD:
            print("  %s is cheaper by more than %.0f%%: `make perf-baseline` keeps the gain"
                  % (label, 100 * THRESHOLD))
    if over:
        done(FAIL, "FAIL: %s over the baseline by more than %.0f%%.  If the cost is meant, "
             "update the baseline in the same commit (`make perf-baseline`) and say why "
             "in its message." % (" and ".join(over), 100 * THRESHOLD))
    done(0, "PASS: within %.0f%% of the baseline" % (100 * THRESHOLD))


if __name__ == "__main__":
    main()
