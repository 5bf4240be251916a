#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# record-queries: a lock wait that ended before any client connected is
# replayed with its SQL redacted (literals as $n, comments dropped) to a
# query-group member, without SQL to a member outside the query group;
# full stores the text as it is; off (the default) stores none.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int, note text); insert into t values (1, 0, 'x');"

# replay WHO: B's stored lock wait intervals as WHO sees them replayed
replay() {
	as "$1" "$PGOFFCTL" --socket "$SOCK" watch --since 1h --view intervals \
		--pid "$B_PID" --pg-wait Lock --json --count 1 --timeout 10s 2>>"$E2E_DIR/replay.err"
}

# redacted, to a query-group member and to a member outside it
e2e_start_broker --record-min 1ms --record-queries redacted \
	--query-group "$E2E_QUERY_GROUP" || { not_ok "start pgoffd"; exit 1; }
check "history says what is kept of SQL" \
	jqe '.record_queries == "redacted"' <<<"$(member history --json)"
row_lock_wait "update t set v = 42 /* app=shop hunter2 */ where id = 1 and note <> 'hunter2'"
q=$(replay "$E2E_QUERIER")
note "query group's replay: $(cut -c1-600 <<<"$q")"
check "a query-group member's replay of B's lock wait has its SQL, literals as \$n, comment dropped" \
	jqe '.type == "offcpu" and .wait == "lock" and .query == "update t set v = $1   where id = $2 and note <> $3" and .query_redacted == true' <<<"$q"
m=$(replay "$E2E_MEMBER")
note "member's replay: $(cut -c1-600 <<<"$m")"
check "a member outside the query group gets the same event without SQL" \
	jqe "(.seq == $(jq .seq <<<"${q:-null}")) and (has(\"query\") | not) and (has(\"query_redacted\") | not)" <<<"$m"
check "no replay shows the literal" bash -c "! grep -q hunter2 <<<'$q$m'"

# full: as it is, to the query group
e2e_stop_broker TERM
e2e_start_broker --record-min 1ms --record-queries full \
	--query-group "$E2E_QUERY_GROUP" || { not_ok "restart pgoffd, full"; exit 1; }
row_lock_wait "update t set v = 42 /* app=shop swordfish */ where id = 1 and note <> 'swordfish'"
q=$(replay "$E2E_QUERIER")
note "query group's replay, full: $(cut -c1-600 <<<"$q")"
check "record-queries full: stored as it is" \
	jqe '.query == "update t set v = 42 /* app=shop swordfish */ where id = 1 and note <> '"'swordfish'"'" and (has("query_redacted") | not)' <<<"$q"

# off (the default): nothing, even for root
e2e_stop_broker TERM
e2e_start_broker --record-min 1ms --query-group "$E2E_QUERY_GROUP" ||
	{ not_ok "restart pgoffd, off"; exit 1; }
check "history says record-queries is off by default" \
	jqe '.record_queries == "off"' <<<"$(member history --json)"
row_lock_wait "update t set v = 42 /* app=shop letmein */ where id = 1 and note <> 'letmein'"
r=$("$PGOFFCTL" --socket "$SOCK" watch --since 1h --view intervals --pid "$B_PID" \
	--pg-wait Lock --json --count 1 --timeout 10s 2>>"$E2E_DIR/replay.err")
note "root's replay, off: $(cut -c1-600 <<<"$r")"
check "record-queries off: root's replay of the wait has no SQL" \
	jqe '.wait == "lock" and (has("query") | not)' <<<"$r"
note "replay errors: $(head -c 300 "$E2E_DIR/replay.err")"
