#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# No silent loss: a burst larger than a tiny ring buffer, with pgoffd
# stopped while it runs, and every interval that passed the kernel's
# filter is either delivered or reported dropped (with its cause).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
# --record no: the recorder would widen the kernel's filter past the watch's
e2e_start_broker --ringbuf-size 4096 --record no || { not_ok "start pgoffd"; exit 1; }
counter_in() { jq ".counters.$1" <<<"$2"; }	# counter_in NAME STATUS-JSON

before=$(member status --json)
# Timeout is pushed into the kernel (a class, not one event): the watch
# asks for the class, so the kernel passes exactly its filter (the
# backends' contention can add Timeout:SpinDelay to the pg_sleep waits).
# (its timeout leaves the burst seconds on a loaded machine)
member watch --view intervals --pg-wait Timeout --min 100us --json --timeout 20s \
	>"$E2E_DIR/burst.json" 2>"$E2E_DIR/burst.err" &
w=$!
watchers 1
# some waits read as they come (delivered, or lost if pgoffd falls
# behind: counted either way), then the burst
sql -c "select pg_sleep(0.001) from generate_series(1, 100)" >/dev/null
# the whole burst while nobody reads the ring: pgoffd is stopped before
# it starts and goes on once it is over, so the ring must fill however
# slowly the burst's psql started
kill -STOP "$E2E_BROKER_PID"
burst=()
for i in $(seq 8); do
	sql -c "select pg_sleep(0.001) from generate_series(1, 300)" >/dev/null &
	burst+=($!)
done
wait "${burst[@]}"
kill -CONT "$E2E_BROKER_PID"
# the next tick tells the watch the losses
told_lost() { grep -q "events lost before this point" "$E2E_DIR/burst.err"; }
wait_for 10 told_lost || note "no loss told in 10 s: $(head -c 300 "$E2E_DIR/burst.err")"
after=$(member status --json)
wait "$w"
rc=$?

passed=$(( $(counter_in events "$after") - $(counter_in events "$before") +
	   $(counter_in ringbuf_full "$after") - $(counter_in ringbuf_full "$before") ))
ring_lost=$(( $(counter_in ringbuf_full "$after") - $(counter_in ringbuf_full "$before") ))
delivered=$(grep -c '"type":"offcpu"' "$E2E_DIR/burst.json")
told=$(sed -n 's/.*: \([0-9]*\) events lost before this point (.*/\1/p' "$E2E_DIR/burst.err" |
	awk '{ s += $1 } END { print s + 0 }')
note "passed the kernel filter: $passed; delivered: $delivered; told lost: $told" \
	"($(grep -o '(.*)' "$E2E_DIR/burst.err" | sort | uniq -c | tr -s ' ' | tr '\n' ';'))"
check "watch ran to its timeout (exit 0)" [ "$rc" = 0 ]
check "the burst overflowed the 4 KiB ring buffer ($ring_lost lost there)" [ "$ring_lost" -gt 0 ]
check "delivered + reported dropped = passed the filter ($delivered + $told = $passed)" \
	[ $((delivered + told)) = "$passed" ]
check "status counts the loss under its cause" [ "$(counter_in ringbuf_full "$after")" -gt 0 ]
