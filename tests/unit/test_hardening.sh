#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_hardening.sh - the built binaries carry what the Makefile's
# hardening flags promise, as readelf sees them:
#
# - PIE (ELF type DYN, FLAGS_1 PIE);
# - full RELRO: a GNU_RELRO segment and BIND_NOW (FLAGS BIND_NOW or
#   FLAGS_1 NOW), so the GOT is read-only once loaded;
# - a GNU_STACK segment that is not executable;
# - _FORTIFY_SOURCE: some libc calls go through their __*_chk forms;
# - -fstack-protector-strong: __stack_chk_fail is called;
# - on x86, -fcf-protection: functions start with endbr64.
#
# Needs the built binaries (PGOFF_BUILD, default build) and binutils.
# With CI=true a missing tool is a failure, never a skip.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build_rel=${PGOFF_BUILD:-build}
case $build_rel in
/*) build=$build_rel ;;
*) build=$top/$build_rel ;;
esac
. "$top/tests/tap.sh"

# expect NAME SEEN COMMAND...: a test line; on failure, what was seen
expect() {
	local name=$1 seen=$2
	shift 2
	if "$@"; then
		ok "$name"
	else
		not_ok "$name"
		printf '%s\n' "$seen" | sed 's/^/#   saw: /'
	fi
}

for tool in readelf objdump; do
	command -v "$tool" >/dev/null ||
		tap_skip_file "hardening checks" "$tool is not installed: apt-get install binutils"
done

for bin in "$build/pgoffd" "$build/pgoffctl" "$build/pgoff_exporter"; do
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		not_ok "$bin is built (run make first)"
		continue
	fi
	header=$(readelf -hW "$bin" | grep -E '^ *Type:')
	dynamic=$(readelf -dW "$bin" | grep -E '\((FLAGS|FLAGS_1|BIND_NOW)\)')
	segments=$(readelf -lW "$bin" | grep -E 'GNU_RELRO|GNU_STACK')
	stack=$(grep GNU_STACK <<<"$segments")
	imports=$(readelf --dyn-syms -W "$bin" | grep -oE '__[A-Za-z0-9_]+_chk|__stack_chk_fail' | sort -u)

	expect "$name is a position-independent executable (ELF type DYN, FLAGS_1 PIE)" \
		"$header / ${dynamic:-no FLAGS entry}" \
		bash -c 'grep -q "DYN" <<<"$1" && grep -Eq "FLAGS_1.*PIE" <<<"$2"' _ "$header" "$dynamic"
	expect "$name binds every symbol at load (BIND_NOW)" "${dynamic:-no FLAGS entry}" \
		grep -Eq 'BIND_NOW|FLAGS_1.*[[:space:]]NOW' <<<"$dynamic"
	expect "$name has a GNU_RELRO segment" "$segments" grep -q GNU_RELRO <<<"$segments"
	# the flags column of GNU_STACK: RW, never RWE
	expect "$name has a non-executable stack (GNU_STACK without E)" "${stack:-no GNU_STACK}" \
		bash -c '[ -n "$1" ] && ! grep -Eq "RWE|[[:space:]]E[[:space:]]" <<<"$1"' _ "$stack"
	expect "$name calls fortified libc functions (__*_chk)" "${imports:-no __*_chk import}" \
		bash -c 'grep -v "^__stack_chk_fail$" <<<"$1" | grep -q "_chk$"' _ "$imports"
	expect "$name is built with stack protectors (__stack_chk_fail)" \
		"${imports:-no __*_chk import}" grep -qx '__stack_chk_fail' <<<"$imports"
	if [ "$(uname -m)" = x86_64 ]; then
		# main's first instruction: endbr64 with -fcf-protection
		first=$(objdump -d --no-show-raw-insn "$bin" |
			awk '/<main>:$/ { getline; print; exit }')
		expect "$name's functions start with endbr64 (-fcf-protection)" \
			"${first:-no main symbol}" grep -q endbr64 <<<"$first"
	fi
done
exit "$TAP_FAILED"
