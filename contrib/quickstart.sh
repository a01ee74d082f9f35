#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build apex on a fresh Debian 12 machine and run apexd in the foreground
# on the bundled root zone at 127.0.0.1 port 5353.  Stop it with Ctrl-C.
#   sh contrib/quickstart.sh
set -eu
cd "$(dirname "$0")/.."

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

echo
echo "apexd serves zones/root.zone on 127.0.0.1 port 5353. Query it with:"
echo "    kdig @127.0.0.1 -p 5353 . SOA +dnssec"
echo
exec ./apexd -f -l 127.0.0.1@5353 -z .=zones/root.zone
