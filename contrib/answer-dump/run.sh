#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Dump every answer of the query engine over the test zones into OUTDIR,
# one file per zone set, so that two builds can be compared byte for byte:
#   contrib/answer-dump/run.sh BUILDDIR OUTDIR [MAXNAMES]
#   diff -r OUTDIR-before OUTDIR-after
# BUILDDIR holds contrib/answer-dump/answer_dump (make builds it).  The
# zones are those of the system tests, and those in ../shared/zones when
# that directory is there (the extra TLDs; the 1M-record nu. zones with
# APEX_DUMP_LARGE=1).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$1/contrib/answer-dump/answer_dump
out=$2
max=${3:-3000}
mkdir -p "$out"
z=$src/zones
dump() {  # set-name ORIGIN=FILE...
	name=$1
	shift
	args=
	for a in "$@"; do args="$args -z $a"; done
	# shellcheck disable=SC2086
	"$bin" -n "$max" $args > "$out/$name.txt"
	tail -n 1 "$out/$name.txt" | sed "s/^#/$name:/"
}
dump tlds .="$z/root.zone" fj.="$z/fj.zone" sl.="$z/sl.zone"
dump example example.="$z/example.zone"
dump example-nsec example.="$z/example.nsec.zone"
dump example-nsec3 example.="$z/example.nsec3.zone"
shared=$src/../shared/zones
if [ -d "$shared/extra" ]; then
	for f in "$shared"/extra/*.zone; do
		b=$(basename "$f" .zone)
		dump "extra-$b" "$b.=$f"
	done
fi
if [ "${APEX_DUMP_LARGE:-0}" = 1 ] && [ -f "$shared/nu.nsec3.synthetic.zone.xz" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for v in nsec nsec3; do
		xz -dc "$shared/nu.$v.synthetic.zone.xz" > "$tmp/nu.zone"
		dump "nu-$v" nu.="$tmp/nu.zone"
	done
fi
