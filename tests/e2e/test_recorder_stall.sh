#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Stalled replays hold nothing: a member opens 32 connections (its cap),
# 8 replaying subscriptions each (watch --since 1h, as python3 sockets
# that never read), in 4 batches while the record moves on, so that each
# batch's replays read a different oldest segment. While the record turns
# over (a 1 MiB cap), pgoffd holds no removed segment open (ls -l
# /proc/PID/fd: no "(deleted)") and its fd count stays bounded; every
# stalled client is cut off once its socket has taken nothing for
# stuck-timeout (not before), as a live one whose queue stays full.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

STUCK=30
pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker --record-min 0 --record-max-size 1M --stuck-timeout "$STUCK" ||
	{ not_ok "start pgoffd"; exit 1; }
PID=$E2E_BROKER_PID

cat >"$E2E_DIR/stall.py" <<'PY'
# stall.py SOCKET CONNECTIONS SUBSCRIPTIONS OUT LIMIT: subscribe with
# since_ns (an hour ago) and never read; watch for the broker's hangup
# (poll, no read); OUT gets one JSON line when all are closed or LIMIT s
import json, select, socket, sys, time
path, nconn, nsubs, out, limit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
since = time.time_ns() - 3600 * 10**9
conns = []
for _ in range(nconn):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    req = '{"op":"hello","version":1}\n' + "".join(
        '{"op":"subscribe","id":%d,"view":"both","since_ns":%d}\n' % (i + 1, since) for i in range(nsubs))
    s.sendall(req.encode())
    conns.append(s)
t0 = time.monotonic()
p = select.poll()
for s in conns:
    p.register(s, select.POLLRDHUP)
closed = []
while len(closed) < nconn and time.monotonic() - t0 < limit:
    for fd, ev in p.poll(250):
        if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
            closed.append(time.monotonic() - t0)
            p.unregister(fd)
with open(out, "w") as f:
    json.dump({"connections": nconn, "closed": len(closed),
               "first_s": min(closed, default=None), "last_s": max(closed, default=None)}, f)
    f.write("\n")
PY

# deleted: pgoffd's fds on removed files; deleted_bytes: the disk those
# files still take (each file once); fds: all of them
deleted() { ls -l "/proc/$PID/fd" 2>/dev/null | grep -c '(deleted)'; }
deleted_bytes() {
	local f
	for f in /proc/"$PID"/fd/*; do
		case $(readlink "$f") in *'(deleted)') stat -L -c '%i %b %B' "$f" ;; esac
	done | sort -u | awk '{ n += $2 * $3 } END { print n + 0 }'
}
fds() { ls "/proc/$PID/fd" | wc -l; }
clients() { "$PGOFFCTL" --socket "$SOCK" status --json | jq .clients; }
hist() { "$PGOFFCTL" --socket "$SOCK" history --json; }
at_least_clients() { [ "$(clients)" -ge "$1" ]; }

mkdir "$E2E_DIR/stall" && chown "$E2E_MEMBER" "$E2E_DIR/stall"
sleep_load 2000
sleep_load_wait
fds0=$(fds)
note "before any client: $(fds) fds; $(hist | jq -c '{bytes, segments, first_seq, last_seq, removed: .counters.segments_removed}')"

# 4 batches of 8 connections, the record moving on between them
STALL_JOBS=()
for b in 1 2 3 4; do
	as "$E2E_MEMBER" /usr/bin/python3 "$E2E_DIR/stall.py" "$SOCK" 8 8 "$E2E_DIR/stall/$b.json" \
		$((STUCK + 60)) &
	STALL_JOBS+=($!)
	wait_for 20 at_least_clients $((b * 8))
	sleep_load 600
	sleep_load_wait
	note "batch $b: $(clients) clients, $(fds) fds, $(deleted) removed files open; $(hist | jq -c '{first_seq, removed: .counters.segments_removed}')"
done
check "32 stalled connections with 8 replays each are held" at_least_clients 32
fds1=$(fds)
last1=$(hist | jq .last_seq)

# the record turns over: every segment it held when the last batch came
# is removed
turned() { [ "$(hist | jq .first_seq)" -gt "$last1" ]; }
sleep_load 4000
wait_for 40 turned
sleep_load_wait
h=$(hist)
held_deleted=$(deleted); held_bytes=$(deleted_bytes); fds2=$(fds); n=$(clients)
note "after the turnover: $(jq -c '{bytes, segments, first_seq, last_seq, removed: .counters.segments_removed}' <<<"$h")"
note "pgoffd: $fds0 fds before the clients, $fds1 with them, $fds2 after the turnover; $held_deleted removed files open ($held_bytes bytes); $n clients"
ls -l "/proc/$PID/fd" | grep '(deleted)' | head -n 5 | sed 's/^/#   /'
check "the record turned over under the stalled replays (all it held then is gone: seq $last1)" turned
check "pgoffd holds no removed segment open ($held_deleted files, $held_bytes bytes)" \
	[ "$held_deleted" = 0 -a "$held_bytes" = 0 ]
# one fd a connection and at most one a replay, whatever the turnover
check "its fds stay bounded ($fds2 <= $fds1 with the clients, <= $fds0 + 32 + 256)" \
	[ "$fds2" -le "$fds1" -a "$fds2" -le $((fds0 + 32 + 256)) ]
check "the stalled clients are still connected: none cut before stuck-timeout ($n)" [ "$n" -ge 32 ]

# every stalled client is cut off once stuck-timeout has passed
wait "${STALL_JOBS[@]}"
cut=$(cat "$E2E_DIR"/stall/?.json | jq -s '{closed: (map(.closed) | add), first_s: (map(.first_s) | min), last_s: (map(.last_s) | max)}')
note "the stalled clients: $cut (stuck-timeout $STUCK s)"
note "pgoffd's log: $(grep -c 'disconnected (stopped reading)' "$E2E_DIR/pgoffd.log") clients disconnected (stopped reading)"
check "all 32 stalled clients were cut off" jqe '.closed == 32' <<<"$cut"
# (time() in whole seconds: a second early at most)
check "... none before stuck-timeout had passed since they stalled" \
	jqe ".first_s != null and .first_s >= $((STUCK - 1))" <<<"$cut"
# (its lines about one user are limited to 10 a second)
check "... pgoffd says why" grep -q 'disconnected (stopped reading)' "$E2E_DIR/pgoffd.log"
