#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build apex's libFuzzer targets with clang (-fsanitize=fuzzer,address,
# undefined) in a build directory of their own, and run them.
#
#   tests/fuzz/run.sh                 build, then run every target
#   tests/fuzz/run.sh build           build only
#   tests/fuzz/run.sh run TARGET...   run these targets (already built)
#   tests/fuzz/run.sh repro TARGET FILE...
#                                     run TARGET once on each FILE (a crash)
#   tests/fuzz/run.sh coverage TARGET [DIR...]
#                                     line coverage of lib/ (llvm-cov) by the
#                                     inputs in DIR (default: the last run's
#                                     corpus, else the seeds)
#
# Environment:
#   FUZZ_SECONDS   time per target in seconds (default 60)
#   FUZZ_BUILDDIR  build directory (default build-fuzz in the source tree)
#   FUZZ_CC        the compiler (default clang)
#   FUZZ_FLAGS     extra libFuzzer flags, e.g. "-jobs=2 -workers=2"
#   APEX_SRCDIR    the source tree (default: this script's ../..)
#
# Each run starts from a scratch copy of the committed seed corpus
# (tests/fuzz/corpus/TARGET), so the committed corpus only changes on
# purpose.  Exits non-zero if any target found a crash, a leak, a
# timeout or a sanitizer report; the input is saved in
# FUZZ_BUILDDIR/artifacts/TARGET/.
set -eu

SRCDIR=${APEX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
APEX_SRCDIR=$SRCDIR
export APEX_SRCDIR
BUILD=${FUZZ_BUILDDIR:-$SRCDIR/build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
CC=${FUZZ_CC:-clang}
TARGETS="fuzz_query fuzz_zone_load fuzz_ctl fuzz_xfr_in fuzz_tsig fuzz_notify fuzz_xfr_request fuzz_ixfr_version fuzz_http fuzz_xdp_frame fuzz_tls_stream fuzz_proxy_v2 fuzz_catalog"
FUZZ_DIR=$SRCDIR/tests/fuzz


SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
# _GNU_SOURCE, which the other builds have from config.h (configure's
# AC_USE_SYSTEM_EXTENSIONS; not included here): empty, as the files that
# define it themselves do
CFLAGS="-std=gnu11 -D_GNU_SOURCE= -g -O1 -fno-omit-frame-pointer $SAN -I$SRCDIR/lib $(pkg-config --cflags ldns)"
LIBS="$(pkg-config --libs ldns libssl libcrypto) -lpthread -lm"

build() {
	command -v "$CC" >/dev/null 2>&1 || {
		echo "fuzz: $CC not found (install the Debian package clang)" >&2
		exit 2
	}
	mkdir -p "$BUILD/obj"
	objs=
	# All of lib/, as libapex: the targets link what they use.
	for src in "$SRCDIR"/lib/*/*.c; do
		rel=${src#"$SRCDIR"/lib/}
		# protoc-c's code (an in-tree build's), for the unit tests only
		case $rel in *.pb-c.c) continue ;; esac
		# the XDP program's loader and sockets need the kernel (libbpf,
		# libxdp); the frame reader alone is fuzzed
		case $rel in xdp/program.c | xdp/xsk_socket.c | xdp/filter_object.c) continue ;; esac
		obj=$BUILD/obj/$(echo "$rel" | tr / _ | sed 's/\.c$/.o/')
		# Rebuild when the source or any header of lib/ is newer.
		if [ ! -f "$obj" ] || [ -n "$(find "$src" "$SRCDIR"/lib -name '*.[ch]' -newer "$obj" | head -n 1)" ]; then
			echo "  CC       lib/$rel"
			# shellcheck disable=SC2086
			$CC $CFLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
		fi
		objs="$objs $obj"
	done
	for t in $TARGETS; do
		echo "  CCLD     $t"
		# shellcheck disable=SC2086
		$CC $CFLAGS -fsanitize=fuzzer -I"$FUZZ_DIR" $(target_sources "$t") "$FUZZ_DIR/$t.c" \
			$objs $LIBS -o "$BUILD/$t"
	done
}

# What a target compiles in besides lib/: fuzz_query answers through the
# daemon's worker (src/apexd/serve/worker.c); fuzz_tls_stream too, with a
# worker's TLS connection glue (src/apexd/serve/tcp_tls.c).
target_sources() {
	case $1 in
	fuzz_query) echo "-I$SRCDIR/src/apexd $SRCDIR/src/apexd/serve/worker.c" ;;
	fuzz_tls_stream)
		echo "-I$SRCDIR/src/apexd $SRCDIR/src/apexd/serve/worker.c $SRCDIR/src/apexd/serve/tcp_tls.c"
		;;
	esac
}

# Flags of each target: a dictionary and a maximum input size.
target_flags() {
	case $1 in
	fuzz_query) echo "-max_len=4096 -dict=$FUZZ_DIR/query.dict" ;;
	fuzz_zone_load) echo "-max_len=32768 -dict=$FUZZ_DIR/zone.dict" ;;
	fuzz_ctl) echo "-max_len=8192" ;;
	fuzz_xfr_in) echo "-max_len=16384" ;;
	fuzz_tsig) echo "-max_len=4096" ;;
	fuzz_notify) echo "-max_len=4096" ;;
	fuzz_xfr_request) echo "-max_len=4096" ;;
	fuzz_ixfr_version) echo "-max_len=2048" ;;
	fuzz_http) echo "-max_len=9000" ;;
	fuzz_xdp_frame) echo "-max_len=2048" ;;
	fuzz_tls_stream) echo "-max_len=70000 -dict=$FUZZ_DIR/query.dict" ;;
	fuzz_proxy_v2) echo "-max_len=1024" ;;
	fuzz_catalog) echo "-max_len=8192 -dict=$FUZZ_DIR/catalog.dict" ;;
	esac
}

# The seed corpus directory of a target, under tests/fuzz/corpus/.
corpus_of() {
	case $1 in
	fuzz_query) echo query ;;
	fuzz_zone_load) echo zone ;;
	fuzz_ctl) echo ctl ;;
	fuzz_xfr_in) echo xfr_in ;;
	fuzz_tsig) echo tsig ;;
	fuzz_notify) echo notify ;;
	fuzz_xfr_request) echo xfr_request ;;
	fuzz_ixfr_version) echo ixfr_version ;;
	fuzz_http) echo http ;;
	fuzz_xdp_frame) echo xdp_frame ;;
	fuzz_tls_stream) echo tls_stream ;;
	fuzz_proxy_v2) echo proxy_v2 ;;
	fuzz_catalog) echo catalog ;;
	esac
}

# Run one target for SECONDS_EACH; prints its summary, returns libFuzzer's status.
run_one() {
	t=$1
	[ -x "$BUILD/$t" ] || { echo "fuzz: $BUILD/$t not built" >&2; return 2; }
	work=$BUILD/corpus/$t
	art=$BUILD/artifacts/$t
	rm -rf "$work"
	mkdir -p "$work" "$art"
	cp "$FUZZ_DIR/corpus/$(corpus_of "$t")"/* "$work"/
	log=$BUILD/$t.log
	echo "== $t: ${SECONDS_EACH}s from $(ls "$work" | wc -l) seeds (log: $log)"
	status=0
	# shellcheck disable=SC2046,SC2086
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		"$BUILD/$t" $(target_flags "$t") -max_total_time="$SECONDS_EACH" -timeout=10 \
		-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$art/" \
		${FUZZ_FLAGS:-} "$work" >"$log" 2>&1 || status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	ft=$(grep -o 'ft: [0-9]*' "$log" | tail -n 1)
	echo "   executions: ${execs:-?}  ${cov:-cov: ?}  ${ft:-ft: ?}  corpus: $(ls "$work" | wc -l)"
	if [ "$status" -ne 0 ]; then
		echo "== $t FAILED (status $status); input(s) in $art:" >&2
		ls "$art" >&2
		grep -A 30 -m 1 'ERROR: \|runtime error\|apex fuzz oracle\|==ERROR' "$log" >&2 || tail -n 40 "$log" >&2
	fi
	return "$status"
}

# Source-based coverage of lib/ by a corpus (no sanitizers: faster).
coverage() {
	t=$1
	shift
	[ $# -gt 0 ] || {
		if [ -d "$BUILD/corpus/$t" ]; then
			set -- "$BUILD/corpus/$t"
		else
			set -- "$FUZZ_DIR/corpus/$(corpus_of "$t")"
		fi
	}
	cov=$BUILD/coverage
	mkdir -p "$cov"
	# lib/ as build() takes it (no generated code, no kernel XDP parts)
	srcs=
	for src in "$SRCDIR"/lib/*/*.c; do
		case ${src#"$SRCDIR"/lib/} in
		*.pb-c.c | xdp/program.c | xdp/xsk_socket.c | xdp/filter_object.c) continue ;;
		esac
		srcs="$srcs $src"
	done
	# shellcheck disable=SC2086
	$CC -std=gnu11 -g -O1 -fprofile-instr-generate -fcoverage-mapping -fsanitize=fuzzer \
		-I"$SRCDIR/lib" -I"$FUZZ_DIR" $(pkg-config --cflags ldns) $(target_sources "$t") \
		"$FUZZ_DIR/$t.c" $srcs $LIBS -o "$cov/$t"
	rm -f "$cov/$t".profraw
	LLVM_PROFILE_FILE="$cov/$t.profraw" "$cov/$t" -runs=0 "$@" >"$cov/$t.log" 2>&1
	llvm-profdata merge -sparse "$cov/$t.profraw" -o "$cov/$t.profdata"
	# shellcheck disable=SC2086
	llvm-cov report "$cov/$t" -instr-profile="$cov/$t.profdata" $srcs
	echo "line by line: llvm-cov show $cov/$t -instr-profile=$cov/$t.profdata FILE"
}

cmd=${1:-all}
[ $# -gt 0 ] && shift
case $cmd in
build)
	build
	;;
run)
	[ $# -gt 0 ] || set -- $TARGETS
	failed=0
	for t in "$@"; do
		run_one "$t" || failed=1
	done
	exit $failed
	;;
coverage)
	coverage "$@"
	;;
repro)
	t=$1
	shift
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
		"$BUILD/$t" $(target_flags "$t") "$@"
	;;
all)
	build
	failed=0
	for t in $TARGETS; do
		run_one "$t" || failed=1
	done
	exit $failed
	;;
*)
	echo "usage: $0 [build | run TARGET... | repro TARGET FILE... | coverage TARGET [DIR...]]" >&2
	exit 2
	;;
esac
