#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Kernel wait types reached by real workloads (the others are in the
# other tests: lock, io from a cold read, poll from an idle client, sleep
# from pg_sleep): cpu from a backend preempted by a SCHED_FIFO spinner on
# its CPU, net from a client that stops reading a COPY, io from the WAL
# flush of commits.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
RT_SPINNER=
trap 'kill $RT_SPINNER 2>/dev/null; e2e_cleanup' EXIT

# --- cpu: runnable but not running: the busy backend shares its CPU
# with rt_spinner, which preempts it for 1 ms every 1.3 ms (unpinned CPU
# hogs could leave it a CPU, and EEVDF and autogroups decide how often
# they preempt it)
cpu=$(($(nproc) - 1))
pin() { taskset -pc "$cpu" "$1" >/dev/null; }
# a loop, not a set: generate_series in FROM spills to a temp file, and a
# backend preempted while writing it is in IO:BufFileWrite
psql -X -q -At -c "select pg_backend_pid()" \
	-c "do \$\$ begin for i in 1..2000000000 loop end loop; end \$\$" >"$E2E_DIR/cpu.out" 2>/dev/null &
cpu_job=$!
WAIT_STEP=0.01 wait_for 10 [ -s "$E2E_DIR/cpu.out" ] || note "the busy session's psql printed nothing in 10 s"
cpu_pid=$(head -n1 "$E2E_DIR/cpu.out")
check "cpu: the busy backend is pinned to CPU $cpu" pin "${cpu_pid:-0}"
rt_spinner "$cpu"
member watch --view intervals --type cpu --pid "$cpu_pid" --min 1ms --json --count 1 \
	--timeout 20s >"$E2E_DIR/cpu.json"
kill "$RT_SPINNER"; wait "$RT_SPINNER" 2>/dev/null; RT_SPINNER=
sql -c "select pg_cancel_backend($cpu_pid)" >/dev/null	# the loop has served
wait "$cpu_job"
check "cpu: a preempted backend is wait cpu, all of it in the run queue, no waker" \
	jqe '.wait == "cpu" and .kernel_wait == "cpu" and .blocked_ns == 0 and .runq_ns == .duration_ns and (has("waker") | not)' "$E2E_DIR/cpu.json"
check "cpu: PostgreSQL reported no wait event (it was running)" \
	jqe '.pg.wait_event == null' "$E2E_DIR/cpu.json"

# --- net: a client that stops reading a large COPY result, and reads
# again 0.5 s after the watcher subscribed (not after a fixed time: a
# slow run subscribed after the wait had ended, and saw none)
go=$E2E_DIR/net.go
psql -X -q -c "copy (select repeat('x', 2000) from generate_series(1, 20000)) to stdout" |
	{ for _ in $(seq 600); do [ -e "$go" ] && break; sleep 0.05; done
	  sleep 0.5; cat >/dev/null; } &
copy_job=$!
IFS='|' read -r net_pid psa_type psa_event <<<"$(psa_wait_for "wait_event = 'ClientWrite'")"
member watch --view intervals --pid "${net_pid:-1}" --min 300ms --json --count 1 \
	--timeout 20s >"$E2E_DIR/net.json" &
net_watch=$!
watchers 1 || note "the net watcher did not subscribe"
touch "$go"
wait "$net_watch" "$copy_job"
check "net: pg_stat_activity said Client/ClientWrite" [ "$psa_type/$psa_event" = Client/ClientWrite ]
check "net: Client/ClientWrite, wait net (PostgreSQL waits for a writable socket in epoll)" \
	jqe '.pg.wait_event == "ClientWrite" and .wait == "net" and .kernel_wait == "poll"' "$E2E_DIR/net.json"

# --- io: commits wait for the WAL to reach the disk (--type io: a
# preemption inside WALSync is an interval of wait cpu)
member watch --view intervals --pg-wait IO:WALSync --type io --min 100us --json --count 1 \
	--timeout 20s >"$E2E_DIR/wal.json" &
wal_job=$!
watchers 1 || note "the WAL watcher did not subscribe"
sql -c "create table w (v int)"
for _ in $(seq 20); do echo "insert into w values (1);"; done | sql >/dev/null
wait "$wal_job"
check "io: a commit's WAL flush (IO/WALSync) comes as wait io, and the kernel saw io" \
	jqe '.pg.wait_event == "WALSync" and .kernel_wait == "io"' "$E2E_DIR/wal.json"
note "WAL flush stack: $(jq -r '.stack | join(" < ")' "$E2E_DIR/wal.json" 2>/dev/null | cut -c1-200)"
