#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run the test tiers and count TAP-style lines ("ok - x" / "not ok - x").
# usage: tests/run.sh unit|selinux|e2e|all [--build COMMAND] UNIT_TEST_BINARIES...
#        [-- FUZZ_TARGETS...]
# --build: what builds the tests, run first (make test's builds, so that
# the test roots are built beside them). E2E_TESTS: a glob of the
# end-to-end tests to run (default test_*).
# Ends with "N passed, N failed"; exits 1 if anything failed.
set -u
mode=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
# the cached test roots' age is judged once for the whole run: a root that
# expired in its middle would be rebuilt between the plain and the
# sanitizer pass, from newer packages
export PGOFF_ROOT_NOW=${PGOFF_ROOT_NOW:-$(date +%s)}
JOBS=${JOBS:-$(nproc)}	# unit tests at a time
# what this run made in /tmp goes with it, also when it is interrupted
temps=()
trap 'rm -rf "${temps[@]}"; [ -n "${roots_pid:-}" ] && kill "$roots_pid" 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP

count() {	# reads a test's output, echoes it, counts its lines
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		printf '%s\n' "$line"
		case $line in
		"ok - "*) pass=$((pass + 1)) ;;
		"not ok - "*) fail=$((fail + 1)) ;;
		esac
	done
}

# report NAME STATUS FILE: a test's output, counted; a test program that
# exited non-zero without a "not ok" line failed too
report() {
	local rc=$2
	[[ $rc =~ ^[0-9]+$ ]] || rc=127	# its status was not written
	count <"$3"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$3"; then
		echo "not ok - $1 exited with status $rc"
		fail=$((fail + 1))
	fi
}

run() {	# NAME COMMAND...
	local name=$1 out rc; shift
	out=$(mktemp) && temps+=("$out")
	"$@" >"$out" 2>&1; rc=$?
	report "$name" "$rc" "$out"
}

# run_units: the tests in units, JOBS at a time (each is one process
# with files of its own), their outputs in their order
run_units() {
	local dir i
	dir=$(mktemp -d) && temps+=("$dir")
	for i in "${!units[@]}"; do printf '%s\0%s\0' "$i" "${units[$i]}"; done |
		xargs -0 -n 2 -P "$JOBS" sh -c '"$2" >"$0/$1.out" 2>&1; echo $? >"$0/$1.rc"' "$dir"
	for i in "${!units[@]}"; do
		report "$(basename "${units[$i]}")" "$(cat "$dir/$i.rc" 2>/dev/null)" \
			"$dir/$i.out"
	done
}

# The seconds an end-to-end test may take: its own "# e2e-timeout: N"
# line near the top, else E2E_TIMEOUT (300). Past it, the test is killed
# and fails, after what it printed so far.
e2e_limit() {
	local n
	n=$(head -n 30 "$1" | sed -n 's/^# e2e-timeout: *\([0-9][0-9]*\).*/\1/p' | head -n1)
	echo "${n:-${E2E_TIMEOUT:-300}}"
}

# Why a test has no sanitizer pass: its own "# e2e-no-sanitizer-pass:
# REASON" line near the top (a test of what the plain build only makes,
# such as the Debian packages, would repeat its first pass)
e2e_no_sanitizer_pass() {
	head -n 30 "$1" | sed -n 's/^# e2e-no-sanitizer-pass: *//p' | head -n1
}

# run_e2e LABEL TEST [env...]: one end-to-end test, under the lock that
# keeps two runs on one machine apart (they share test users and kill
# each other's processes), timed and bounded
run_e2e() {
	local label=$1 t=$2; shift 2
	local limit out rc started
	limit=$(e2e_limit "$t")
	started=$(mktemp)
	# (timed from when the lock is taken: another run may hold it; -o:
	# the lock's fd is not handed down, so a cluster or daemon a killed
	# test left behind holds no lock that every later test waits on)
	out=$(env "$@" flock -o "${E2E_LOCK:-/tmp/pgoff-e2e.lock}" sh -c 'date +%s >"$0"; exec "$@"' \
		"$started" timeout --kill-after=20 "$limit" bash "$t" 2>&1); rc=$?
	count <<<"$out"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "not ok - $label ran past its limit of $limit s (killed; its output is above)"
		fail=$((fail + 1))
	elif [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' <<<"$out"; then
		echo "not ok - $label exited with status $rc"
		fail=$((fail + 1))
	fi
	echo "# $label: $(($(date +%s) - $(cat "$started" 2>/dev/null || date +%s))) s (limit $limit s)"
	rm -f "$started"
}

# make test (all, as root): the e2e tests' roots, built in the background
# from the start, beside the builds (a fresh machine's take minutes, each
# a debootstrap). Not waited for: an e2e test that needs a root still
# being built waits for it (its lock), and those come after the first
# minutes. What it did is told at the end.
roots_pid= ROOTS_PREFETCH_LIMIT=1500
if [ "$mode" = all ] && [ "$(id -u)" = 0 ]; then
	roots_log=$(mktemp) && temps+=("$roots_log")
	# (bounded: a mirror that stops answering must not hang the run; the
	# tests that need a root not built then build it, within their limit)
	timeout --kill-after=20 "$ROOTS_PREFETCH_LIMIT" bash "$here/e2e/roots_prefetch.sh" \
		>"$roots_log" 2>&1 &
	roots_pid=$!
fi

if [ "${1:-}" = --build ]; then
	build=$2
	shift 2
	if ! bash -c "$build"; then
		echo "not ok - the tests' build ($build)"
		[ -n "$roots_pid" ] && kill "$roots_pid" 2>/dev/null
		echo "0 passed, 1 failed"
		exit 1
	fi
fi

units=() fuzzers=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do units+=("$1"); shift; done
[ $# -gt 0 ] && shift && fuzzers=("$@")

if [ ${#units[@]} -gt 0 ]; then
	echo "# unit tests ($JOBS at a time)"
	run_units
fi

if [ ${#fuzzers[@]} -gt 0 ]; then
	echo "# fuzzing (${FUZZ_SECONDS:-20} s a target)"
	run fuzz "$here/fuzz/run.sh" "${FUZZ_SECONDS:-20}" "${fuzzers[@]}"
fi

if [ "$mode" = all ] || [ "$mode" = selinux ]; then
	echo "# SELinux policy (offline: linked with Debian's base policy, setools)"
	run test_policy.sh bash "$here/selinux/test_policy.sh"
fi

if [ "$mode" = all ] || [ "$mode" = e2e ]; then
	echo "# end-to-end tests (root, BPF, PostgreSQL 15)"
	# one initdb for the run's clusters (lib.sh's pg_initdb)
	E2E_PG_TEMPLATES=$(mktemp -d /tmp/pgoff-e2e-templates.XXXXXX) &&
		chmod 755 "$E2E_PG_TEMPLATES" && temps+=("$E2E_PG_TEMPLATES")
	export E2E_PG_TEMPLATES
	for t in "$here"/e2e/${E2E_TESTS:-test_*}.sh; do
		run_e2e "$(basename "$t")" "$t"
	done
	echo "# end-to-end tests with the sanitizer build (ASan, LSan, UBSan)"
	for t in "$here"/e2e/${E2E_TESTS:-test_*}.sh; do
		why=$(e2e_no_sanitizer_pass "$t")
		if [ -n "$why" ]; then
			echo "# asan $(basename "$t"): no second pass: $why"
			continue
		fi
		run_e2e "asan $(basename "$t")" "$t" PGOFF_BUILD=build/asan \
			PGOFF_SANITIZE=1 E2E_LABEL=asan
	done
fi

if [ -n "$roots_pid" ]; then
	echo "# the test roots, built in the background:"
	wait "$roots_pid"
	rc=$?
	sed 's/^\([^#]\)/# \1/' "$roots_log"
	[ "$rc" = 124 ] || [ "$rc" = 137 ] &&
		echo "# ... not all ready in $ROOTS_PREFETCH_LIMIT s (stopped): the tests built theirs"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
