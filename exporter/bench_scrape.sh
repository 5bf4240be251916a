#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# What a scrape costs, on a host with many backends: a throwaway cluster
# with SESSIONS (200) idle psql sessions, pgoffd, and pgoff_exporter (as a
# member of the group), scraped SCRAPES (200) times in a row over plain
# HTTP without auth (--web.insecure-no-auth), then over HTTPS with basic
# auth (bcrypt cost 10). Prints the CPU time per scrape of the exporter
# and of pgoffd (from /proc/PID/stat),
# the exporter's resident memory, the scrape latency and the page's size.
# Root (it starts PostgreSQL and pgoffd): run it as
#   flock /tmp/pgoff-e2e.lock bash exporter/bench_scrape.sh
# A measurement, not a test: it prints figures and fails only if it cannot
# measure.
. "$(dirname "$0")/../tests/e2e/lib.sh"
SESSIONS=${SESSIONS:-200}
SCRAPES=${SCRAPES:-200}
e2e_require
e2e_setup
EXPORTER=$E2E_DIR/prefix/bin/pgoff_exporter
EXPORTER_PIDS=() PSQL_PIDS=()
# shellcheck disable=SC2317 # (called by the EXIT trap)
stop_all() {
	exec 5>&- 2>/dev/null	# the idle sessions read EOF and end
	for p in "${EXPORTER_PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	for _ in $(seq 100); do	# 10 s for them to read EOF, then ended
		kill -0 "${PSQL_PIDS[@]}" 2>/dev/null || break
		sleep 0.1
	done
	for p in "${PSQL_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	e2e_cleanup
}
trap stop_all EXIT

cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

pg_start "max_connections=$((SESSIONS + 20))" || { not_ok "start PostgreSQL"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
# The sessions read a FIFO that nothing is written to: connected, idle
# (ClientRead), until stop_all closes its only writer. Opened read-write
# first, so that neither end waits for the other.
mkfifo "$E2E_DIR/idle.fifo"
exec 5<>"$E2E_DIR/idle.fifo"
for _ in $(seq "$SESSIONS"); do
	psql -X -q <"$E2E_DIR/idle.fifo" 5>&- >/dev/null 2>&1 &
	PSQL_PIDS+=($!)
done
for _ in $(seq 300); do
	n=$(sql -c "select count(*) from pg_stat_activity where backend_type = 'client backend'")
	[ "$n" -ge "$SESSIONS" ] && break
	sleep 0.1
done
note "$n client backends (idle psql sessions), $("$PGOFFCTL" --socket "$SOCK" status --json | jq .traced_processes) processes traced"

TICK=$(getconf CLK_TCK)
# measure NAME URL [curl options]: SCRAPES scrapes, one after another
measure() {
	local name=$1 url=$2 pid=$3; shift 3
	local e0 b0 e1 b1 t0 t1
	curl -s -o "$E2E_DIR/page" "$@" "$url"	# warm: the AAS needs a previous scrape
	curl -s -o "$E2E_DIR/page" "$@" "$url"
	e0=$(cpu_ticks "$pid") b0=$(cpu_ticks "$E2E_BROKER_PID") t0=$(date +%s.%N)
	for _ in $(seq "$SCRAPES"); do
		curl -s -o "$E2E_DIR/page" -w '%{time_total}\n' "$@" "$url"
	done >"$E2E_DIR/latency.$name"
	e1=$(cpu_ticks "$pid") b1=$(cpu_ticks "$E2E_BROKER_PID") t1=$(date +%s.%N)
	sort -n "$E2E_DIR/latency.$name" >"$E2E_DIR/latency.sorted"
	printf '| %s | %.1f ms | %.1f ms | %.1f / %.1f ms | %d / %d MiB | %d KiB, %d series |\n' "$name" \
		"$(awk -v d=$((e1 - e0)) -v n="$SCRAPES" -v t="$TICK" 'BEGIN { print d / t / n * 1000 }')" \
		"$(awk -v d=$((b1 - b0)) -v n="$SCRAPES" -v t="$TICK" 'BEGIN { print d / t / n * 1000 }')" \
		"$(awk -v n="$SCRAPES" 'NR == int(n / 2) { print $1 * 1000 }' "$E2E_DIR/latency.sorted")" \
		"$(awk -v n="$SCRAPES" 'NR == int(n * 0.99) { print $1 * 1000 }' "$E2E_DIR/latency.sorted")" \
		"$(($(status_kb "$pid" VmRSS) / 1024))" "$(($(status_kb "$pid" VmHWM) / 1024))" \
		"$(($(wc -c <"$E2E_DIR/page") / 1024))" "$(grep -vc '^#' "$E2E_DIR/page")"
	note "$name: $SCRAPES scrapes in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; $(grep '^pgoff_stats_truncated' "$E2E_DIR/page" | tr '\n' ' ')"
}

port=$(free_port)
"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address="127.0.0.1:$port" --web.insecure-no-auth \
	2>"$E2E_DIR/exporter.log" &
EXPORTER_PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
note "exporter before its first scrape: RSS $(($(status_kb "${EXPORTER_PIDS[0]}" VmRSS) / 1024)) MiB"

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$E2E_DIR/tls.key" -out "$E2E_DIR/tls.crt" >/dev/null 2>&1
chgrp "$E2E_GROUP" "$E2E_DIR/tls.key" && chmod 0640 "$E2E_DIR/tls.key"
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))')
printf 'tls_server_config:\n  cert_file: tls.crt\n  key_file: tls.key\nbasic_auth_users:\n  prometheus: %s\n' \
	"$hash" >"$E2E_DIR/web.yml"
tport=$(free_port)
"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address="127.0.0.1:$tport" \
	--web.config.file="$E2E_DIR/web.yml" 2>"$E2E_DIR/exporter-tls.log" &
EXPORTER_PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null --cacert "$E2E_DIR/tls.crt" "https://127.0.0.1:$tport/" && break; sleep 0.1; done

echo "| $SESSIONS idle sessions, $SCRAPES scrapes | exporter CPU / scrape | pgoffd CPU / scrape | latency p50 / p99 | exporter RSS / peak | page |"
echo "|---|---|---|---|---|---|"
measure "HTTP" "http://127.0.0.1:$port/metrics" "${EXPORTER_PIDS[0]}"
measure "HTTPS + basic auth (bcrypt cost 10)" "https://127.0.0.1:$tport/metrics" "${EXPORTER_PIDS[1]}" \
	--cacert "$E2E_DIR/tls.crt" -u prometheus:pw
