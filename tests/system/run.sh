#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The system tests: apexd on loopback compared with NSD and Knot DNS.
# `make check` runs this with APEX_SRCDIR and APEX_BUILDDIR set; by hand,
# run it from anywhere (both default to the source tree).  Extra arguments
# go to pytest, e.g. tests/system/run.sh -k protocol.
SRCDIR=${APEX_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
APEX_SRCDIR=$SRCDIR
APEX_BUILDDIR=${APEX_BUILDDIR:-$SRCDIR}
PYTHONDONTWRITEBYTECODE=1
export APEX_SRCDIR APEX_BUILDDIR PYTHONDONTWRITEBYTECODE
cd "$SRCDIR" || exit 1
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests/system "$@"
rc=$?
case $rc in
0) exit 0 ;;
5) echo "run.sh: no system test was collected" >&2; exit 1 ;;
*) exit 1 ;;
esac
