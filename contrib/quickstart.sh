#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build apex on a fresh Debian 12 machine and run apexd in the foreground
# on the bundled root zone at 127.0.0.1 port 5353, with its control socket
# in the build tree so that apexctl can reload it and show its statistics.
# Stop it with Ctrl-C.
#   sh contrib/quickstart.sh
# APEX_QUICKSTART_PORT and APEX_QUICKSTART_SOCKET set another port and
# control socket; APEX_QUICKSTART_SKIP_SETUP=1 skips the packages and the
# build (a tree built already, as the tests do).
set -eu
cd "$(dirname "$0")/.."
TREE=$(pwd)
PORT=${APEX_QUICKSTART_PORT:-5353}
SOCKET=${APEX_QUICKSTART_SOCKET:-$TREE/apexd.sock}

if [ "${APEX_QUICKSTART_SKIP_SETUP:-0}" != 1 ]; then
	# Root runs apt-get itself; anyone else through sudo.
	SUDO=
	[ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
		build-essential autoconf automake libtool pkg-config \
		libuv1-dev libldns-dev libjemalloc-dev libcap-dev libcmocka-dev libssl-dev knot-dnsutils \
		libfstrm-dev libprotobuf-c-dev protobuf-c-compiler libxdp-dev libbpf-dev clang

	autoreconf -fi
	./configure
	make -j"$(nproc)"
fi

echo
echo "apexd serves zones/root.zone on 127.0.0.1 port $PORT. From another terminal:"
echo "  query it:            kdig @127.0.0.1 -p $PORT . SOA +dnssec"
echo "  reload the zone:     $TREE/apexctl -s $SOCKET reload"
echo "  see its statistics:  $TREE/apexctl -s $SOCKET stats"
echo "  see the zone:        $TREE/apexctl -s $SOCKET zone-status"
echo "  stop it:             $TREE/apexctl -s $SOCKET stop   (or Ctrl-C here)"
echo
exec ./apexd -f -l "127.0.0.1@$PORT" -s "$SOCKET" -z .=zones/root.zone
