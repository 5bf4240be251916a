#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# watch --resume SEQ: a client that saw events up to SEQ, then pgoffd is
# killed (-9) while it writes and started again; --resume SEQ gives every
# stored event after SEQ exactly once, in order, those of both runs; seqs
# are never given twice across the restart; events no longer stored are
# told as a "dropped" item of cause "expired".
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
STATE=$E2E_DIR/state
e2e_start_broker --record-min 1ms || { not_ok "start pgoffd"; exit 1; }

FILTER=(--view intervals --pg-wait Timeout:PgSleep)

sleep_load 3000
# a client sees some of it, then goes away
member watch "${FILTER[@]}" --json --count 300 --timeout 20s >"$E2E_DIR/first.json" 2>"$E2E_DIR/first.err"
rc=$?
last_seen=$(jq -s 'map(.seq) | max' "$E2E_DIR/first.json")
check "the first client saw 300 events (exit $rc, last seq $last_seen)" \
	bash -c "[ $rc = 0 ] && [ \$(wc -l <'$E2E_DIR/first.json') = 300 ]"
sleep 0.5
before=$(member history --json | jq .last_seq)
kill -KILL "$E2E_BROKER_PID"; wait "$E2E_BROKER_PID" 2>/dev/null; E2E_BROKER_PID=
e2e_start_broker --record-min 1ms || { not_ok "restart pgoffd after kill -9"; exit 1; }
start_seq=$(sed -n 's/.*events go on from seq \([0-9]*\).*/\1/p' "$E2E_DIR/pgoffd.log")
note "killed with last seq stored $before; the restart goes on from seq $start_seq"
check "after kill -9, seqs go on past every one given before" \
	bash -c "[ -n '$start_seq' ] && [ '$start_seq' -gt '$before' ] && [ '$start_seq' -gt '$last_seen' ]"
sleep_load_wait
sql -c "select pg_sleep(0.0012) from generate_series(1, 50)" >/dev/null
sleep 0.5

# replay_all OUT ERR [watch options]: as the member, until the replay has
# reached the store's end (and 0.3 s more), then stop it
replay_all() {
	local out=$1 err=$2; shift 2
	as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --json --timeout 60s "$@" \
		>"$out" 2>"$err" &
	local job=$!
	for _ in $(seq 600); do grep -q "stored events replayed" "$err" && break; sleep 0.1; done
	sleep 0.3
	kill "$job" 2>/dev/null; wait "$job" 2>/dev/null
}
replay_all "$E2E_DIR/resume.json" "$E2E_DIR/resume.err" "${FILTER[@]}" --resume "$last_seen"
replay_all "$E2E_DIR/all.json" "$E2E_DIR/all.err" "${FILTER[@]}" --since 1h
jq -r .seq "$E2E_DIR/resume.json" >"$E2E_DIR/resume.seq"
jq -r .seq "$E2E_DIR/all.json" | awk -v l="$last_seen" '$1 > l' >"$E2E_DIR/want.seq"
n_resume=$(wc -l <"$E2E_DIR/resume.seq")
n_after=$(awk -v s="$start_seq" '$1 >= s' "$E2E_DIR/resume.seq" | wc -l)
note "--resume $last_seen: $n_resume events ($n_after from after the restart); the store holds $(wc -l <"$E2E_DIR/want.seq") after $last_seen"
note "stderr: $(head -c 300 "$E2E_DIR/resume.err")"
check "--resume: nothing at or before the seq it gave" \
	bash -c "[ $n_resume -gt 0 ] && [ \$(head -n1 '$E2E_DIR/resume.seq') -gt '$last_seen' ]"
check "--resume: in seq order, none twice" sort -n -c -u "$E2E_DIR/resume.seq"
check "--resume: every stored event after it, of both runs (as a full replay has them)" \
	bash -c "[ $n_after -gt 0 ] && cmp -s '$E2E_DIR/resume.seq' '$E2E_DIR/want.seq'"
check "--resume: nothing was expired" bash -c "! grep -q expired '$E2E_DIR/resume.err'"

# Events the store no longer holds: a 1 MiB cap, filled past it.
e2e_stop_broker TERM
e2e_start_broker --record-min 0 --record-max-size 1M || { not_ok "start pgoffd, 1 MiB cap"; exit 1; }
sleep_load 1500
sleep_load_wait
h=$(member history --json)
first=$(jq .first_seq <<<"$h")
note "with a 1 MiB cap: $h"
replay_all "$E2E_DIR/exp.json" "$E2E_DIR/exp.err" "${FILTER[@]}" --resume "$last_seen"
note "stderr: $(head -c 300 "$E2E_DIR/exp.err")"
want=$((first - last_seen - 1))
check "--resume before what is held: a dropped item says how many seqs expired ($want)" \
	grep -q "^pgoffctl: warning: $want events lost before this point (expired: no longer stored" "$E2E_DIR/exp.err"
check "... then the replay starts at the oldest held" \
	bash -c "[ \$(head -n1 '$E2E_DIR/exp.json' | jq .seq) -ge $first ]"
