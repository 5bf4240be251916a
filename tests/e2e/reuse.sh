# SPDX-License-Identifier: GPL-2.0-only
# What test_pid_reuse and test_tid_reuse share: a traced backend that
# waits and exits, its pid taken by something that is not PostgreSQL,
# and the checks that nothing of the latter is ever reported or listed.
# Sourced after lib.sh; the reuser writes "reused ..." to
# $E2E_DIR/reuse.out once it holds the pid, and holds it, blocking 250 ms
# at a time, 16 times at least and until $REUSE_RELEASE exists (the
# test's checks that need it to hold the pid are done by then).

# PostgreSQL, pgoffd, a watch ($w) and a backend that waited and is gone
# ($victim, its pid)
reuse_traced_backend_gone() {
	REUSE_RELEASE=$E2E_DIR/reuse.release
	pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
	e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
	# (its timeout outlasts the waits below on a loaded machine; the test
	# stops it once it has a wait that came after the reuser's)
	member watch --view both --min 1ms --json --timeout 30s >"$E2E_DIR/watch.json" 2>"$E2E_DIR/watch.err" &
	w=$!
	watchers 1 || { not_ok "the watch subscribed"; exit 1; }
	# a backend that waits (traced: it has per-thread state in the kernel), then exits
	psql -X -q -At -c "select pg_backend_pid()" -c "select pg_sleep(0.02) from generate_series(1, 20)" \
		>"$E2E_DIR/backend.out" 2>&1
	victim=$(head -n1 "$E2E_DIR/backend.out")
	wait_for 5 gone "$victim"
}

# pgoffd's prober scans /proc once a second (slower under ASan): ps must
# stop listing the pid while the reuser still holds it
unlisted_while_reused() {
	ps_json=$(member ps --json)
	! jq -e --argjson p "$victim" 'any(.processes[]; .pid == $p)' <<<"$ps_json" >/dev/null &&
		grep -q reused "$E2E_DIR/reuse.out" && [ -e "/proc/$victim" ]
}

# reuse_check REUSER_JOB WHO [PID]: wait for the reuser to hold the pid,
# for ps to drop it, let the reuser end, and for a later wait to reach
# the watch (so that the watch was there for all of the reuser's), then
# check; WHO names the reuser in the checks; PID: another pid whose
# events are the reuser's too (the process of a reusing thread)
reuse_check() {
	local reuser=$1 who=$2 other=${3:-0} unlisted reuse_rc before reused after_pid
	local watching=false

	wait_for 10 grep -qs reused "$E2E_DIR/reuse.out" ||
		note "the $who did not get the pid in 10 s: $(head -c 300 "$E2E_DIR/reuse.out")"
	wait_for 15 unlisted_while_reused; unlisted=$?
	touch "$REUSE_RELEASE"
	wait "$reuser"; reuse_rc=$?
	# a backend's wait after the reuser's last: once the watch has it,
	# it has had the reuser's (pgoffd passes events on in order)
	backend_sleep 0.1
	after_pid=$SLEEPER_PID
	wait "$SLEEPER_JOB"
	later_wait() { jqe -s --argjson p "${after_pid:-0}" 'any(.[]; .pid == $p)' "$E2E_DIR/watch.json"; }
	wait_for 15 later_wait && kill -0 "$w" 2>/dev/null && watching=true
	# (it has all it must: its 30 s timeout is only a bound)
	kill "$w" 2>/dev/null
	{ wait "$w"; } 2>/dev/null
	# (whole lines: it was stopped while it may have been writing one)
	jq -R -c 'fromjson? // empty' "$E2E_DIR/watch.json" >"$E2E_DIR/watch.whole"
	note "backend pid $victim; $(cat "$E2E_DIR/reuse.out")"

	check "the backend's pid was reused by the $who, which ran to its end" [ "$reuse_rc" = 0 ]
	check "the watch was still running when a later backend's wait reached it" $watching ||
		note "watch: $(head -c 300 "$E2E_DIR/watch.err")"
	# the test can fail: the pid was traced and reported before it was reused
	before=$(jq -c --argjson p "$victim" 'select((.pid == $p or .tid == $p) and .comm == "postgres")' \
		"$E2E_DIR/watch.whole" | wc -l)
	check "the backend's waits were reported ($before events of pid $victim)" [ "$before" -gt 0 ]
	# the reuser's comm is not postgres: anything else of that pid was its
	reused=$(jq -c --argjson p "$victim" --argjson o "$other" \
		'select(.pid == $p or .tid == $p or (.pid == $o and $o != 0)) | select(.comm != "postgres")' \
		"$E2E_DIR/watch.whole")
	[ -z "$reused" ] || note "reported for the reused pid: $reused"
	check "nothing reported for the $who that reused the pid (the watch ran on: it had a later backend's wait, pid ${after_pid:-?})" \
		bash -c "$watching && [ -z '$reused' ]"
	if [ "$unlisted" != 0 ]; then
		not_ok "pgoffctl ps does not list the reused pid while the $who holds it"; note "ps: $ps_json"
	else
		ok "pgoffctl ps does not list the reused pid while the $who holds it"
	fi
}
