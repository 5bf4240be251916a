#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `sudo make demo`: a throwaway PostgreSQL 15 cluster, pgoffd, a real row
# lock wait, and pgoffctl showing it to an unprivileged member of the group.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
	echo "the demo loads BPF programs and creates test users: run it with sudo" >&2
	exit 1
fi
CI=true e2e_require >/dev/null
e2e_setup
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "starting a throwaway PostgreSQL 15 cluster in $E2E_DIR"
pg_start deadlock_timeout=10s || exit 1
sql -c "create table account(id int primary key, balance int); insert into account values (1, 100);"

say "starting pgoffd (as root; group '$E2E_GROUP' may connect)"
e2e_start_broker || exit 1
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" status

say "session A locks a row for 1.5 s; session B wants the same row"
sql -c "begin" -c "update account set balance = balance - 10 where id = 1" \
	-c "select pg_sleep(1.5)" -c "commit" >/dev/null &
a_job=$!
sleep 0.2
sql -c "update account set balance = balance + 10 where id = 1" >/dev/null &
b_job=$!
b_pid=$(psa_wait_for "wait_event_type = 'Lock'" | cut -d'|' -f1)
echo "session B is backend $b_pid"

say "as user $E2E_MEMBER (no sudo): pgoffctl watch --pid $b_pid --min 100ms --count 1 --json"
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" watch --pid "$b_pid" --min 100ms \
	--count 1 --timeout 20s --json | jq .
wait "$a_job" "$b_job"
say "a table for humans: pgoffctl watch --min 250ms (3 s of it)"
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --min 250ms --timeout 3s &
w_job=$!
sleep 0.3
sql -c "select pg_sleep(0.3)" >/dev/null
wait "$w_job"
say "pgbench (TPC-B, 4 clients) for 6 s: pgoffctl top --by wait, and a flame graph"
"$PGBIN/pgbench" -i -q -s 2 >/dev/null 2>&1
"$PGBIN/pgbench" -c 4 -j 2 -T 6 >/dev/null 2>&1 &
bench_job=$!
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" flame --duration 5s --min 50us \
	--title "pgbench TPC-B, 4 clients: off-CPU time" >"$E2E_DIR/demo.svg" &
flame_job=$!
sleep 1
as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" top --by wait --once --interval 3s --limit 8
wait "$bench_job" "$flame_job"
svg=${PGOFF_DEMO_SVG:-$PWD/pgoff-demo-offcpu.svg}
cp "$E2E_DIR/demo.svg" "$svg" && echo "flame graph written to $svg (open it in a browser)"

say "and as user $E2E_OUTSIDER, who is not in the group"
as "$E2E_OUTSIDER" "$PGOFFCTL" --socket "$SOCK" status
echo "exit code: $?"
say "done; stopping pgoffd and the cluster"
