#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run every apex test on a fresh Debian 12 machine: install the build and
# test packages, build, `make check` (CMocka unit tests + system tests
# against NSD and Knot DNS), then the same in an AddressSanitizer +
# UndefinedBehaviorSanitizer build.  Exits non-zero on any failure.
#   sh contrib/test-all.sh
set -eu
cd "$(dirname "$0")/.."
SRCDIR=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# Install the packages.  A policy-rc.d that exits 101 keeps the nsd and
# knot packages from starting system services: the tests start their own.
added_policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null
	$SUDO chmod 755 /usr/sbin/policy-rc.d
	added_policy=yes
fi
$SUDO apt-get update
# --no-install-recommends keeps the install small, so every package used is
# named: libclang-rt-14-dev (libFuzzer and clang's sanitizer runtimes) is
# only recommended by clang's.
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
	build-essential autoconf automake libtool pkg-config \
	libuv1-dev libldns-dev libjemalloc-dev libcap-dev libcmocka-dev libssl-dev \
	libfstrm-dev libprotobuf-c-dev protobuf-c-compiler libxdp-dev libbpf-dev iproute2 \
	python3-dnspython python3-pytest ldnsutils knot-dnsutils dnsperf \
	nsd knot bind9 bind9-utils clang libclang-rt-14-dev clang-format prometheus \
	fstrm-bin bind9-dnsutils dnsdist xz-utils debhelper dpkg-dev lintian debootstrap git openssl valgrind
[ -z "$added_policy" ] || $SUDO rm -f /usr/sbin/policy-rc.d

# Show the logs of the tests that failed, then fail.
failed() {
	echo "=== $1: make check failed" >&2
	for trs in $(find tests -name '*.trs' 2>/dev/null); do
		log=${trs%.trs}.log
		if grep -q ':test-result: \(FAIL\|ERROR\)' "$trs"; then
			echo "=== $log" >&2
			tail -n 200 "$log" >&2
		fi
	done
	exit 1
}

echo "=== build and test"
autoreconf -fi
./configure
make -j"$JOBS"
# APEX_PERF_REQUIRE: the instruction guard (tests/perf/run.sh) fails rather
# than skips without valgrind or in a build unlike its baseline's; the
# sanitizer build below skips it (its counts mean nothing).
APEX_PERF_REQUIRE=1 make -j"$JOBS" check || failed "build"
tail -n 3 tests/system/run.sh.log

# Everything at once for five minutes: apexd as a secondary of Knot DNS for
# the 1M-record nu. zone (APEX_ZONEDIR or APEX_NU_ZONE, as for the
# benchmarks; without it the soak generates and signs one, about a
# minute more) and the root zone, under load, IXFRs, reloads, reconfigs,
# scrapes, dnstap and vanishing TCP clients (doc/reliability.md).
echo "=== soak: 5 minutes"
contrib/bench/soak 300 || { echo "=== soak: failed" >&2; exit 1; }

# make install and the Debian package, installed as an operator would
# (needs root: the package is tried in a debootstrap chroot).
echo "=== make install and the Debian package"
$SUDO sh contrib/test-install.sh

# The sanitizer build gets its own copy of the tree (an in-tree build
# rules out a VPATH build of the same sources).
echo "=== AddressSanitizer + UBSan build and test"
rm -rf build-asan
mkdir build-asan
tar --exclude=./build-asan --exclude=./.git --exclude=./autom4te.cache -cf - . | tar -C build-asan -xf -
cd build-asan
make distclean >/dev/null 2>&1 || true
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_OPTIONS UBSAN_OPTIONS
./configure --without-jemalloc \
	CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -g -O1" \
	LDFLAGS="-fsanitize=address,undefined"
make -j"$JOBS"
# ASan keeps freed memory in quarantine, so resident size says nothing
# about leaks here (LeakSanitizer checks them); the RSS-after-reloads test
# runs in the normal build.
APEX_RELOAD_SKIP_RSS=1 APEX_START_TIMEOUT=300 make -j"$JOBS" check || failed "sanitizer build"
tail -n 3 tests/system/run.sh.log
# The concurrency tests (zone table, rwlock, reload under load with 4
# workers) under ThreadSanitizer.
echo "=== ThreadSanitizer build: concurrency tests"
cd "$SRCDIR"
sh contrib/tsan-reload.sh
# Each libFuzzer target (query answer path, zone loader, control
# protocol) for a bounded time from the committed seeds.
echo "=== fuzzing: ${FUZZ_SECONDS:-60} s per target"
cd "$SRCDIR"
FUZZ_SECONDS=${FUZZ_SECONDS:-60} make fuzz
echo "=== all tests passed (normal, ASan+UBSan and TSan builds, fuzzing)"
