#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build apex's Debian package from this tree: the tracked files are copied
# to a temporary directory with contrib/debian/ as debian/, and
# dpkg-buildpackage builds the binary package there, so the tree keeps its
# top level as it is.  The .deb (and the .buildinfo and .changes) land in
# OUTDIR, build-deb/ by default.  The build dependencies are those of
# contrib/debian/control (contrib/test-all.sh installs them), plus
# debhelper and dpkg-dev.
#   sh contrib/build-deb.sh [OUTDIR]
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build-deb}
VERSION=$(sed -n 's/^AC_INIT(\[apex\], \[\([^]]*\)\].*/\1/p' configure.ac)
[ -n "$VERSION" ] || { echo "build-deb: no version in configure.ac" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
TREE="$WORK/apex-$VERSION"
mkdir "$TREE"
if [ -d .git ] && command -v git >/dev/null; then
	git ls-files -z | xargs -0 tar -cf - | tar -C "$TREE" -xf -
else
	# a tree without git: everything but build products
	tar --exclude=./.git --exclude='./build*' --exclude=./autom4te.cache -cf - . |
		tar -C "$TREE" -xf -
	(cd "$TREE" && { make distclean >/dev/null 2>&1 || true; })
fi
cp -R contrib/debian "$TREE/debian"
(cd "$TREE" && dpkg-buildpackage -us -uc -b)

mkdir -p "$OUT"
cp "$WORK"/apex_"$VERSION"_*.deb "$WORK"/apex_"$VERSION"_*.buildinfo \
	"$WORK"/apex_"$VERSION"_*.changes "$OUT"/
ls -l "$OUT"/apex_"$VERSION"_*.deb
