#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The concurrency tests under ThreadSanitizer: build apexd, apexctl and the
# concurrent unit tests (zone table pick-up while publishing, the rwlock,
# dnstap's ring, a transfer's feed of records) with -fsanitize=thread in a copy of the tree (build-tsan/),
# run those unit tests, then tests/system/test_reload.py against apexd with 4
# workers, and the metrics endpoint's, dnstap's and TLS's system tests (a
# report aborts apexd: halt_on_error), and fail on any ThreadSanitizer report.
#   sh contrib/tsan-reload.sh [extra pytest arguments]
# Environment: APEX_RELOAD_WORKERS (default 4), APEX_RELOAD_QPS (default 1500:
# a TSan build is several times slower), JOBS (default: the CPU count).
set -eu
cd "$(dirname "$0")/.."
SRCDIR=$(pwd)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
BUILD=$SRCDIR/build-tsan

# A copy of the tree: an in-tree build of the sources rules out a VPATH one.
rm -rf "$BUILD"
mkdir "$BUILD"
tar --exclude=./build-tsan --exclude=./build-asan --exclude=./build-fuzz --exclude=./.git \
	--exclude=./autom4te.cache -cf - . | tar -C "$BUILD" -xf -
cd "$BUILD"
make distclean >/dev/null 2>&1 || true
autoreconf -fi
# jemalloc off: ThreadSanitizer brings its own allocator
./configure --without-jemalloc \
	CFLAGS="-fsanitize=thread -fno-omit-frame-pointer -g -O1" \
	LDFLAGS="-fsanitize=thread" >/dev/null
make -j"$JOBS" apexd apexctl tests/unit/test_zoneset tests/unit/test_rwlock tests/unit/test_dnstap \
	tests/unit/test_zone_load tests/unit/test_tls tests/unit/test_wire_feed tests/unit/test_verifier \
	tests/unit/test_page_pool tests/unit/test_zone_copy_batch tests/unit/test_ixfr_equivalence

# contrib/tsan.supp: what libuv's raw close() hides from TSan
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$SRCDIR/contrib/tsan.supp"
export TSAN_OPTIONS
# test_zone_load: a zone loaded and built with every step in parts on two
# threads (test_build_in_parts); test_tls: handshakes on several threads
# while another rotates the session tickets' keys; test_wire_feed: a
# transfer's records handed to the builder's thread in batches;
# test_verifier: a verifier's listener and feed threads beside its wait;
# test_page_pool: pages freed on two threads while a third takes them;
# test_zone_copy_batch: copies added on four threads, batches settled;
# test_ixfr_equivalence: derivations that merge the name index on one
# thread while another copies the hash table
for t in tests/unit/test_zoneset tests/unit/test_rwlock tests/unit/test_dnstap tests/unit/test_zone_load \
	tests/unit/test_tls tests/unit/test_wire_feed tests/unit/test_verifier tests/unit/test_page_pool \
	tests/unit/test_zone_copy_batch tests/unit/test_ixfr_equivalence; do
	echo "tsan: $t"
	./$t
done

LOGS=$BUILD/tsan-logs
rm -rf "$LOGS"
mkdir -p "$LOGS"
APEX_RELOAD_WORKERS=${APEX_RELOAD_WORKERS:-4}
APEX_RELOAD_QPS=${APEX_RELOAD_QPS:-1500}
APEX_RELOAD_SKIP_RSS=1   # the sanitizer's allocator keeps freed memory
APEX_RELOAD_LOG_DIR=$LOGS
APEX_START_TIMEOUT=300
APEX_BUILDDIR=$BUILD
APEX_SRCDIR=$BUILD
PYTHONDONTWRITEBYTECODE=1
export APEX_RELOAD_WORKERS APEX_RELOAD_QPS APEX_RELOAD_SKIP_RSS APEX_RELOAD_LOG_DIR \
	APEX_START_TIMEOUT APEX_BUILDDIR APEX_SRCDIR PYTHONDONTWRITEBYTECODE

status=0
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_reload.py "$@" || status=1
# the metrics thread reading the workers' counters, dnstap's rings and writer
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_metrics.py \
	tests/system/test_dnstap.py || status=1
# verifiers: run from the loading threads at start, the reload threads
# and the refresh pool's, their table read by the control thread
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_verifier.py || status=1
# secondary zones: the scheduler, the refresh pool's threads, NOTIFYs from
# the workers and zone-status from the control thread
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_secondary.py \
	-k "apexctl_secondary or notify_while or reconfig_applies or zone_removed or chain" || status=1
# catalogs: the catalog thread reading catalogs as the refresh pool and
# the reload threads publish them, and putting members in force beside
# reconfig on the control thread
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_catalog.py \
	tests/system/test_catalog_producer.py || status=1
# TLS: the workers' sessions, a transfer handed to its thread with its
# session, the certificates read again by reconfig on the control thread
# (the timing tests of stalled handshakes stay in the other builds)
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system/test_tls.py \
	-k "dot or xot or refusals or resumption or renewal" || status=1
if ! ls "$LOGS"/*.log >/dev/null 2>&1; then
	echo "tsan-reload: no apexd log was collected" >&2
	status=1
elif grep -l "ThreadSanitizer" "$LOGS"/*.log >&2; then
	echo "tsan-reload: ThreadSanitizer reports in the logs above" >&2
	grep -h -A30 "WARNING: ThreadSanitizer" "$LOGS"/*.log | head -n 120 >&2
	status=1
fi
[ $status -eq 0 ] && echo "tsan-reload: clean (no ThreadSanitizer report, all reload tests passed)"
exit $status
