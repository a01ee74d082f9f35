#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# apex installed as an operator installs it, tested end to end (as root,
# from contrib/test-all.sh):
# 1. `make install` of a copy of this tree under a temporary prefix:
#    `apexd -t` and `apexd -c` with the installed configuration, which
#    drops to its user, serves the example zone and answers apexctl; at
#    exit its pid file and control socket are gone.
# 2. The Debian package (contrib/build-deb.sh): lintian reports no error;
#    installed into a clean `debootstrap --variant=minbase bookworm`
#    chroot, `apexd -t -c /etc/apex/apex.conf` passes, `apexd -f` with it
#    answers the example zone's SOA and stops cleanly, and `apt-get purge`
#    leaves none of the package's files, /etc/apex, /var/lib/apex or
#    /run/apex behind.
# apexd listens on a free loopback port (-l replaces the configuration's
# listen addresses); every process started is stopped by its PID.
#   sh contrib/test-install.sh
set -eu
cd "$(dirname "$0")/.."
SRCDIR=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
[ "$(id -u)" -eq 0 ] || { echo "test-install: needs root (chroot, port drop to a user)" >&2; exit 1; }

WORK="$SRCDIR/build-install"
CHROOT="$WORK/chroot"
APEXD_PID=
cleanup() {
	[ -z "$APEXD_PID" ] || kill "$APEXD_PID" 2>/dev/null || true
	if [ -d "$CHROOT/proc" ] && mountpoint -q "$CHROOT/proc"; then umount "$CHROOT/proc"; fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
rm -rf "$WORK"
mkdir -p "$WORK"
chmod 755 "$WORK" # apexd's user must reach its run directory below

fail() {
	echo "test-install: FAILED: $*" >&2
	exit 1
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The example zone's SOA from 127.0.0.1 port $1, waiting up to 30 s.
wait_soa() {
	i=0
	while [ $i -lt 60 ]; do
		soa=$(kdig @127.0.0.1 -p "$1" example.com. SOA +short +time=1 +retry=0 2>/dev/null || true)
		case "$soa" in ns1.example.com.*) echo "$soa"; return 0 ;; esac
		sleep 0.5
		i=$((i + 1))
	done
	return 1
}

# Stop apexd (PID $APEXD_PID) with SIGTERM and wait for its exit status.
stop_apexd() {
	kill "$APEXD_PID"
	status=0
	wait "$APEXD_PID" || status=$?
	APEXD_PID=
	[ "$status" -eq 0 ] || fail "apexd exited with status $status"
}

echo "=== make install under a temporary prefix"
PREFIX="$WORK/prefix"
mkdir "$WORK/src"
git ls-files -z | xargs -0 tar -cf - | tar -C "$WORK/src" -xf -
(cd "$WORK/src" && autoreconf -fi >/dev/null 2>&1 && ./configure -q --prefix="$PREFIX" && make -j"$JOBS" >/dev/null &&
	make install >/dev/null)
CONF="$PREFIX/etc/apex.conf"
RUN="$PREFIX/var/run/apex"
[ -f "$CONF" ] && [ -f "$PREFIX/var/lib/apex/example.com.zone" ] && [ -d "$RUN" ] ||
	fail "make install: no configuration, example zone or run directory"
! grep -n '@[a-z_A-Z]*@' "$CONF" "$PREFIX/lib/systemd/system/apexd.service" \
	"$PREFIX"/share/man/man*/* || fail "a placeholder left in an installed file"
"$PREFIX/sbin/apexd" -t -c "$CONF" || fail "apexd -t -c $CONF"
PORT=$(free_port)
"$PREFIX/sbin/apexd" -f -c "$CONF" -l "127.0.0.1@$PORT" 2>"$WORK/apexd.log" &
APEXD_PID=$!
wait_soa "$PORT" || { cat "$WORK/apexd.log"; fail "no SOA from the installed apexd"; }
"$PREFIX/bin/apexctl" status | grep -q "^pid: $APEXD_PID$" || fail "apexctl status"
[ "$(stat -c %U "$RUN/apexd.pid")" = nobody ] || fail "the pid file is not the run user's"
grep -q "running as user nobody" "$WORK/apexd.log" || fail "no privilege drop"
stop_apexd
[ ! -e "$RUN/apexd.pid" ] && [ ! -e "$RUN/apexd.sock" ] ||
	{ ls -l "$RUN"; fail "the pid file or the control socket stayed behind"; }
echo "make install: served the example zone, nothing left in $RUN"

echo "=== the Debian package"
sh contrib/build-deb.sh "$WORK/deb" >"$WORK/build-deb.log" 2>&1 ||
	{ tail -n 50 "$WORK/build-deb.log"; fail "build-deb.sh"; }
DEB=$(ls "$WORK"/deb/apex_*.deb)
lintian --fail-on error "$DEB" || fail "lintian reports errors"

MIRROR=${APEX_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\([^ ]*\/debian\)$/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
echo "debootstrap bookworm from $MIRROR"
debootstrap --variant=minbase bookworm "$CHROOT" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 ||
	{ tail -n 20 "$WORK/debootstrap.log"; fail "debootstrap"; }
mount -t proc proc "$CHROOT/proc"
printf '#!/bin/sh\nexit 101\n' >"$CHROOT/usr/sbin/policy-rc.d"
chmod 755 "$CHROOT/usr/sbin/policy-rc.d"
cp "$DEB" "$CHROOT/tmp/apex.deb"
in_chroot() { chroot "$CHROOT" "$@"; }
in_chroot apt-get update -q >/dev/null
DEBIAN_FRONTEND=noninteractive in_chroot apt-get install -y -q --no-install-recommends \
	/tmp/apex.deb >"$WORK/install.log" 2>&1 || { cat "$WORK/install.log"; fail "installing"; }
# the package's files (not its directories, which others may share)
in_chroot dpkg -L apex | while read -r f; do [ -d "$CHROOT$f" ] || echo "$f"; done >"$WORK/files"
[ -s "$WORK/files" ] || fail "dpkg -L apex lists no file"
[ "$(in_chroot stat -c %U /var/lib/apex)" = apex ] || fail "/var/lib/apex is not apex's"
in_chroot apexd -t -c /etc/apex/apex.conf || fail "apexd -t -c /etc/apex/apex.conf"
PORT=$(free_port)
chroot "$CHROOT" /usr/sbin/apexd -f -c /etc/apex/apex.conf -l "127.0.0.1@$PORT" \
	2>"$WORK/apexd-deb.log" &
APEXD_PID=$!
wait_soa "$PORT" || { cat "$WORK/apexd-deb.log"; fail "no SOA from the packaged apexd"; }
in_chroot apexctl status | grep -q "^version: apexd" || fail "apexctl status in the chroot"
grep -q "running as user apex" "$WORK/apexd-deb.log" || fail "the packaged apexd kept root"
stop_apexd
[ ! -e "$CHROOT/run/apex/apexd.pid" ] && [ ! -e "$CHROOT/run/apex/apexd.sock" ] ||
	fail "the packaged apexd left its pid file or control socket"
DEBIAN_FRONTEND=noninteractive in_chroot apt-get purge -y -q apex >"$WORK/purge.log" 2>&1 ||
	{ cat "$WORK/purge.log"; fail "apt-get purge"; }
left=
while read -r f; do [ ! -e "$CHROOT$f" ] || left="$left $f"; done <"$WORK/files"
for d in /etc/apex /var/lib/apex /run/apex; do [ ! -e "$CHROOT$d" ] || left="$left $d"; done
[ -z "$left" ] || fail "left behind by apt-get purge:$left"
echo "package: lintian clean, served the example zone in a clean chroot, purged without a trace"
