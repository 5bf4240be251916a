#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight record on a small file system of its own (an 8 MiB tmpfs
# mounted here), shared with another file as PostgreSQL's WAL would share
# it: when the other file leaves less than record-keep-free free, pgoffd
# removes the record's oldest segments to keep it free, says so in its log,
# history and status; when even that is not enough (record-keep-free
# raised by a reload), recording stops (live streaming goes on), each lost
# event counted once as a kept-free drop; on a file system filled to the
# last byte (record-keep-free 0), each lost event is counted once as a
# full-disk drop, not also as an error.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

FS=$E2E_DIR/fs
STATE=$FS/state
mkdir -p "$FS"
mount -t tmpfs -o size=8m,mode=0755 pgoff-e2e "$FS" || { not_ok "mount an 8 MiB tmpfs"; exit 1; }
# pgoffd first (it holds files there), then the mount, then the rest
trap 'e2e_stop_broker TERM; umount "$FS" 2>/dev/null || umount -l "$FS"; e2e_cleanup' EXIT

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }

# Statements of about 1 KiB of random text each, so that the record grows
# fast (record-queries full stores the text, which compresses little).
python3 - "$E2E_DIR/load.sql" <<'PY'
import random, string, sys
chars = string.ascii_letters + string.digits
with open(sys.argv[1], "w") as f:
    for _ in range(1500):
        f.write("select pg_sleep(0.0005), '%s';\n" % "".join(random.choices(chars, k=900)))
PY
# load: 4 sessions run the statements; load_wait waits for them
load() {
	LOAD_JOBS=()
	for _ in 1 2 3 4; do
		sql -f "$E2E_DIR/load.sql" >/dev/null &
		LOAD_JOBS+=($!)
	done
}
load_wait() { wait "${LOAD_JOBS[@]}"; }
# avail: the bytes an unprivileged user may still write on the tmpfs
avail() { stat -f -c '%a %S' "$FS" | awk '{ print $1 * $2 }'; }
# fill_to BYTES: the other file grows until BYTES are left free
fill_to() {
	local grow=$(( $(avail) - $1 ))
	[ "$grow" -gt 0 ] || return 0
	dd if=/dev/zero bs=4096 count=$((grow / 4096)) status=none >>"$FS/other"
}
hist() { member history --json; }
status_counters() { member status --json | jq -c .counters; }
KEEP=1048576
# counted_once CAUSE: status counts the events not recorded under
# record_dropped_CAUSE (keep_free, disk_full) and no other; history, read
# after it, says it is not recording and counts as many or more there
counted_once() {
	local sc h
	sc=$(status_counters); h=$(hist)
	note "history: $(jq -c '{recording, bytes, segments, counters}' <<<"$h"); status: $(jq -c 'with_entries(select(.key | startswith("record")))' <<<"$sc")"
	check "the events not recorded are counted once, under record_dropped_$1 alone" \
		jqe ".record_dropped_$1 > 0 and ([.record_dropped_disk_full, .record_dropped_keep_free, .record_dropped_error] | map(select(. > 0)) | length) == 1" <<<"$sc"
	check "... history: not recording, counting them there too" \
		jqe "(.recording | not) and .counters.record_dropped_$1 >= $(jq ".record_dropped_$1" <<<"$sc") and .counters.record_dropped_error == 0" <<<"$h"
}

# record-keep-free in the file, so that a reload can change it
echo "record-keep-free = 1M" >"$E2E_DIR/pgoffd.conf"
e2e_start_broker -c "$E2E_DIR/pgoffd.conf" --state-directory "$STATE" --record-min 0 \
	--record-queries full --record-max-size 4M || { not_ok "start pgoffd on the tmpfs"; exit 1; }
h=$(hist)
note "history at start: $(jq -c '{max_bytes, keep_free_bytes, fs_bytes, fs_free_bytes}' <<<"$h")"
check "history: the limits as set, and the file system's size" \
	jqe ".max_bytes == 4194304 and .keep_free_bytes == $KEEP and .fs_bytes == 8388608 and .fs_free_bytes > 0" <<<"$h"

# --- the record grows to its cap (2 MiB of events, 512 KiB segments);
# then another file leaves 512 KiB free: the oldest segments go until
# 1 MiB is free again
grown() { [ "$(hist | jq '.bytes')" -ge 1572864 ]; }
load
wait_for 60 grown
load_wait
before=$(hist)
note "before the other file: $(jq -c '{bytes, segments, first_seq, last_seq, agg: .aggregation.bytes}' <<<"$before"), $(avail) bytes free"
check "the record holds 1.5 MiB of events or more" grown
fill_to 524288
note "the other file: $(stat -c %s "$FS/other") bytes; $(avail) bytes free"
kept_free() { grep -q "removed to keep $KEEP bytes free" "$E2E_DIR/pgoffd.log"; }
wait_for 10 kept_free
after=$(hist)
free_now=$(avail)
note "pgoffd's log: $(grep 'record-keep-free' "$E2E_DIR/pgoffd.log" | head -n 3)"
note "after: $(jq -c '{bytes, segments, first_seq, last_seq, counters, agg: .aggregation}' <<<"$after"), $free_now bytes free"
check "pgoffd removed segments to keep $KEEP bytes free, and logged it" kept_free
# (the record goes on writing its current segments: a little less)
check "... the file system has about $KEEP bytes free again ($free_now)" \
	[ "$free_now" -ge $((KEEP - 65536)) ]
check "... the oldest went: the first seq held moved on, the last did not" \
	jqe ".first_seq > $(jq .first_seq <<<"$before") and .last_seq >= $(jq .last_seq <<<"$before")" <<<"$after"
check "... history counts the segments removed for free space" \
	jqe '(.counters.segments_removed_keep_free + .aggregation.segments_removed_keep_free) > 0 and .recording' <<<"$after"
sc=$(status_counters)
note "status counters: $(jq -c 'with_entries(select(.key | startswith("record")))' <<<"$sc")"
check "... and so does status" jqe '.record_segments_removed_keep_free > 0' <<<"$sc"

# --- record-keep-free raised past what the record could free (a reload):
# its older segments go, it is still not enough; recording stops, live
# streaming goes on
echo "record-keep-free = 7M" >"$E2E_DIR/pgoffd.conf"
kill -HUP "$E2E_BROKER_PID"
raised() { [ "$(hist | jq .keep_free_bytes)" = 7340032 ]; }
wait_for 10 raised
check "a reload changes record-keep-free at once" raised
stopped() { grep -q "recording stopped: its file system would have less than record-keep-free" "$E2E_DIR/pgoffd.log"; }
wait_for 10 stopped
check "with too little free even without its older segments, recording stops, with a log line" stopped
member watch --view intervals --json --count 1 --timeout 30s >"$E2E_DIR/live.json" 2>"$E2E_DIR/live.err" &
watch_job=$!
# (pgoffd's own cluster is never quiet: the watch may have its one event,
# and be gone, before it could be counted as a subscriber)
watching() { ! kill -0 "$watch_job" 2>/dev/null || subscribers_at_least 1; }
wait_for 10 watching
load
load_wait
wait "$watch_job"
check "live streaming goes on (a watch got an event)" jqe '.seq > 0' "$E2E_DIR/live.json" ||
	note "watch: $(head -c 300 "$E2E_DIR/live.err")"
counted_once keep_free

# --- record-keep-free 0 and the file system filled to its last byte: each
# event lost is a full-disk drop, and only that
e2e_stop_broker TERM
rm -f "$FS/other"
e2e_start_broker --state-directory "$STATE" --record-min 0 --record-queries full \
	--record-max-size 4M --record-keep-free 0 || { not_ok "restart pgoffd, record-keep-free 0"; exit 1; }
dd if=/dev/zero of="$FS/other" bs=4096 status=none 2>/dev/null
note "the other file: $(stat -c %s "$FS/other") bytes; $(avail) bytes free"
load
load_wait
full() { [ "$(status_counters | jq .record_dropped_disk_full)" -gt 0 ]; }
wait_for 10 full
counted_once disk_full
check "pgoffd logged that recording stopped for a full disk" \
	grep -q "recording stopped: No space left on device" "$E2E_DIR/pgoffd.log"
