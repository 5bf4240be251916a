#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# record-user-stacks: a row-lock wait that ended before any client
# connected is replayed with PostgreSQL's call path (ProcSleep,
# LockAcquireExtended) to a watch --user-stack, without it to a watch that
# did not ask, and drawn by flame --since --user-stack; without the option
# stored intervals keep no user stack.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"

# replay [watch options]: B's stored lock wait interval, replayed
replay() {
	member watch --since 1h --view intervals --pid "$B_PID" --pg-wait Lock --json \
		--count 1 --timeout 10s "$@" 2>>"$E2E_DIR/replay.err"
}

e2e_start_broker --record-min 1ms --record-user-stacks yes ||
	{ not_ok "start pgoffd"; exit 1; }
check "history says user stacks are recorded" \
	jqe '.record_user_stacks == true' <<<"$(member history --json)"
row_lock_wait "update t set v = 1 where id = 1"
u=$(replay --user-stack)
note "replayed with --user-stack: $(cut -c1-900 <<<"$u")"
check "watch --since --user-stack: B's lock wait has ProcSleep and LockAcquireExtended in its user stack" \
	jqe '.pg.wait_event_type == "Lock" and (.user_stack | index("ProcSleep") != null and index("LockAcquireExtended") != null) and (has("user_stack_error") | not)' <<<"$u"
p=$(replay)
note "replayed without: $(cut -c1-300 <<<"$p")"
check "watch --since without --user-stack: the same event, without it" \
	jqe "(.seq == $(jq .seq <<<"${u:-null}")) and (has(\"user_stack\") | not)" <<<"$p"
member flame --since 1h --folded --user-stack --pid "$B_PID" >"$E2E_DIR/flame.txt" 2>"$E2E_DIR/flame.err"
rc=$?
note "flame --since --user-stack: $(grep -m1 '^Lock:transactionid;' "$E2E_DIR/flame.txt" | cut -c1-600) $(head -c 200 "$E2E_DIR/flame.err")"
check "flame --since --user-stack: Lock:transactionid; wait: lock; PostgreSQL's frames down to ProcSleep, then the kernel's (exit $rc)" \
	bash -c "[ $rc = 0 ] && grep -Eq '^Lock:transactionid;wait: lock;(.*;)?LockAcquireExtended;(.*;)?ProcSleep;(.*;)?epoll_wait' '$E2E_DIR/flame.txt'"

e2e_stop_broker TERM
e2e_start_broker --record-min 1ms || { not_ok "restart pgoffd without record-user-stacks"; exit 1; }
row_lock_wait "update t set v = 2 where id = 1"
u=$(replay --user-stack)
note "replayed with --user-stack, not recorded: $(cut -c1-300 <<<"$u")"
check "without record-user-stacks the stored interval has no user stack" \
	jqe '.wait == "lock" and (has("user_stack") | not)' <<<"$u"
note "replay errors: $(head -c 300 "$E2E_DIR/replay.err")"
