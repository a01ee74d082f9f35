#!/bin/sh
# Regenerate the signed copies of the feature zone from zones/example.zone:
#   zones/example.nsec.zone   signed with NSEC
#   zones/example.nsec3.zone  signed with NSEC3 (SHA-1, no salt, 0 extra
#                             iterations as RFC 9276 advises, opt-out so the
#                             unsigned delegation nods.example. is covered
#                             by an opt-out span)
# Signatures are valid from 2025-01-01 to 2035-12-31.  The keys in
# zones/keys/ are TEST KEYS ONLY (their private halves are public); they are
# created on the first run if missing.  ECDSA signatures are randomised, so
# every run gives different signature bytes.  The tests do not run this.
#
# Needs dnssec-keygen/dnssec-signzone (Debian: bind9-utils) and
# ldns-verify-zone (Debian: ldnsutils).
set -eu
cd "$(dirname "$0")"

ORIGIN=example.
KEYDIR=keys
START=20250101000000
END=20351231000000

mkdir -p "$KEYDIR"
if ! ls "$KEYDIR"/Kexample.+013+*.key >/dev/null 2>&1; then
	dnssec-keygen -q -K "$KEYDIR" -a ECDSAP256SHA256 -f KSK "$ORIGIN" >/dev/null
	dnssec-keygen -q -K "$KEYDIR" -a ECDSAP256SHA256 "$ORIGIN" >/dev/null
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sign() {
	out=$1
	shift
	cp example.zone "$tmp/example.zone"
	for k in "$KEYDIR"/Kexample.+013+*.key; do
		echo "\$INCLUDE $PWD/$k" >>"$tmp/example.zone"
	done
	# -O full: one record per line, absolute names; -N keep: keep the
	# serial; -x: only the KSK signs the DNSKEY RRset.
	dnssec-signzone -q -d "$tmp" -O full -N keep -x -K "$KEYDIR" -o "$ORIGIN" \
		-s "$START" -e "$END" -f "$tmp/out" "$@" "$tmp/example.zone" >/dev/null
	{
		echo "; $ORIGIN signed with $(case "$*" in *-3*) echo NSEC3 opt-out;; *) echo NSEC;; esac)" \
			"by zones/sign-example.sh from zones/example.zone."
		echo "; TEST KEYS ONLY (zones/keys/): never use this zone or its keys in production."
		# dnssec-signzone's "; resign=" bookkeeping comments are dropped.
		grep -v '^;' "$tmp/out"
	} >"$out"
	ldns-verify-zone "$out" >/dev/null
}

sign example.nsec.zone
sign example.nsec3.zone -3 - -H 0 -A
echo "signed: example.nsec.zone example.nsec3.zone"
