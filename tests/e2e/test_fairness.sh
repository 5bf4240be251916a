#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# One group member pushes as hard as it can; the others are still served.
# With 40 backends traced (status walks the kernel's table of them), the
# member streams status and ps requests on 6 connections without reading a
# byte and asks as fast as it reads on 2 more; meanwhile another member
# asks status every 20 ms and its latency is measured. An outsider connects
# a thousand times. pgoffd's log stays short, its memory bounded, and the
# flooder is answered only as far as it reads. The figures (latency, the
# broker's CPU, log lines) are printed for comparison between versions.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$E2E_BROKER_PID/status"; }
log_lines() { wc -l <"$E2E_DIR/pgoffd.log"; }
rss_before=$(rss_kb)
lines_before=$(log_lines)

# flood.py MODE SECONDS: "noread" writes requests and never reads (prints
# how many it sent and, at the end, how many replies had come); "read"
# sends a request and reads its reply in a loop (prints requests done)
cat >"$E2E_DIR/flood.py" <<'PY'
import socket, sys, time
path, mode, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b'{"op":"hello","version":1}\n')
f = s.makefile("rb")
f.readline()
end = time.time() + secs
sent = 0
if mode == "noread":
    s.setblocking(False)
    batch = b'{"op":"status"}\n{"op":"ps"}\n' * 64
    while time.time() < end:
        try:
            sent += s.send(batch) // 14
        except BlockingIOError:
            time.sleep(0.001)
    s.setblocking(True)
    s.settimeout(2)
    got = 0
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            got += d.count(b"\n")
    except OSError:
        pass
    print(sent, got)
else:
    while time.time() < end:
        s.sendall(b'{"op":"status"}\n{"op":"ps"}\n')
        f.readline(); f.readline()
        sent += 2
    print(sent)
PY
# probe.py SECONDS: status every 20 ms, latencies in ms
cat >"$E2E_DIR/probe.py" <<'PY'
import socket, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b'{"op":"hello","version":1}\n')
f = s.makefile("rb")
f.readline()
lat = []
end = time.time() + secs
while time.time() < end:
    t = time.monotonic()
    s.sendall(b'{"op":"status"}\n')
    f.readline()
    lat.append((time.monotonic() - t) * 1000)
    time.sleep(0.02)
lat.sort()
print(len(lat), "%.2f" % lat[len(lat) // 2], "%.2f" % lat[int(len(lat) * 0.99)],
      "%.2f" % lat[-1])
PY
py=/usr/bin/python3
# 40 backends in pg_sleep the whole time: 40 more traced processes
echo "select pg_sleep(0.5);" >"$E2E_DIR/sleep.sql"
"$PGBIN/pgbench" -n -c 40 -j 2 -T 20 -f "$E2E_DIR/sleep.sql" >/dev/null 2>&1 &
load=$!
sleep 2.5	# found by a scan
traced=$(member status --json | jq .traced_processes)
as "$E2E_QUERIER" $py "$E2E_DIR/probe.py" "$SOCK" 3 >"$E2E_DIR/quiet.out"
# cpu: the broker's user + system ticks
cpu() { awk '{ print $14 + $15 }' "/proc/$E2E_BROKER_PID/stat"; }
floods=()
for i in 1 2 3 4 5 6; do
	as "$E2E_MEMBER" $py "$E2E_DIR/flood.py" "$SOCK" noread 10 >"$E2E_DIR/noread.$i" &
	floods+=($!)
done
for i in 1 2; do
	as "$E2E_MEMBER" $py "$E2E_DIR/flood.py" "$SOCK" read 10 >"$E2E_DIR/read.$i" &
	floods+=($!)
done
( for _ in $(seq 1000); do
	as "$E2E_OUTSIDER" $py -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(512)' "$SOCK" 2>/dev/null
  done ) &
outsider=$!
sleep 1
cpu0=$(cpu) t0=$(date +%s.%N)
as "$E2E_QUERIER" $py "$E2E_DIR/probe.py" "$SOCK" 7 >"$E2E_DIR/probe.out"
cpu1=$(cpu) t1=$(date +%s.%N)
rss_flood=$(rss_kb)
wait "${floods[@]}"
kill "$outsider" 2>/dev/null; wait "$outsider" 2>/dev/null
kill "$load" 2>/dev/null; wait "$load" 2>/dev/null
sleep 1.2	# a tick: held-back log lines are told
read -r _ quiet_p50 quiet_p99 _ <"$E2E_DIR/quiet.out"
read -r samples p50 p99 max <"$E2E_DIR/probe.out"
sent=$(cat "$E2E_DIR"/noread.* | awk '{ s += $1 } END { print s + 0 }')
got=$(cat "$E2E_DIR"/noread.* | awk '{ if ($2 > m) m = $2 } END { print m + 0 }')
done_reads=$(cat "$E2E_DIR"/read.* | awk '{ s += $1 } END { print s + 0 }')
broker_cpu=$(awk -v t=$((cpu1 - cpu0)) -v hz="$(getconf CLK_TCK)" -v a="$t0" -v b="$t1" \
	'BEGIN { printf "%.0f", 100 * t / hz / (b - a) }')
lines=$(( $(log_lines) - lines_before ))
note "traced processes: $traced"
note "status latency, quiet: p50 $quiet_p50 ms, p99 $quiet_p99 ms"
note "status latency under the flood: $samples samples, p50 $p50 ms, p99 $p99 ms, max $max ms; pgoffd at ${broker_cpu}% of a CPU ($((cpu1 - cpu0)) ticks in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
note "6 non-reading connections sent $sent requests, at most $got replies came to one; 2 reading ones had $done_reads answered"
note "pgoffd RSS: ${rss_before} kB before, ${rss_flood} kB during the flood; $lines log lines"
check "status answered within 100 ms (p99 $p99 ms) while a member floods" \
	between "$p99" 0 100
check "a connection that does not read is answered only as far as its socket and 64 KiB take (at most $got)" \
	[ "$got" -lt 5000 ]
check "connections that read are served throughout ($done_reads requests in 10 s)" \
	[ "${done_reads:-0}" -gt 1000 ]
check "pgoffd's memory stays bounded (RSS ${rss_flood} kB, was ${rss_before} kB)" \
	[ "$rss_flood" -lt $((rss_before + 65536)) ]
check "the flood and a thousand denied connections: $lines log lines (limited per uid)" \
	[ "$lines" -lt 200 ]
check "the denied lines were counted and told" \
	grep -q "client uid $(id -u "$E2E_OUTSIDER"): suppressed [0-9]* similar lines" "$E2E_DIR/pgoffd.log"
check "pgoffd is still alive" kill -0 "$E2E_BROKER_PID"
