# SPDX-License-Identifier: GPL-2.0-only
# The toolkit every shell test sources (tests/e2e/lib.sh, tests/unit/*.sh,
# tests/selinux/test_policy.sh): TAP-style lines that tests/run.sh counts,
# the no-skip policy, and wait_for.
#
# Output: "ok - x" / "not ok - x" lines, "# ..." notes. E2E_LABEL labels
# them, so that the plain and the sanitizer runs are told apart.
# TAP_FAILED is 1 once a check failed: a script ends with exit "$TAP_FAILED".
#
# The no-skip policy: a missing prerequisite skips, with its reason, on a
# developer's box; with CI=true it is a failure, never a skip, so that CI
# cannot pass without running a test.

TAP_FAILED=0
ok() { echo "ok - ${E2E_LABEL:+[$E2E_LABEL] }$*"; }
not_ok() {
	echo "not ok - ${E2E_LABEL:+[$E2E_LABEL] }$*"
	TAP_FAILED=1
}
note() { echo "# $*"; }
# check NAME COMMAND...: one test line from a command's status, which it
# returns, so that "check ... || note WHAT-IT-SAW" tells a failure
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; return 1; fi
}

# tap_skip WHAT WHY: WHAT cannot be tested here because of WHY: a failure
# in CI, a "# SKIP" line elsewhere
tap_skip() {
	if [ "${CI:-}" = true ]; then
		not_ok "$1 ($2)"
	else
		echo "# SKIP $1: $2 (set CI=true to make this a failure)"
	fi
}

# tap_skip_file WHAT WHY: as tap_skip, for the whole script: it ends here
# (status 1 in CI, 0 elsewhere)
tap_skip_file() {
	tap_skip "$1" "$2"
	exit "$TAP_FAILED"
}

# missing TOOL WHAT: true (and tap_skip WHAT) when TOOL is not installed
missing() {
	command -v "$1" >/dev/null && return 1
	tap_skip "$2" "$1 is not installed"
	return 0
}

# wait_for SECONDS COMMAND...: run COMMAND every WAIT_STEP seconds (0.05)
# until it succeeds, for up to SECONDS (a decimal). When it gives up it
# says what it waited for (on stderr: callers may capture stdout) and
# returns 1; callers decide whether that fails a test.
wait_for() {
	local secs=$1; shift
	local whole=${secs%.*} frac=
	[[ $secs == *.* ]] && frac=${secs#*.}
	frac=${frac}000000
	local end=$((${EPOCHREALTIME/./} + 10#${whole:-0} * 1000000 + 10#${frac:0:6}))
	while :; do
		"$@" && return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || break
		sleep "${WAIT_STEP:-0.05}"
	done
	echo "# gave up after $secs s waiting for: $*" >&2
	return 1
}

# gone PID: true once the process PID is no longer there (for wait_for)
gone() { ! kill -0 "$1" 2>/dev/null; }
