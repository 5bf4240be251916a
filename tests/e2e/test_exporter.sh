#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# pgoff_exporter with a real Prometheus (Debian's prometheus package) that
# scrapes it every second with basic auth, as a DBA team's fleet would:
# - without basic_auth_users it does not start (exit 2, saying what to
#   do), unless --web.insecure-no-auth, with which it serves anyone;
# - the exporter runs as a member of pgoffd's group; its page passes
#   promtool check metrics, and every metric in it is documented;
# - after a real 3 s row-lock wait, PromQL over Prometheus's HTTP API
#   gives the lock seconds within 5 % of the wait, the histogram has the
#   interval in the bucket the kernel's bounds say, the AAS gauge saw one
#   backend waiting and the longest-wait gauge saw it wait;
# - every expression of exporter/dashboard.json runs on Prometheus, and
#   exporter/alerts.yml loads into it;
# - HTTPS with basic auth (a throwaway certificate from openssl, a bcrypt
#   hash): no password or a wrong one gets 401 and no metrics, the right
#   one works, and Prometheus scrapes it over HTTPS;
# - wrong passwords: 5 from one address get 401, then 429 without a
#   check, while a remembered right password still gets in from it;
#   scrapes go on while guesses flood in;
# - slow clients: 64 connections from 127.0.0.2-9 and 16 from 127.0.0.1
#   trickling a header byte every 2 s; scrapes from 127.0.0.1 succeed
#   while they are held, those past 8 from one address are closed at
#   once, the rest at the 10 s header deadline;
# - a bad web config file is refused with its file and line;
# - pgoffd restarts under the exporter: Prometheus's up stays 1,
#   pgoff_broker_up goes to 0 and back to 1;
# - SIGHUP serves a rotated certificate and a new password; a bad file,
#   or one without basic_auth_users, changes nothing (but with
#   --web.insecure-no-auth the latter serves without auth);
# - the systemd unit verifies.
. "$(dirname "$0")/lib.sh"
e2e_require
PROMETHEUS=$(command -v prometheus)
PROMTOOL=$(command -v promtool)
for tool in "$PROMETHEUS" "$PROMTOOL" "$(command -v openssl)" "$(command -v curl)" \
	"$(command -v /usr/bin/python3)"; do
	[ -n "$tool" ] && continue
	why="prometheus, promtool, openssl, curl and Debian's python3 are needed (make deps)"
	if [ "${CI:-}" = true ]; then not_ok "$why"; exit 1; fi
	echo "# SKIP: $why"; exit 0
done
e2e_setup
EXPORTER=$E2E_DIR/prefix/bin/pgoff_exporter
EXPORTER_PIDS=() PROM_PID=

stop_servers() {
	for p in "${EXPORTER_PIDS[@]}" $PROM_PID; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	EXPORTER_PIDS=() PROM_PID=
}
trap 'stop_servers; e2e_cleanup' EXIT

# a TCP port on 127.0.0.1 nobody listens on
free_port() {
	local p
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		ss -Hltn "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# wait_http URL [curl options]: until it answers (10 s)
wait_http() {
	local url=$1; shift
	wait_for 10 curl -s -o /dev/null "$@" "$url"
}

# a bcrypt hash of $1, cost 10, with libxcrypt through Debian's python3
bcrypt_hash() {
	/usr/bin/python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$1"
}
# Wrong credentials are sent from 127.0.0.6, so that they count against
# that address's limit of wrong passwords, not Prometheus's (127.0.0.1).
GUESS=(--interface 127.0.0.6)

# start_exporter NAME [options]: as a member of the group; pid in EXPORTER_PIDS
start_exporter() {
	local name=$1; shift
	"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" "$@" \
		2>"$E2E_DIR/exporter-$name.log" &
	EXPORTER_PIDS+=($!)
}

pg_start deadlock_timeout=10s || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

# --- no authentication, no exporter ------------------------------------------
# (timeout: an exporter that starts anyway is a failure, not a hang)
timeout 10 "${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address=127.0.0.1:0 \
	2>"$E2E_DIR/noconfig.err"
rc=$?
sed 's/^/# /' "$E2E_DIR/noconfig.err"
check "without --web.config.file it does not start: exit 2, saying to add basic_auth_users or give --web.insecure-no-auth" \
	bash -c "[ $rc = 2 ] && grep -q 'error: not starting: no --web.config.file: .*basic_auth_users.*--web.config.file=FILE, or give --web.insecure-no-auth' '$E2E_DIR/noconfig.err'"
printf 'http_server_config:\n  headers:\n    X-Frame-Options: deny\n' >"$E2E_DIR/nousers.yml"
timeout 10 "${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address=127.0.0.1:0 \
	--web.config.file="$E2E_DIR/nousers.yml" 2>"$E2E_DIR/nousers.err"
rc=$?
sed 's/^/# /' "$E2E_DIR/nousers.err"
check "with a web config without basic_auth_users neither (exit 2, naming the file)" \
	bash -c "[ $rc = 2 ] && grep -q 'not starting: $E2E_DIR/nousers.yml has no basic_auth_users' '$E2E_DIR/nousers.err'"

# --- the exporter over plain HTTP with basic auth, as a member of the group ---
EXP_PORT=$(free_port)
printf 'basic_auth_users:\n  prometheus: %s\n' "$(bcrypt_hash 'plain pw')" >"$E2E_DIR/auth.yml"
printf '%s' 'plain pw' >"$E2E_DIR/plain.pw"
AUTH=(-u 'prometheus:plain pw')
start_exporter plain --web.listen-address="127.0.0.1:$EXP_PORT" --web.config.file="$E2E_DIR/auth.yml"
EXP=http://127.0.0.1:$EXP_PORT
wait_http "$EXP/metrics"
check "the exporter answers on 127.0.0.1:$EXP_PORT as a member of the group" [ $? = 0 ]
as "$E2E_MEMBER" "$EXPORTER" --help | grep -q "127.0.0.1:19432"
check "its default listen address is 127.0.0.1:19432" [ $? = 0 ]
code=$(curl -s -o "$E2E_DIR/plain-noauth.out" -w '%{http_code}' "${GUESS[@]}" "$EXP/metrics")
check "HTTP without credentials: 401 and no metrics (got $code)" \
	bash -c "[ '$code' = 401 ] && ! grep -q pgoff_ '$E2E_DIR/plain-noauth.out'"
code=$(curl -s -o "$E2E_DIR/plain-wrong.out" -w '%{http_code}' "${GUESS[@]}" -u 'prometheus:plain px' "$EXP/metrics")
check "HTTP with a wrong password: 401 and no metrics (got $code)" \
	bash -c "[ '$code' = 401 ] && ! grep -q pgoff_ '$E2E_DIR/plain-wrong.out'"
code=$(curl -s -o /dev/null -w '%{http_code}' "${GUESS[@]}" "$EXP/")
check "... the landing page too (got $code)" [ "$code" = 401 ]

curl -s "${AUTH[@]}" -D "$E2E_DIR/plain.headers" -o "$E2E_DIR/first.prom" "$EXP/metrics"
check "metrics: text format 0.0.4" grep -qi '^content-type: text/plain; version=0.0.4' "$E2E_DIR/plain.headers"
check "pgoff_broker_up 1 with pgoffd running" grep -qx 'pgoff_broker_up 1' "$E2E_DIR/first.prom"
check "pgoff_build_info has the version" grep -q '^pgoff_build_info{version="0.1.0",revision="' "$E2E_DIR/first.prom"
check "pgoff_broker_info names the hook" grep -qE '^pgoff_broker_info\{version="[^"]+",hook="(tp_btf|raw_tp)"\} 1$' "$E2E_DIR/first.prom"
check "pgoff_clusters 1" grep -qx 'pgoff_clusters 1' "$E2E_DIR/first.prom"
check "pgoff_bpf_programs_attached 6: switch, waking, fork, exit, exec, the on-CPU sampler" \
	grep -qx 'pgoff_bpf_programs_attached 6' "$E2E_DIR/first.prom"
curl -s "${AUTH[@]}" "$EXP/" >"$E2E_DIR/landing.html"
check "the landing page at / links to /metrics" grep -q 'href="/metrics"' "$E2E_DIR/landing.html"
check "an unknown path is 404" [ "$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" "$EXP/nope")" = 404 ]
check "POST is 405" [ "$(curl -s -o /dev/null -w '%{http_code}' "${AUTH[@]}" -X POST "$EXP/metrics")" = 405 ]

# --- Prometheus, scraping every second ---------------------------------------
# The HTTPS exporter is set up first, so that Prometheus scrapes both.
TLS_PORT=$(free_port)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$E2E_DIR/tls.key" -out "$E2E_DIR/tls.crt" >/dev/null 2>&1
chgrp "$E2E_GROUP" "$E2E_DIR/tls.key" && chmod 0640 "$E2E_DIR/tls.key"
HASH=$(bcrypt_hash 's3cret pw')
cat >"$E2E_DIR/web.yml" <<YML
# as for any exporter built with the Prometheus exporter toolkit
tls_server_config:
  cert_file: tls.crt
  key_file: tls.key
basic_auth_users:
  prometheus: $HASH
YML
start_exporter tls --web.listen-address="127.0.0.1:$TLS_PORT" --web.config.file="$E2E_DIR/web.yml"
TLS=https://127.0.0.1:$TLS_PORT
wait_http "$TLS/" --cacert "$E2E_DIR/tls.crt"
check "the HTTPS exporter answers (certificate from openssl, key 0640 in the group)" [ $? = 0 ]
printf '%s' 's3cret pw' >"$E2E_DIR/prom.pw"

PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
cp "$E2E_TOP/exporter/alerts.yml" "$E2E_DIR/alerts.yml"
cat >"$E2E_DIR/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $E2E_DIR/alerts.yml
scrape_configs:
  - job_name: pgoff
    basic_auth:
      username: prometheus
      password_file: $E2E_DIR/plain.pw
    static_configs:
      - targets: ['127.0.0.1:$EXP_PORT']
  - job_name: pgoff_tls
    scheme: https
    tls_config:
      ca_file: $E2E_DIR/tls.crt
    basic_auth:
      username: prometheus
      password_file: $E2E_DIR/prom.pw
    static_configs:
      - targets: ['127.0.0.1:$TLS_PORT']
YML
"$PROMTOOL" check config "$E2E_DIR/prometheus.yml" >"$E2E_DIR/promcheck.out" 2>&1 ||
	sed 's/^/# /' "$E2E_DIR/promcheck.out"
"$PROMETHEUS" --config.file="$E2E_DIR/prometheus.yml" --storage.tsdb.path="$E2E_DIR/prom-data" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
	>"$E2E_DIR/prometheus.log" 2>&1 &
PROM_PID=$!

# promql EXPR: the API's JSON answer for an instant query
promql() { curl -s --max-time 10 --data-urlencode "query=$1" "$PROM/api/v1/query"; }
# value EXPR: the first sample's value, or empty
value() { promql "$1" | jq -r '.data.result[0].value[1] // empty'; }
# await EXPR [SECONDS]: until EXPR has a result (20 s by default)
await() { WAIT_STEP=0.25 wait_for "${2:-20}" has_value "$1"; }
has_value() { [ -n "$(value "$1")" ]; }
wait_http "$PROM/-/ready"
await 'up{job="pgoff"} == 1' 30
check "Prometheus (127.0.0.1:$PROM_PORT) scrapes the exporter: up 1" [ $? = 0 ]
if [ $? != 0 ]; then sed 's/^/# prometheus: /' "$E2E_DIR/prometheus.log" | tail -20; fi
await 'up{job="pgoff_tls"} == 1' 10
check "Prometheus scrapes the HTTPS exporter with basic auth: up 1" [ $? = 0 ]
check "... and gets pgoffd's figures through it (pgoff_broker_up 1)" await 'pgoff_broker_up{job="pgoff_tls"} == 1' 5

# --- a real 3 s row-lock wait -------------------------------------------------
# A holds the row lock (psql reads a FIFO); B waits for it until A commits
# 3 s later. B's own statement time is the wait, to within the parse.
# 3 s, so that some 1 s scrape window lies wholly inside the wait whatever
# the scrapes' phase and jitter (pgoff_wait_longest_seconds below).
mkfifo "$E2E_DIR/a.fifo"
sql <"$E2E_DIR/a.fifo" >"$E2E_DIR/a.out" &
a_job=$!
exec 3>"$E2E_DIR/a.fifo"
echo "begin; update t set v = 1 where id = 1; select 'locked';" >&3
wait_for 10 grep -q locked "$E2E_DIR/a.out" || note "A's psql did not take the row lock in 10 s"
psql -X -q -At -c '\timing on' -c "update t set v = 2 where id = 1" >"$E2E_DIR/b.out" 2>&1 &
b_job=$!
IFS='|' read -r b_pid _ _ <<<"$(psa_wait_for "wait_event_type = 'Lock'")"
note "B ($b_pid) waits for the row lock"
sleep 3
echo "commit;" >&3
exec 3>&-
wait "$a_job" "$b_job"
b_done=$SECONDS
wait_ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' "$E2E_DIR/b.out")
note "B's statement took ${wait_ms:-?} ms"
check "B waited about 3 s (psql's \\timing: ${wait_ms:-none} ms)" between "${wait_ms:-0}" 2900 4000
lock_expr='sum(pgoff_offcpu_seconds_total{job="pgoff",backend_type="client backend",wait_event_type="Lock",wait_event="transactionid"})'
# until a scrape after the end of the wait is stored (a scrape may time
# out on a busy machine: the next one counts). The counter has the time
# of an interval not over yet, so it may be high enough a scrape before
# the end: the interval counted in the histogram says it ended.
await "$lock_expr >= $(awk -v w="${wait_ms:-0}" 'BEGIN { print w / 1000 * 0.95 }') and on()
	sum(pgoff_wait_duration_seconds_count{job=\"pgoff\",wait=\"lock\",wait_event_type=\"Lock\"}) >= 1" 20 ||
	note "Prometheus: up=$(value 'up{job="pgoff"}'), scrape_duration_seconds=$(value 'scrape_duration_seconds{job="pgoff"}')"
lock_s=$(value "$lock_expr")
note "PromQL $lock_expr = ${lock_s:-nothing}"
check "PromQL: the lock seconds ($lock_s) are within 5 % of B's wait (${wait_ms} ms)" \
	between "${lock_s:-0}" "$(awk -v w="$wait_ms" 'BEGIN { print w / 1000 * 0.95 }')" \
	"$(awk -v w="$wait_ms" 'BEGIN { print w / 1000 * 1.05 }')"

# B's lock wait is one blocked interval (deadlock_timeout is 10 s), of
# kernel wait "lock". B may also leave the CPU briefly while its wait event
# still says Lock (preempted once A's commit woke it, before it clears the
# wait event); such an interval has another kernel wait, so the checks of
# the one interval select wait="lock". Its bucket is the one the kernel's
# bounds give it, le = 1024 * 2^b - 1 ns, the smallest that is >= it; its
# length is the histogram's _sum (checked against psql's \timing above
# through the counter), to the nanosecond: psql's time is a few ms longer,
# which near a bound (2.147 s, 4.295 s) would choose the wrong bucket.
note "B's off-CPU time in Lock/transactionid by kernel wait:" \
	"$(promql 'sum by (wait) (pgoff_offcpu_seconds_total{job="pgoff",wait_event_type="Lock",wait_event="transactionid"})' |
		jq -r '[.data.result[] | "\(.metric.wait)=\(.value[1]) s"] | join(", ")')"
lock_blocked_s=$(value 'sum(pgoff_offcpu_seconds_total{job="pgoff",backend_type="client backend",wait_event_type="Lock",wait_event="transactionid",wait="lock"})')
sum_s=$(value 'sum(pgoff_wait_duration_seconds_sum{job="pgoff",wait="lock",wait_event_type="Lock"})')
note "the Lock interval's length (_sum): ${sum_s:-none} s"
check "the histogram's _sum is the counter's blocked lock seconds (${sum_s:-none} = ${lock_blocked_s:-none})" \
	between "$(awk -v a="${sum_s:-0}" -v b="${lock_blocked_s:--1}" 'BEGIN { print a - b }')" -0.000001 0.000001
read -r want_le prev_le < <(awk -v s="${sum_s:-0}" '
	function secs(ns,  t) {
		t = sprintf("%d.%09d", int(ns / 1e9), ns % 1e9)
		sub(/0+$/, "", t); sub(/\.$/, "", t)
		return t
	}
	BEGIN {
		ns = int(s * 1e9 + 0.5); b = 0
		while (1024 * 2 ^ b - 1 < ns) b++
		print secs(1024 * 2 ^ b - 1), secs(1024 * 2 ^ (b - 1) - 1)
	}')
hist() { value "sum(pgoff_wait_duration_seconds_bucket{job=\"pgoff\",wait=\"lock\",wait_event_type=\"Lock\",le=\"$1\"})"; }
at_le=$(hist "$want_le") below=$(hist "$prev_le")
note "Lock histogram: le=$prev_le: ${below:-none}, le=$want_le: ${at_le:-none}"
check "the histogram has B's interval in the bucket le=\"$want_le\", none in le=\"$prev_le\"" \
	[ "${at_le:-x}" = 1 -a "${below:-x}" = 0 ]
q=$(value 'histogram_quantile(0.5, sum by (le) (pgoff_wait_duration_seconds_bucket{job="pgoff",wait="lock",wait_event_type="Lock"}))')
check "histogram_quantile over it falls in that bucket ($q)" between "${q:-0}" "$prev_le" "$want_le"
count=$(value 'sum(pgoff_wait_duration_seconds_count{job="pgoff",wait="lock",wait_event_type="Lock"})')
check "_count of blocked Lock intervals is 1 ($count)" [ "${count:-x}" = 1 ]
# (over the scrapes since before the wait: these queries may come many
# seconds after it on a busy machine; a window that began after the
# wait's scrapes once saw only a 89 us sliver of Lock time that followed)
since=$(( SECONDS - b_done + 15 ))s
aas=$(value "max_over_time(pgoff_backends_waiting{job=\"pgoff\",wait_event_type=\"Lock\",wait_event=\"transactionid\"}[$since])")
check "pgoff_backends_waiting saw about one backend waiting for the lock ($aas, over the last $since)" between "${aas:-0}" 0.9 1.1
longest=$(value "max_over_time(pgoff_wait_longest_seconds{job=\"pgoff\",wait_event_type=\"Lock\",wait_event=\"transactionid\"}[$since])")
check "pgoff_wait_longest_seconds saw B in the lock wait across scrapes (${longest:-absent} s)" \
	between "${longest:-0}" 0.8 "$(awk -v w="${wait_ms:-0}" 'BEGIN { print w / 1000 + 0.2 }')"

curl -s "${AUTH[@]}" "$EXP/metrics" >"$E2E_DIR/after.prom"
"$PROMTOOL" check metrics <"$E2E_DIR/after.prom" >"$E2E_DIR/lint.out" 2>&1
rc=$?
sed 's/^/# promtool: /' "$E2E_DIR/lint.out" | head -10
check "promtool check metrics accepts the page (no lint problem)" [ $rc = 0 ]
check "no pid label by default" bash -c "! grep -q 'pid=\"' '$E2E_DIR/after.prom'"
undocumented=
for m in $(sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$E2E_DIR/after.prom"); do
	grep -q "${m//_/\\\\_}\|$m" "$E2E_TOP/man/pgoff_exporter.1" || undocumented+=" $m"
	grep -q "$m" "$E2E_TOP/docs/MONITORING.md" || undocumented+=" $m(docs/MONITORING.md)"
done
check "every metric on the page is in pgoff_exporter.1 and docs/MONITORING.md${undocumented:+ (missing:$undocumented)}" \
	[ -z "$undocumented" ]
undocumented=
page=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g' "$E2E_TOP/man/pgoff_exporter.1")
for l in $(grep -v '^#' "$E2E_DIR/after.prom" | grep -o '[{,][a-z_]*="' | tr -d '{,="' | sort -u); do
	grep -qw -- "$l" <<<"$page" || undocumented+=" $l"
done
check "every label on the page is in pgoff_exporter.1${undocumented:+ (missing:$undocumented)}" \
	[ -z "$undocumented" ]
series=$(grep -vc '^#' "$E2E_DIR/after.prom")
note "series on this host's page: $series ($(grep -c '^pgoff_wait_duration_seconds' "$E2E_DIR/after.prom") histogram, $(grep -c '^pgoff_offcpu_' "$E2E_DIR/after.prom") counters)"

# --metrics.per-pid: the counters by process, the histogram as before;
# with --web.insecure-no-auth, which serves without credentials
PID_PORT=$(free_port)
start_exporter per-pid --web.listen-address="127.0.0.1:$PID_PORT" --metrics.per-pid \
	--metrics.top-queries=3 --web.insecure-no-auth
wait_http "http://127.0.0.1:$PID_PORT/metrics"
# a statement with a query id (computed for this session), its id read
# from pg_stat_activity while it sleeps
psql -X -q -At -c "set compute_query_id = on" -c "select pg_sleep(0.6)" >/dev/null &
sleeper=$!
QID=
qid_seen() { QID=$(sql -c "select query_id from pg_stat_activity where query = 'select pg_sleep(0.6)' and query_id is not null"); [ -n "$QID" ]; }
wait_for 10 qid_seen
wait "$sleeper"
code=$(curl -s -o "$E2E_DIR/per-pid.prom" -w '%{http_code}' "http://127.0.0.1:$PID_PORT/metrics")
check "--web.insecure-no-auth: it starts without a web config and serves without credentials (HTTP $code)" \
	bash -c "[ '$code' = 200 ] && grep -qx 'pgoff_broker_up 1' '$E2E_DIR/per-pid.prom'"
check "... and its log warns that every local user reads it" \
	grep -q 'warning: --web.insecure-no-auth: serving without authentication; every local user' \
	"$E2E_DIR/exporter-per-pid.log" || sed 's/^/# per-pid: /' "$E2E_DIR/exporter-per-pid.log"
check "--metrics.top-queries: the sleeping statement's off-CPU time by its query id ($QID), about 0.6 s" \
	awk -v q="query_id=\"$QID\"}" 'index($0, "pgoff_query_offcpu_seconds_total{") == 1 && index($0, q) &&
		$NF >= 0.55 && $NF < 5 { f = 1 } END { exit !f }' "$E2E_DIR/per-pid.prom" ||
	note "saw: $(grep '^pgoff_query_offcpu' "$E2E_DIR/per-pid.prom" | head -5)"
check "--metrics.per-pid: the counters have a pid label, the histogram none" \
	bash -c "grep -q '^pgoff_offcpu_seconds_total{.*,pid=\"[0-9]*\"} ' '$E2E_DIR/per-pid.prom' &&
		grep -q '^pgoff_wait_duration_seconds_count{' '$E2E_DIR/per-pid.prom' &&
		! grep -q '^pgoff_wait_duration_seconds.*pid=' '$E2E_DIR/per-pid.prom'"
kill "${EXPORTER_PIDS[-1]}" && wait "${EXPORTER_PIDS[-1]}"
check "the exporter ends on SIGTERM with status 0" [ $? = 0 ]
unset 'EXPORTER_PIDS[-1]'

# --- the dashboard's expressions and the alert rules, on Prometheus ----------
bad=
n=0
while IFS= read -r expr; do
	n=$((n + 1))
	q=$(sed -e 's/\$__rate_interval/1m/g' -e 's/\$instance/.*/g' -e 's/\$cluster_id/.*/g' \
		-e 's/\$container/.*/g' -e 's/\$cluster/.*/g' \
		-e 's/\$backend_type/.*/g' -e 's/\$wait_event_type/.*/g' <<<"$expr")
	# template variables' queries are label_values(): run their selector
	q=$(sed -E 's/^label_values\((.*), *[a-z_]+\)$/\1/' <<<"$q")
	status=$(promql "$q" | jq -r '.status + " " + (.error // "")')
	[ "$status" = "success " ] || { bad+=" [$q: $status]"; note "dashboard: $q -> $status"; }
done < <(jq -r '(.panels[].targets[].expr, (.templating.list[] | select(.type == "query") | .definition))' \
	"$E2E_TOP/exporter/dashboard.json")
check "Prometheus runs all $n expressions of the dashboard${bad:+ (failed:$bad)}" [ -z "$bad" -a "$n" -gt 5 ]
hm=$(promql 'sum by (le) (increase(pgoff_wait_duration_seconds_bucket{wait_event_type=~".*"}[1m]))' |
	jq '.data.result | length')
check "the heatmap's query has one series per bucket (32, got $hm)" [ "$hm" = 32 ]
rules=$(curl -s "$PROM/api/v1/rules" | jq -r '[.data.groups[].rules[] | select(.health == "ok")] | length')
check "Prometheus loaded the 6 alert rules of alerts.yml, all healthy ($rules)" [ "$rules" = 6 ]

# --- HTTPS with basic auth ----------------------------------------------------
code=$(curl -s -o "$E2E_DIR/noauth.out" -D "$E2E_DIR/noauth.h" -w '%{http_code}' \
	"${GUESS[@]}" --cacert "$E2E_DIR/tls.crt" "$TLS/metrics")
check "HTTPS without credentials: 401 with WWW-Authenticate: Basic, no metrics" \
	bash -c "[ $code = 401 ] && grep -qi '^www-authenticate: basic realm=' '$E2E_DIR/noauth.h' &&
		! grep -q pgoff_ '$E2E_DIR/noauth.out'"
code=$(curl -s -o "$E2E_DIR/wrong.out" -w '%{http_code}' "${GUESS[@]}" --cacert "$E2E_DIR/tls.crt" \
	-u 'prometheus:s3cret px' "$TLS/metrics")
check "HTTPS with a wrong password: 401, no metrics" \
	bash -c "[ $code = 401 ] && ! grep -q pgoff_ '$E2E_DIR/wrong.out'"
code=$(curl -s -o /dev/null -w '%{http_code}' "${GUESS[@]}" --cacert "$E2E_DIR/tls.crt" \
	-u 'grafana:s3cret pw' "$TLS/metrics")
check "HTTPS with an unknown user: 401" [ "$code" = 401 ]
code=$(curl -s -o "$E2E_DIR/right.out" -w '%{http_code}' --cacert "$E2E_DIR/tls.crt" \
	-u 'prometheus:s3cret pw' "$TLS/metrics")
check "HTTPS with the right password: 200 and the metrics" \
	bash -c "[ $code = 200 ] && grep -qx 'pgoff_broker_up 1' '$E2E_DIR/right.out'"
curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$TLS_PORT/metrics"
check "plain HTTP to the HTTPS port gets no answer" [ $? != 0 ]
proto=$(curl -s -o /dev/null -w '%{ssl_verify_result} %{http_version}' --cacert "$E2E_DIR/tls.crt" \
	-u 'prometheus:s3cret pw' --tls-max 1.1 "$TLS/metrics" 2>&1; echo " rc=$?")
check "TLS 1.1 is refused (min_version defaults to TLS12)" bash -c "! grep -q ' rc=0' <<<'$proto'"

printf 'basic_auth_users:\n  prometheus: not-a-hash\n' >"$E2E_DIR/bad.yml"
as "$E2E_MEMBER" "$EXPORTER" --web.listen-address=127.0.0.1:0 \
	--web.config.file="$E2E_DIR/bad.yml" 2>"$E2E_DIR/bad.err"
rc=$?
sed 's/^/# /' "$E2E_DIR/bad.err"
check "a bad web config file: exit 2, naming the file and line" \
	bash -c "[ $rc = 2 ] && grep -q '$E2E_DIR/bad.yml:2: basic_auth_users' '$E2E_DIR/bad.err'"
as "$E2E_MEMBER" "$EXPORTER" --web.listen-address="127.0.0.1:$EXP_PORT" \
	--pgoff.socket="$SOCK" --web.config.file="$E2E_DIR/auth.yml" 2>"$E2E_DIR/busy.err"
rc=$?
check "an address in use: exit 1 saying so" \
	bash -c "[ $rc = 1 ] && grep -q 'cannot listen on 127.0.0.1:$EXP_PORT: Address already in use' '$E2E_DIR/busy.err'"

# --- wrong passwords: a limit per address ------------------------------------
# The plain exporter has its right password remembered (Prometheus sends
# it every second). From 127.0.0.7, 8 wrong ones in a row.
codes=
for i in $(seq 8); do
	codes+=" $(curl -s -o /dev/null -D "$E2E_DIR/guess.h" -w '%{http_code}' --interface 127.0.0.7 \
		-u "prometheus:guess $i" "$EXP/metrics")"
done
check "8 wrong passwords from 127.0.0.7: 5 are checked (401), then 429 without a check (got$codes)" \
	[ "$codes" = " 401 401 401 401 401 429 429 429" ]
check "... the 429 says when to try again (Retry-After: $(sed -n 's/^retry-after: *//Ip' "$E2E_DIR/guess.h" | tr -d '\r'))" \
	grep -qiE '^retry-after: [1-9][0-9]*' "$E2E_DIR/guess.h"
code=$(curl -s -o /dev/null -w '%{http_code}' --interface 127.0.0.7 "${AUTH[@]}" "$EXP/metrics")
check "... and the right password, remembered, still gets in from 127.0.0.7 (HTTP $code)" [ "$code" = 200 ]
check "... the log says the address is limited" \
	grep -q 'too many wrong passwords from 127.0.0.7: its requests are answered 429 without a check for [0-9]* s' \
	"$E2E_DIR/exporter-plain.log" || grep 'password' "$E2E_DIR/exporter-plain.log" | sed 's/^/# plain: /'

# 4 loops of wrong passwords from 127.0.0.8 for 3 s, while scraping
flood_jobs=()
for l in 1 2 3 4; do
	(end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do
		curl -s -o /dev/null -w '%{http_code}\n' --max-time 10 --interface 127.0.0.8 \
			-u "prometheus:flood $l" "$EXP/metrics"; done >"$E2E_DIR/flood.$l") &
	flood_jobs+=($!)
done
scraped=
for _ in 1 2 3 4 5; do
	scraped+=" $(curl -s -o /dev/null --max-time 5 -w '%{http_code}:%{time_total}' "${AUTH[@]}" "$EXP/metrics")"
	sleep 0.3
done
wait "${flood_jobs[@]}"
flood=$(cat "$E2E_DIR"/flood.* | sort | uniq -c | awk '{ printf " %s×%s", $1, $2 }')
checked=$(cat "$E2E_DIR"/flood.* | grep -c 401)
check "4 loops of wrong passwords from 127.0.0.8: at most 5 checked with bcrypt, the rest 429 (codes:$flood)" \
	[ "$checked" -le 5 -a "$(cat "$E2E_DIR"/flood.* | grep -vcxE '401|429')" = 0 ]
check "... meanwhile every scrape got 200 within 5 s (code:seconds:$scraped)" \
	bash -c "! grep -qv '^200:' <<<'$(tr ' ' '\n' <<<"${scraped# }")'"
curl -s "${AUTH[@]}" "$EXP/metrics" >"$E2E_DIR/auth-counts.prom"
grep '^pgoff_exporter_http_auth' "$E2E_DIR/auth-counts.prom" | sed 's/^/# /'
check "pgoff_exporter_http_auth_failures_total counts them: missing, wrong, rate_limited" \
	awk '/^pgoff_exporter_http_auth_failures_total\{reason="missing"\}/ { m = $2 }
	     /^pgoff_exporter_http_auth_failures_total\{reason="wrong"\}/ { w = $2 }
	     /^pgoff_exporter_http_auth_failures_total\{reason="rate_limited"\}/ { r = $2 }
	     END { exit !(m >= 2 && w >= 6 && r >= 4) }' "$E2E_DIR/auth-counts.prom"

# --- slow clients --------------------------------------------------------------
# Each trickles a byte of a header that never ends every 2 s. 64 from
# 127.0.0.2-9, 8 an address (what the exporter of ccb2604 held in all,
# which stopped every scrape), then 16 from 127.0.0.1, where the scrapes
# come from: past 8, each crowds out the oldest.
SLOW_SRC=127.0.0.2,127.0.0.3,127.0.0.4,127.0.0.5,127.0.0.6,127.0.0.7,127.0.0.8,127.0.0.9
/usr/bin/python3 "$E2E_TOP/tests/e2e/slow_clients.py" 127.0.0.1 "$EXP_PORT" 64 "$SLOW_SRC" 2 40 \
	"$E2E_DIR/slow-a.ready" >"$E2E_DIR/slow-a.json" &
slow_a=$!
wait_for 10 test -s "$E2E_DIR/slow-a.ready"
/usr/bin/python3 "$E2E_TOP/tests/e2e/slow_clients.py" 127.0.0.1 "$EXP_PORT" 16 127.0.0.1 2 40 \
	"$E2E_DIR/slow-b.ready" >"$E2E_DIR/slow-b.json" &
slow_b=$!
wait_for 10 test -s "$E2E_DIR/slow-b.ready"
check "the slow clients opened their 80 connections" test -s "$E2E_DIR/slow-b.ready"
scraped=
for _ in 1 2 3; do
	scraped+=" $(curl -s -o "$E2E_DIR/slow-scrape.prom" --max-time 5 -w '%{http_code}:%{time_total}' \
		"${AUTH[@]}" "$EXP/metrics")"
	grep -qx 'pgoff_broker_up 1' "$E2E_DIR/slow-scrape.prom" || scraped+="(no pgoff_broker_up 1)"
	sleep 1
done
check "while they are held, 3 scrapes with credentials from 127.0.0.1 get 200 within 5 s (code:seconds:$scraped)" \
	bash -c "! grep -qv '^200:[0-9.]*$' <<<'$(tr ' ' '\n' <<<"${scraped# }")'"
# they are held until the header deadline: pgoffd restarts meanwhile
# (nothing there connects to the exporter but Prometheus), and what they
# saw is read after that

# --- pgoffd restarts under the exporter ---------------------------------------
e2e_stop_broker TERM
t_stop=$(date +%s)
await 'pgoff_broker_up{job="pgoff"} == 0' 10
check "pgoffd stopped: pgoff_broker_up goes to 0" [ $? = 0 ]
sleep 2
e2e_start_broker || not_ok "restart pgoffd"
await 'pgoff_broker_up{job="pgoff"} == 1' 10
check "pgoffd back: pgoff_broker_up returns to 1" [ $? = 0 ]
sleep 1
span=$(($(date +%s) - t_stop + 2))
up_min=$(value "min_over_time(up{job=\"pgoff\"}[${span}s])")
broker_min=$(value "min_over_time(pgoff_broker_up{job=\"pgoff\"}[${span}s])")
check "Prometheus's up stayed 1 throughout (min ${up_min:-none} over ${span} s)" [ "${up_min:-x}" = 1 ]
check "... while pgoff_broker_up was 0 for a while (min ${broker_min:-none})" [ "${broker_min:-x}" = 0 ]
connects=$(value 'pgoff_exporter_broker_connects_total{job="pgoff"}')
check "the exporter connected again (pgoff_exporter_broker_connects_total ${connects:-none})" \
	[ "${connects:-0}" = 2 ]
check "the exporter logged the outage and the reconnection" \
	bash -c "grep -q 'pgoffd is not running' '$E2E_DIR/exporter-plain.log' &&
		[ \$(grep -c 'connected to pgoffd' '$E2E_DIR/exporter-plain.log') -ge 2 ]" ||
	note "the exporter's log: $(tail -n 6 "$E2E_DIR/exporter-plain.log" | tr '\n' '|')"

# --- slow clients, continued: what they saw -------------------------------------
wait "$slow_a" "$slow_b"
jq -c 'to_entries[] | {(.key): .value}' "$E2E_DIR/slow-a.json" "$E2E_DIR/slow-b.json" | sed 's/^/# slow: /'
check "the 64 from 127.0.0.2-9 were held, then closed at the 10 s header deadline (each between 5 and 25 s)" \
	jqe '[.[] | .opened == 8 and .open == 0 and (.closed_s | length) == 8 and
		(.closed_s | min) >= 5 and (.closed_s | max) <= 25] | all and length == 8' "$E2E_DIR/slow-a.json"
check "of the 16 from 127.0.0.1, 8 were crowded out at once (under 5 s), the rest closed by 25 s" \
	jqe '.["127.0.0.1"] | .opened == 16 and .open == 0 and (.closed_s | length) == 16 and
		([.closed_s[] | select(. < 5)] | length) >= 8 and (.closed_s | max) <= 25' "$E2E_DIR/slow-b.json"
curl -s "${AUTH[@]}" "$EXP/metrics" >"$E2E_DIR/closed-counts.prom"
grep '^pgoff_exporter_http_connections' "$E2E_DIR/closed-counts.prom" | sed 's/^/# /'
check "pgoff_exporter_http_connections_closed_total counts them: header_deadline >= 64, crowded_out >= 8" \
	awk '/^pgoff_exporter_http_connections_closed_total\{reason="header_deadline"\}/ { d = $2 }
	     /^pgoff_exporter_http_connections_closed_total\{reason="crowded_out"\}/ { c = $2 }
	     END { exit !(d >= 64 && c >= 8) }' "$E2E_DIR/closed-counts.prom"
check "the log says so, at a limited rate" \
	bash -c "grep -q 'closed a connection that sent no whole request in 10 s' '$E2E_DIR/exporter-plain.log' &&
		grep -q 'more connections closed (header deadline, room) in 10 s' '$E2E_DIR/exporter-plain.log' &&
		[ \$(grep -c 'closed a connection' '$E2E_DIR/exporter-plain.log') -le 20 ]" ||
	grep 'closed' "$E2E_DIR/exporter-plain.log" | tail -n 5 | sed 's/^/# plain: /'

# --- SIGHUP: a rotated certificate and a new password, no restart -------------
TLS_PID=${EXPORTER_PIDS[1]}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$E2E_DIR/tls2.key" -out "$E2E_DIR/tls2.crt" >/dev/null 2>&1
chgrp "$E2E_GROUP" "$E2E_DIR/tls2.key" && chmod 0640 "$E2E_DIR/tls2.key"
HASH2=$(bcrypt_hash 'new pw')
printf 'tls_server_config:\n  cert_file: tls2.crt\n  key_file: tls2.key\nbasic_auth_users:\n  prometheus: %s\n' \
	"$HASH2" >"$E2E_DIR/web.yml"
printf '%s' 'new pw' >"$E2E_DIR/prom.pw"
kill -HUP "$TLS_PID"
code=
rotated() {
	code=$(curl -s -o "$E2E_DIR/rotated.out" -w '%{http_code}' --cacert "$E2E_DIR/tls2.crt" \
		-u 'prometheus:new pw' "$TLS/metrics")
	[ "$code" = 200 ]
}
wait_for 5 rotated
check "SIGHUP: the new certificate and password serve the metrics (HTTP $code)" \
	bash -c "[ '$code' = 200 ] && grep -qx 'pgoff_broker_up 1' '$E2E_DIR/rotated.out'"
check "... the old password is refused (401)" [ "$(curl -s -o /dev/null -w '%{http_code}' \
	"${GUESS[@]}" --cacert "$E2E_DIR/tls2.crt" -u 'prometheus:s3cret pw' "$TLS/metrics")" = 401 ]
printf 'tls_server_config:\n  cert_file: tls2.crt\n  cipher_suites: [x]\n' >"$E2E_DIR/web.yml"
kill -HUP "$TLS_PID"
sleep 0.5
check "SIGHUP with a bad file: still serving as before, the log says why" \
	bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '$E2E_DIR/tls2.crt' \
		-u 'prometheus:new pw' '$TLS/metrics')\" = 200 ] &&
		grep -q 'web.yml:3: tls_server_config.cipher_suites is not supported.*still serving as before' \
		'$E2E_DIR/exporter-tls.log'"
printf 'tls_server_config:\n  cert_file: tls2.crt\n  key_file: tls2.key\n' >"$E2E_DIR/web.yml"
kill -HUP "$TLS_PID"
said_no_users() {
	grep -q "SIGHUP: $E2E_DIR/web.yml has no basic_auth_users: .*; still serving as before" \
		"$E2E_DIR/exporter-tls.log"
}
said=no
wait_for 5 said_no_users && said=yes
code=$(curl -s -o /dev/null -w '%{http_code}' "${GUESS[@]}" --cacert "$E2E_DIR/tls2.crt" "$TLS/metrics")
code2=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$E2E_DIR/tls2.crt" -u 'prometheus:new pw' "$TLS/metrics")
check "SIGHUP with a file without basic_auth_users: refused, the log says so ($said); still 401 without credentials ($code), 200 with ($code2)" \
	[ $said = yes -a "$code" = 401 -a "$code2" = 200 ] ||
	tail -n 5 "$E2E_DIR/exporter-tls.log" | sed 's/^/# tls: /'
check "the HTTPS exporter is still running" kill -0 "$TLS_PID"

# with --web.insecure-no-auth, a file that drops basic_auth_users is served
OPT_PORT=$(free_port)
cp "$E2E_DIR/auth.yml" "$E2E_DIR/optin.yml"
start_exporter optin --web.listen-address="127.0.0.1:$OPT_PORT" --web.config.file="$E2E_DIR/optin.yml" \
	--web.insecure-no-auth
OPT_PID=${EXPORTER_PIDS[-1]}
wait_http "http://127.0.0.1:$OPT_PORT/"
code=$(curl -s -o /dev/null -w '%{http_code}' "${GUESS[@]}" "http://127.0.0.1:$OPT_PORT/metrics")
check "--web.insecure-no-auth with basic_auth_users: credentials are still needed ($code)" [ "$code" = 401 ]
printf 'http_server_config:\n  http2: true\n' >"$E2E_DIR/optin.yml"
kill -HUP "$OPT_PID"
code=
open_now() {
	code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$OPT_PORT/metrics")
	[ "$code" = 200 ]
}
wait_for 5 open_now
check "... SIGHUP with a file without users: then served without credentials ($code)" [ "$code" = 200 ] ||
	tail -n 5 "$E2E_DIR/exporter-optin.log" | sed 's/^/# optin: /'


# --- the systemd unit ---------------------------------------------------------
unit=$E2E_DIR/prefix/lib/systemd/system/pgoff_exporter.service
systemd-analyze verify "$unit" >"$E2E_DIR/verify.out" 2>&1
rc=$?
grep -v 'pgoffd.service' "$E2E_DIR/verify.out" | sed 's/^/# /'
check "systemd-analyze verify accepts pgoff_exporter.service" \
	bash -c "[ $rc = 0 ] && ! grep -v 'pgoffd.service' '$E2E_DIR/verify.out' | grep -q ."
check "the unit: its own user, group pgoff, no capabilities, read-only system" \
	bash -c "grep -qx 'User=pgoff-exporter' '$unit' && grep -qx 'SupplementaryGroups=pgoff' '$unit' &&
		grep -qx 'CapabilityBoundingSet=' '$unit' && grep -qx 'ProtectSystem=strict' '$unit' &&
		grep -qx 'NoNewPrivileges=yes' '$unit' && grep -qx 'ExecStart=$EXPORTER \$PGOFF_EXPORTER_ARGS' '$unit'"
exposure=$(systemd-analyze security --offline=true "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for .*: //p')
note "systemd-analyze security --offline: ${exposure:-not available}"

stop_servers
if [ -n "${PGOFF_SANITIZE:-}" ]; then
	check "the exporters' logs have no sanitizer report" \
		bash -c "! grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error' '$E2E_DIR'/exporter-*.log"
fi
note "test_exporter: $SECONDS s"
