#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_postrm.sh - debian/pgoffd.postrm as dpkg runs it (sh, as root),
# each case in a mount namespace of its own whose /etc, /var/lib, /run and
# /srv are empty tmpfs mounts, so that the script's rm -rf reaches
# nothing of this machine's: purge removes a state directory that
# pgoffd.conf names (its last state-directory line) with the default one,
# /etc/pgoff and /run/pgoff; one that holds other files keeps them and
# stays, said; a symbolic link is left as it is, said; remove keeps the
# settings and the record. getent finds no pgoffd user or pgoff group
# there (a stub), so no user is removed; test_deb.sh purges the packages
# for real.
#
# Needs root (mount namespaces), unshare and mount (util-linux).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
postrm=$top/debian/pgoffd.postrm
. "$top/tests/tap.sh"
SECONDS=0

[ "$(id -u)" = 0 ] || tap_skip_file "debian/pgoffd.postrm against a fake root" "not root"
command -v unshare >/dev/null || tap_skip_file "debian/pgoffd.postrm against a fake root" "no unshare"
tmp=$(mktemp -d /tmp/pgoff-postrm.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"
printf '#!/bin/sh\nexit 2\n' >"$tmp/bin/getent"
printf '#!/bin/sh\necho "$(basename "$0") $*" >>%s/calls\n' "$tmp" >"$tmp/bin/userdel"
cp "$tmp/bin/userdel" "$tmp/bin/groupdel"
chmod 0755 "$tmp/bin/"*

# run_case NAME ARG SETUP: SETUP (bash) makes the fake root's files, then
# the postrm runs with ARG; its output in $tmp/NAME.out (its status on
# the last line), what is left under /etc, /var/lib, /run and /srv in
# $tmp/NAME.left (one path a line, a link as "PATH -> TARGET")
run_case() {
	local name=$1 arg=$2 setup=$3
	unshare --mount --propagation private bash -c '
		set -e
		for d in /etc /var/lib /run /srv; do mount -t tmpfs -o mode=0755 none "$d"; done
		eval "$1"
		set +e
		PATH=$2/bin:/usr/sbin:/usr/bin:/sbin:/bin sh "$3" "$4" >"$2/$5.out" 2>&1
		echo "exit status $?" >>"$2/$5.out"
		find /etc /var/lib /run /srv -mindepth 1 \( -type l -printf "%p -> %l\n" -o -printf "%p\n" \) |
			sort >"$2/$5.left"
	' run_case "$setup" "$tmp" "$postrm" "$arg" "$name"
	note "$name: postrm $arg said: $(tr '\n' '|' <"$tmp/$name.out")"
	note "$name: left: $(tr '\n' ' ' <"$tmp/$name.left")"
}
# has_left NAME PATH...: each PATH is left; none_left NAME PATH...: none is
has_left() {
	local n=$1 p; shift
	for p in "$@"; do grep -qxF -- "$p" "$tmp/$n.left" || return 1; done
}
none_left() {
	local n=$1 p; shift
	for p in "$@"; do grep -q -- "^$p\(/\| ->\|\$\)" "$tmp/$n.left" && return 1; done
	return 0
}
said() { grep -qF -- "$2" "$tmp/$1.out"; }
# ended_well NAME: status 0, and no userdel or groupdel was run
ended_well() { said "$1" "exit status 0" && [ ! -e "$tmp/calls" ]; }

SEGS='0000000000000001.seg 0000000000000001.agg seq seq.new'
# record DIR: pgoffd's files in DIR
record='record() { mkdir -p "$1"; for f in '$SEGS'; do echo x >"$1/$f"; done; }'

# --- the default state directory
run_case default purge "$record"'
	mkdir -p /etc/pgoff /run/pgoff
	echo "min-floor = 1ms" >/etc/pgoff/pgoffd.conf
	: >/run/pgoff/pgoffd.sock
	record /var/lib/pgoff'
check "purge: /etc/pgoff, /var/lib/pgoff and /run/pgoff go" \
	none_left default /etc/pgoff /var/lib/pgoff /run/pgoff
check "purge: status 0, no user to remove here" ended_well default

# --- a state directory of the admin's: the last line that names one, its
# value trimmed as pgoffd trims it (a blank inside is kept)
run_case custom purge "$record"'
	mkdir -p /etc/pgoff
	printf "%s\n" "# state-directory = /srv/commented" "state-directory = /srv/old" \
		"min-floor = 1ms" "	state-directory	=  /srv/pgoff state  " >/etc/pgoff/pgoffd.conf
	record /var/lib/pgoff; record "/srv/pgoff state"; record /srv/old; record /srv/commented'
check "purge: the state directory pgoffd.conf names goes, with its record" \
	none_left custom "/srv/pgoff state" /etc/pgoff /var/lib/pgoff
check "... and says so" said custom "removed the state directory /srv/pgoff state (state-directory in /etc/pgoff/pgoffd.conf)"
check "... the directories of an earlier line and of a comment are not touched" \
	has_left custom /srv/old/0000000000000001.seg /srv/old/seq /srv/commented/seq
check "... status 0" ended_well custom

# --- one that holds something else
run_case shared purge "$record"'
	mkdir -p /etc/pgoff
	echo "state-directory=/srv/rec" >/etc/pgoff/pgoffd.conf
	record /srv/rec
	echo mine >/srv/rec/notes.txt
	mkdir /srv/rec/sub
	echo x >/srv/rec/sub/0000000000000002.seg
	ln -s /srv/elsewhere.seg /srv/rec/00000000000000ff.seg'
shared_segs=()
for f in $SEGS; do shared_segs+=("/srv/rec/$f"); done
check "purge: a state directory with other files: pgoff's record in it goes" \
	none_left shared "${shared_segs[@]}"
check "... the other files stay (a file, a directory, a symbolic link), and so does it" \
	has_left shared /srv/rec /srv/rec/notes.txt /srv/rec/sub/0000000000000002.seg \
	"/srv/rec/00000000000000ff.seg -> /srv/elsewhere.seg"
check "... and it says that it stays" \
	said shared "the flight record in /srv/rec (state-directory in /etc/pgoff/pgoffd.conf) is removed, but the directory stays"

# --- a symbolic link (pgoffd never recorded there: it refuses one)
run_case link purge "$record"'
	mkdir -p /etc/pgoff
	echo "state-directory = /srv/link" >/etc/pgoff/pgoffd.conf
	record /srv/target
	ln -s /srv/target /srv/link'
check "purge: a state directory that is a symbolic link is left as it is, and what it points to" \
	has_left link "/srv/link -> /srv/target" /srv/target/0000000000000001.seg /srv/target/seq
check "... said" said link "/srv/link (state-directory in /etc/pgoff/pgoffd.conf) is not a directory: left as it is"

# --- remove keeps settings and records
run_case remove remove "$record"'
	mkdir -p /etc/pgoff /run/pgoff
	echo "state-directory = /srv/pgoff" >/etc/pgoff/pgoffd.conf
	: >/run/pgoff/pgoffd.sock
	record /srv/pgoff; record /var/lib/pgoff'
check "remove: /run/pgoff goes" none_left remove /run/pgoff
check "... the settings and both records stay" \
	has_left remove /etc/pgoff/pgoffd.conf /srv/pgoff/seq /var/lib/pgoff/seq

note "test_postrm.sh: $SECONDS s"
exit "$TAP_FAILED"
