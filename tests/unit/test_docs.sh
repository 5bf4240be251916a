#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_docs.sh - the man pages, the bash completion and their installation.
#
# - pgoffctl.1 and pgoffd.8 render with groff -man -ww and no warning;
# - every long option that `pgoffctl CMD --help` prints, for every CMD that
#   `pgoffctl --help` lists, is in CMD's section of pgoffctl.1 (or among the
#   options of all commands); every option of `pgoffd --help` is in pgoffd.8;
# - the completion offers those commands and options, and the values of
#   --type, --view, --by, --pid, as bash calls it (COMP_WORDS, COMP_CWORD);
# - make install DESTDIR=... PREFIX=/usr puts the pages and the completion
#   there and writes nothing outside DESTDIR; make uninstall removes them.
#
# Needs the built binaries (PGOFF_BUILD, default build), groff and pgrep.
# With CI=true a missing tool is a failure, never a skip.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build_rel=${PGOFF_BUILD:-build}
case $build_rel in
/*) build=$build_rel ;;
*) build=$top/$build_rel ;;
esac
ctl=$build/pgoffctl
broker=$build/pgoffd
man1=$top/man/pgoffctl.1
man8=$top/man/pgoffd.8
completion=$top/completion/pgoffctl.bash
. "$top/tests/tap.sh"
tmp=$(mktemp -d)
fake_pid=
# shellcheck disable=SC2317 # (called by the EXIT trap)
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

for bin in "$ctl" "$broker"; do
	if [ ! -x "$bin" ]; then
		not_ok "$bin is built (run make first)"
		exit 1
	fi
done

# --- the pages render -------------------------------------------------------

if ! missing groff "man pages render with groff -man -ww"; then
	for page in "$man1" "$man8"; do
		out=$(groff -man -ww -z "$page" 2>&1)
		rc=$?
		if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
			ok "$(basename "$page") renders with groff -man -ww, no warnings"
		else
			printf '%s\n' "$out" | sed 's/^/# /'
			not_ok "$(basename "$page") renders with groff -man -ww, no warnings"
		fi
	done
fi

# --- every option printed by --help is documented ---------------------------

# The roff source as text: \- is -, no font changes.
plain() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' "$1"
}
# section PAGE REGEX: the lines from the heading matching REGEX to the
# next heading
section() {
	plain "$1" | awk -v re="$2" '
		/^\.S[HS]/ { on = ($0 ~ re) ; if (on) { print; next } }
		on { print }'
}
# tags PAGE REGEX: the .TP tags (the defined terms) of that section: an
# option counts as documented where it is defined, not where it is named
tags() { section "$1" "$2" | awk 'prev ~ /^[.]TP/ { print } { prev = $0 }'; }
# long options in a help text
long_opts() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# has TEXT OPTION: OPTION is in TEXT as a whole word
has() { grep -qE -- "(^|[^a-z0-9-])$2([^a-z0-9-]|\$)" <<<"$1"; }

top_help=$("$ctl" --help 2>&1)
commands=$(awk '/^commands:/ { on = 1; next } on && /^$/ { exit }
		on && /^  [a-z]/ { print $1 }' <<<"$top_help")
if [ -z "$commands" ]; then
	not_ok "pgoffctl --help lists commands"
	commands=
fi
global=$(tags "$man1" '^[.]SH OPTIONS')
page1=$(plain "$man1")

missing_opts=
for o in $(long_opts <<<"$top_help"); do
	has "$page1" "$o" || missing_opts+=" $o"
done
if [ -z "$missing_opts" ]; then
	ok "pgoffctl.1 has every option of pgoffctl --help"
else
	not_ok "pgoffctl.1 has every option of pgoffctl --help (missing:$missing_opts)"
fi

for cmd in $commands; do
	help=$("$ctl" "$cmd" --help 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ]; then
		not_ok "pgoffctl $cmd --help exits 0 (it exited $rc)"
		continue
	fi
	sec=$(tags "$man1" "^[.]SS \"?pgoffctl $cmd( |\"|\$)")
	if [ -z "$sec" ]; then
		not_ok "pgoffctl.1 has a section with options for pgoffctl $cmd"
		continue
	fi
	missing_opts=
	for o in $(long_opts <<<"$help"); do
		has "$sec" "$o" || has "$global" "$o" || missing_opts+=" $o"
	done
	if [ -z "$missing_opts" ]; then
		ok "pgoffctl.1 documents every option of pgoffctl $cmd --help"
	else
		not_ok "pgoffctl.1 documents every option of pgoffctl $cmd --help (missing:$missing_opts)"
	fi
done

help=$("$broker" --help 2>&1)
opts8=$(tags "$man8" '^[.]SH OPTIONS')
missing_opts=
for o in $(long_opts <<<"$help") $(grep -oE -- '^  -[a-zA-Z],' <<<"$help" | tr -d ' ,'); do
	has "$opts8" "$o" || missing_opts+=" $o"
done
if [ -n "$help" ] && [ -z "$missing_opts" ]; then
	ok "pgoffd.8 documents every option of pgoffd --help"
else
	not_ok "pgoffd.8 documents every option of pgoffd --help (missing:${missing_opts:- no help})"
fi

# --- pgoffd's settings table: README and pgoffd.8 say what --help says -------

# --help's options come from the settings table (broker/config.c), as do
# the restart-only names it lists after "change only with a restart:"
not_settings='--config\|--check\|--help\|--version'
readme_opts=$(grep -oE '^\| (`-[a-zA-Z]`, )?`--[a-z][a-z0-9-]*' "$top/README.md" |
	grep -oE -- '--[a-z][a-z0-9-]*' | grep -vx -- "$not_settings" | sort -u)
help_opts=$(long_opts <<<"$help" | grep -vx -- "$not_settings")
if [ -n "$help_opts" ] && [ "$(comm -3 <(echo "$readme_opts") <(echo "$help_opts"))" = "" ]; then
	ok "README's options table has a row for every setting of pgoffd --help, and no other"
else
	not_ok "README's options table has a row for every setting of pgoffd --help, and no other (only in README | only in --help: $(comm -3 <(echo "$readme_opts") <(echo "$help_opts") | tr '\n\t' ' |'))"
fi
restart_help=$(awk '/change only with a restart:/ { on = 1; next }
		on && /^  -/ { exit } on { print }' <<<"$help" | tr ' ' '\n' | grep . | sort)
restart_readme=$(tr '\n' ' ' <"$top/README.md" |
	grep -oE 'These need a restart \([^)]*\): [^.]*' | grep -oE '`[a-z-]+`' | tr -d '`' | sort)
restart_man=$(awk '/^Only a restart changes/ { on = 1; next } on && !/^[.]B/ && !/^and$/ { exit }
		on { print }' "$man8" | grep -oE '\\-\\-[a-z\\-]+' | sed 's/\\-/-/g; s/^--//' | sort)
for pair in "README:$restart_readme" "pgoffd.8:$restart_man"; do
	doc=${pair%%:*} names=${pair#*:}
	if [ -n "$restart_help" ] && [ "$names" = "$restart_help" ]; then
		ok "$doc names the settings that need a restart as the table does ($(echo $names))"
	else
		not_ok "$doc names the settings that need a restart as the table does (doc: $(echo $names); table: $(echo $restart_help))"
	fi
done

# --- docs by reader: README short, every relative link found -----------------

lines=$(wc -l <"$top/README.md")
check "README.md is for users, under 600 lines ($lines)" [ "$lines" -lt 600 ]
broken=
for doc in "$top/README.md" "$top/CONTRIBUTING.md" "$top"/docs/*.md; do
	for link in $(grep -oE '\]\([^)#][^)]*\)' "$doc" | sed 's/^](//; s/)$//; s/#.*//' | grep -v '^https\?:'); do
		[ -e "$(dirname "$doc")/$link" ] || broken+=" ${doc#"$top"/}:$link"
	done
	for ref in $(grep -oE 'docs/[A-Z]+\.md' "$doc"); do
		[ -e "$top/$ref" ] || broken+=" ${doc#"$top"/}:$ref"
	done
done
check "every relative link and docs/ file the docs name exists${broken:+ (missing:$broken)}" [ -z "$broken" ]

# --- completion ---------------------------------------------------------------

# complete WORD...: COMPREPLY, one per line, for the command line WORD...
# with the cursor in the last word, as bash would call the function
complete_words() {
	# shellcheck disable=SC2016 # (expanded by that bash)
	env -i HOME="$tmp" PATH="${COMPLETE_PATH:-$PATH}" "$BASH" --norc --noprofile -c '
		source "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_pgoffctl pgoffctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete "$completion" "$@"
}
# expect "WORDS" "WANT": the completions, space-separated, are exactly WANT
expect() {
	local got
	# shellcheck disable=SC2086
	got=$(complete_words $1 | LC_ALL=C sort | tr '\n' ' ')
	got=${got% }
	if [ "$got" = "$2" ]; then
		ok "completion: '$1' -> '$2'"
	else
		not_ok "completion: '$1' -> '$2' (got '$got')"
	fi
}
expect "pgoffctl w" "watch"
expect "pgoffctl watch --ty" "--type"
expect "pgoffctl watch --type lo" "lock"
expect "pgoffctl watch --type io,n" "io,net"
expect "pgoffctl top --by w" "wait"
expect "pgoffctl watch --type = lo" "lock"
expect "pgoffctl --socket /run/x f" "flame"
expect "pgoffctl watch --view b" "both"
expect "pgoffctl flame --type io,lock,o" "io,lock,other"
expect "pgoffctl watch --min 1" ""
expect "pgoffctl -" "--help --socket --version"

got=$(complete_words pgoffctl watch --type io,lock, | tr '\n' ' ')
if [[ " $got" == *" io,lock,net "* && " $got" != *",io "* && " $got" != *",lock "* ]]; then
	ok "completion: a --type list offers the names not yet in it"
else
	not_ok "completion: a --type list offers the names not yet in it (got '$got')"
fi

got=$(complete_words pgoffctl "" | tr '\n' ' ')
missing_cmds=
for cmd in $commands status ps watch top flame metrics; do
	[[ " $got" == *" $cmd "* ]] || missing_cmds+=" $cmd"
done
if [ -z "$missing_cmds" ]; then
	ok "completion offers every command"
else
	not_ok "completion offers every command (missing:$missing_cmds)"
fi

for cmd in $commands; do
	got=$(complete_words pgoffctl "$cmd" -- | tr '\n' ' ')
	missing_opts=
	for o in $("$ctl" "$cmd" --help 2>&1 | long_opts); do
		[[ " $got" == *" $o "* ]] || missing_opts+=" $o"
	done
	if [ -z "$missing_opts" ]; then
		ok "completion offers every option of pgoffctl $cmd --help"
	else
		not_ok "completion offers every option of pgoffctl $cmd --help (missing:$missing_opts)"
	fi
done

# what the completion offers (also for commands not built yet) is documented
undocumented=
for cmd in status ps watch top flame metrics; do
	sec=$(tags "$man1" "^[.]SS \"?pgoffctl $cmd( |\"|\$)")
	for o in $(complete_words pgoffctl "$cmd" --); do
		has "$sec" "$o" || has "$global" "$o" || undocumented+=" $cmd:$o"
	done
done
if [ -z "$undocumented" ]; then
	ok "every option the completion offers is in its command's section of pgoffctl.1"
else
	not_ok "every option the completion offers is in its command's section of pgoffctl.1 (missing:$undocumented)"
fi

# --pid: a process whose comm is "postgres", found with pgrep and, without
# pgrep, by reading /proc/PID/comm
if ! missing pgrep "completion: --pid offers postgres processes"; then
	cp "$(command -v sleep)" "$tmp/postgres"
	"$tmp/postgres" 60 &
	fake_pid=$!
	for path in "$PATH" /nonexistent; do
		how=pgrep
		[ "$path" = /nonexistent ] && how=/proc
		got=$(COMPLETE_PATH=$path complete_words pgoffctl watch --pid "" | tr '\n' ' ')
		if [[ " $got" == *" $fake_pid "* && " $got" != *" $$ "* ]]; then
			ok "completion: --pid offers postgres processes (via $how)"
		else
			not_ok "completion: --pid offers postgres processes (via $how; want $fake_pid and not $$, got '$got')"
		fi
	done
fi

# --- make install / uninstall -------------------------------------------------

dest=$tmp/root
stamp=$tmp/stamp
touch "$stamp"
sleep 1	# mtimes with one-second resolution still tell before from after
out=$(cd "$top" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
	make --no-print-directory install DESTDIR="$dest" PREFIX=/usr BUILD="$build_rel" 2>&1)
rc=$?
if [ "$rc" -ne 0 ]; then
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "make install DESTDIR=... PREFIX=/usr (exit $rc)"
else
	ok "make install DESTDIR=... PREFIX=/usr"
fi
for pair in "usr/share/man/man1/pgoffctl.1:$man1" "usr/share/man/man8/pgoffd.8:$man8" \
	"usr/share/bash-completion/completions/pgoffctl:$completion"; do
	f=$dest/${pair%%:*}
	if [ -f "$f" ] && cmp -s "$f" "${pair#*:}" && [ "$(stat -c %a "$f")" = 644 ]; then
		ok "make install puts /${pair%%:*} in place, mode 0644"
	else
		not_ok "make install puts /${pair%%:*} in place, mode 0644"
	fi
done
outside=
while IFS= read -r f; do
	real=${f#"$dest"}
	[ -e "$real" ] && [ "$real" -nt "$stamp" ] && outside+=" $real"
done < <(find "$dest" -type f)
if [ -n "$(find "$dest" -type f)" ] && [ -z "$outside" ]; then
	ok "make install DESTDIR=... writes nothing outside DESTDIR"
else
	not_ok "make install DESTDIR=... writes nothing outside DESTDIR (written:${outside:- nothing installed})"
fi
out=$(cd "$top" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
	make --no-print-directory uninstall DESTDIR="$dest" PREFIX=/usr 2>&1)
left=$(find "$dest" -type f)
if [ -z "$left" ]; then
	ok "make uninstall removes every installed file"
else
	not_ok "make uninstall removes every installed file (left: ${left//$'\n'/ })"
fi

exit "$TAP_FAILED"
