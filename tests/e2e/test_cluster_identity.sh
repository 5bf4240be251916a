#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# e2e-timeout: 180
# Clusters told apart as operators know them, each with an identity of
# its own, in ps, events, top and pgoff_exporter's series:
# - two clusters at one path, /srv/pgc/data, each in its own mount and pid
#   namespaces as two containers of one image (the second's data
#   directory a copy of the first's: one system identifier), the first
#   in a cgroup named like a Docker container's (docker/<64 hex> in a
#   cgroup v1 hierarchy, or v2's), get two ids, two containers (docker
#   and none), and two exporter series, each with its own second of
#   pg_sleep(1); watch and top --container see the first one's only;
# - a primary and its streaming replica (pg_basebackup -R, a second
#   port): one system identifier, two ids;
# - a cluster restarted, and pgoffd restarted, keep every id;
# - a look-alike: another local user's cluster, in a user and mount
#   namespace of theirs, at the real cluster's very path, runs the
#   root-owned postgres: ps flags both as sharing a path, the exporter's
#   pgoff_cluster_path_shared says 1, and its pg_sleep never adds to the
#   real cluster's series.
. "$(dirname "$0")/lib.sh"
e2e_require
for tool in unshare pg_basebackup curl; do
	command -v "$tool" >/dev/null && continue
	[ "$tool" = pg_basebackup ] && [ -x "$PGBIN/pg_basebackup" ] && continue
	tap_skip_file "cluster identities" "$tool is needed (util-linux, postgresql-15, curl)"
done
e2e_setup
EXPORTER=$E2E_DIR/prefix/bin/pgoff_exporter
EXPORTER_PID= CT_A_JOB= CT_B_JOB= OUT_JOB= CGROUP= CGROUP_PARENT_MADE=

# the cgroup a container's processes go to, as Docker's cgroupfs driver
# names it: a v1 hierarchy (pids) where there is one, else cgroup v2's
CT_A_ID=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
if [ "$(stat -fc %T /sys/fs/cgroup/pids 2>/dev/null)" = cgroupfs ]; then
	cg_root=/sys/fs/cgroup/pids
elif [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	cg_root=/sys/fs/cgroup
else
	tap_skip_file "cluster identities" "no cgroup v1 pids hierarchy nor cgroup v2 at /sys/fs/cgroup"
fi
[ -d "$cg_root/docker" ] || CGROUP_PARENT_MADE=$cg_root/docker
CGROUP=$cg_root/docker/$CT_A_ID
mkdir -p "$CGROUP" || { not_ok "mkdir $CGROUP"; exit 1; }

stop_all() {
	[ -n "$EXPORTER_PID" ] && kill "$EXPORTER_PID" 2>/dev/null && wait "$EXPORTER_PID" 2>/dev/null
	# a container's job is unshare, its child the postmaster; the
	# look-alike's job is its postmaster itself (each step execs the next)
	for j in $CT_A_JOB $CT_B_JOB; do
		pm=$(pgrep -P "$j" -f postgres 2>/dev/null | head -n1)
		[ -n "$pm" ] && kill -INT "$pm" 2>/dev/null
		wait "$j" 2>/dev/null
	done
	[ -n "$OUT_JOB" ] && kill -INT "$OUT_JOB" 2>/dev/null && wait "$OUT_JOB" 2>/dev/null
	[ -f "$E2E_DIR/replica/postmaster.pid" ] &&
		su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$E2E_DIR/replica' -m immediate stop" >/dev/null 2>&1
	rmdir "$CGROUP" 2>/dev/null
	[ -n "$CGROUP_PARENT_MADE" ] && rmdir "$CGROUP_PARENT_MADE" 2>/dev/null
}
trap 'stop_all; e2e_cleanup' EXIT

pg_start || { not_ok "start PostgreSQL 15"; exit 1; }
REAL=$PGDATA_DIR
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

# --- two containers of one image at /srv/pgc/data -----------------------------
inside=/srv/pgc/data
mkdir -p "$E2E_DIR/ct-a" "$E2E_DIR/ct-b" && chown postgres "$E2E_DIR/ct-a" "$E2E_DIR/ct-b"
su postgres -s /bin/sh -c "$PGBIN/initdb -D '$E2E_DIR/ct-a/data' -A trust -U postgres" \
	>"$E2E_DIR/initdb-ct.log" 2>&1 || { not_ok "initdb"; cat "$E2E_DIR/initdb-ct.log"; exit 1; }
cp -a "$E2E_DIR/ct-a/data" "$E2E_DIR/ct-b/data"	# one image: one system identifier
PORT_A=$((20000 + RANDOM % 10000)) PORT_B=$((30000 + RANDOM % 10000))

# container NAME PORT [CGROUP]: its postgres in mount and pid namespaces
# of its own, its data directory (kept out here, as a volume) bind-mounted
# at $inside; in CGROUP from before its first process forks. Its job's
# pid in CT_JOB.
container() {
	local name=$1 port=$2 cg=${3:-}
	sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs" || exit 1; shift; exec "$@"' sh "$cg" \
		unshare --mount --pid --fork --kill-child --mount-proc sh -c "
		mount -t tmpfs none /srv && mkdir -p '$inside' &&
		mount --bind '$E2E_DIR/$name/data' '$inside' &&
		exec setpriv --reuid=postgres --regid=postgres --init-groups -- \
			'$PGBIN/postgres' -D '$inside' -p $port -k '$E2E_DIR/$name' -c listen_addresses=" \
		>>"$E2E_DIR/$name.log" 2>&1 &
	CT_JOB=$!
}
csql() { psql -X -q -At -h "$E2E_DIR/$1" -p "$2" -U postgres -d postgres "${@:3}"; }
up() { csql "$1" "$2" -c "select 1" >/dev/null 2>&1; }

container ct-a "$PORT_A" "$CGROUP"; CT_A_JOB=$CT_JOB
container ct-b "$PORT_B"; CT_B_JOB=$CT_JOB
wait_for 30 up ct-a "$PORT_A" || { not_ok "container A is up"; sed 's/^/# /' "$E2E_DIR/ct-a.log"; exit 1; }
wait_for 30 up ct-b "$PORT_B" || { not_ok "container B is up"; sed 's/^/# /' "$E2E_DIR/ct-b.log"; exit 1; }
PM_A=$(pgrep -P "$CT_A_JOB" -f postgres | head -n1)
note "container A: postmaster ${PM_A:-?}, $(grep -h pids /proc/"${PM_A:-0}"/cgroup 2>/dev/null || head -n1 /proc/"${PM_A:-0}"/cgroup)"

# the primary's streaming replica on a second port
REPLICA=$E2E_DIR/replica PORT_R=$((40000 + RANDOM % 10000))
mkdir -m 0700 "$REPLICA" && chown postgres "$REPLICA"
su postgres -s /bin/sh -c "$PGBIN/pg_basebackup -h '$E2E_DIR/pg' -p $PGPORT -U postgres -D '$REPLICA' -R -X stream" \
	>"$E2E_DIR/basebackup.log" 2>&1 || { not_ok "pg_basebackup -R"; sed 's/^/# /' "$E2E_DIR/basebackup.log"; exit 1; }
su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$REPLICA' -w -l '$E2E_DIR/pg/replica.log' -o '-p $PORT_R -k $E2E_DIR/pg -c listen_addresses=' start" \
	>/dev/null 2>&1 || { not_ok "start the replica"; sed 's/^/# /' "$E2E_DIR/pg/replica.log"; exit 1; }
check "the replica is in recovery" \
	[ "$(psql -X -At -h "$E2E_DIR/pg" -p "$PORT_R" -U postgres -d postgres -c 'select pg_is_in_recovery()')" = t ]

# ps: CLUSTER FIELD: FIELD of the cluster whose postmaster's data
# directory is CLUSTER (a path out here, or "A", "B" for the containers)
ps_json() { member ps --json >"$E2E_DIR/ps.json" 2>"$E2E_DIR/ps.err"; }
pm_of() { head -n1 "$1/postmaster.pid" 2>/dev/null; }
field() {	# PM FIELD
	jq -r --argjson pm "${1:-0}" ".clusters[] | select(.postmaster_pid == \$pm) | $2 // empty" "$E2E_DIR/ps.json"
}
four_traced() {
	ps_json && [ "$(jq '[.clusters[] | select(.cluster_id != null)] | length' "$E2E_DIR/ps.json")" -ge 4 ] &&
		[ -n "$(field "$PM_A" .cluster_id)" ]
}
wait_for 15 four_traced
PM_B=$(pgrep -P "$CT_B_JOB" -f postgres | head -n1)
PM_REAL=$(pm_of "$REAL") PM_R=$(pm_of "$REPLICA")
ID_A=$(field "$PM_A" .cluster_id) ID_B=$(field "$PM_B" .cluster_id)
ID_REAL=$(field "$PM_REAL" .cluster_id) ID_R=$(field "$PM_R" .cluster_id)
note "ids: A ${ID_A:-?}, B ${ID_B:-?}, primary ${ID_REAL:-?}, replica ${ID_R:-?}"
note "ps: $(member ps | grep '^cluster\|^  the same' | tr '\n' '|')"
check "the two containers' clusters are at one path, $inside" \
	[ "$(field "$PM_A" .data_dir)" = "$inside" -a "$(field "$PM_B" .data_dir)" = "$inside" ]
check "... with one system identifier (one image)" \
	[ -n "$(field "$PM_A" .system_identifier)" -a "$(field "$PM_A" .system_identifier)" = "$(field "$PM_B" .system_identifier)" ]
check "... and two ids of 16 hex digits" \
	bash -c "[[ '$ID_A' =~ ^[0-9a-f]{16}\$ && '$ID_B' =~ ^[0-9a-f]{16}\$ && '$ID_A' != '$ID_B' ]]"
check "A is named as Docker names its container: docker, ${CT_A_ID:0:12}..." \
	[ "$(field "$PM_A" .container.runtime)" = docker -a "$(field "$PM_A" .container.id)" = "$CT_A_ID" ]
check "B, in no container's cgroup, has none" [ -z "$(field "$PM_B" .container)" ]
check "ps flags A and B: each shares its path with the other" \
	[ "$(field "$PM_A" '.path_shared_with[0]')" = "$ID_B" -a "$(field "$PM_B" '.path_shared_with[0]')" = "$ID_A" ]
member ps >"$E2E_DIR/ps.txt" 2>&1
check "ps says so in its table" \
	grep -q "^  the same path as 1 other cluster ($ID_B): another container's, or a look-alike" "$E2E_DIR/ps.txt" ||
	note "ps: $(head -8 "$E2E_DIR/ps.txt")"
check "the primary and its replica: one system identifier, two ids" \
	[ -n "$ID_REAL" -a -n "$ID_R" -a "$ID_REAL" != "$ID_R" -a \
	  "$(field "$PM_REAL" .system_identifier)" = "$(field "$PM_R" .system_identifier)" ]
check "each cluster's owner is its postmaster's uid (postgres: $(id -u postgres))" \
	[ "$(field "$PM_A" .owner)" = "$(id -u postgres)" -a "$(field "$PM_R" .owner)" = "$(id -u postgres)" ]

# --- events and --container -------------------------------------------------
# B sleeps first, then A: a watch of A's container sees A's sleep only
member watch --container "${CT_A_ID:0:12}" --pg-wait Timeout:PgSleep --min 200ms \
	--count 1 --timeout 30s --json >"$E2E_DIR/watch-a.json" 2>"$E2E_DIR/watch-a.err" &
w=$!
watchers 1
csql ct-b "$PORT_B" -c "select pg_sleep(1)" >/dev/null
csql ct-a "$PORT_A" -c "select pg_sleep(1)" >/dev/null
wait "$w"
note "watch --container: $(head -c 600 "$E2E_DIR/watch-a.json") $(cat "$E2E_DIR/watch-a.err")"
check "watch --container ${CT_A_ID:0:12} gets A's sleep, not B's earlier one" \
	jqe --arg id "$ID_A" --arg ct "$CT_A_ID" '.pg.cluster.cluster_id == $id and
		.pg.cluster.container.id == $ct and .pg.cluster.container.runtime == "docker" and
		.pg.cluster.owner > 0 and .duration_ns >= 0.9e9' "$E2E_DIR/watch-a.json"
member watch --container 3f1c2b9a8e7 --count 1 >/dev/null 2>"$E2E_DIR/badct.err"
rc=$?
check "--container with 11 digits is a usage error (exit $rc)" \
	bash -c "[ $rc = 2 ] && grep -q 'not a container id' '$E2E_DIR/badct.err'"

# --- the exporter: one series a cluster ------------------------------------
EXP_PORT=$((20000 + RANDOM % 20000))
"${AS_MEMBER[@]}" "$EXPORTER" --pgoff.socket="$SOCK" --web.listen-address="127.0.0.1:$EXP_PORT" \
	--web.insecure-no-auth 2>"$E2E_DIR/exporter.log" &
EXPORTER_PID=$!
scrape() { curl -s --max-time 10 "http://127.0.0.1:$EXP_PORT/metrics" >"$E2E_DIR/$1.prom"; }
# sleep_s FILE LABELS...: PgSleep seconds of the series with all LABELS
sleep_s() {
	local f=$1; shift
	grep '^pgoff_offcpu_seconds_total{' "$f" | grep 'wait_event="PgSleep"' |
		awk -v want="$*" 'BEGIN { n = split(want, w, " ") }
			{ for (i = 1; i <= n; i++) if (!index($0, w[i])) next; s += $NF }
			END { printf "%.3f\n", s + 0 }'
}
wait_for 10 scrape first || note "the exporter did not answer: $(cat "$E2E_DIR/exporter.log")"
# a second scrape: the gauges over the time since the first (pgoffd
# shares one reading for 100 ms: a scrape within it has no window yet)
averaged() { scrape second && grep -q '^pgoff_backends_idle{' "$E2E_DIR/second.prom"; }
wait_for 5 averaged
A_S=$(sleep_s "$E2E_DIR/second.prom" "cluster_id=\"$ID_A\"")
B_S=$(sleep_s "$E2E_DIR/second.prom" "cluster_id=\"$ID_B\"")
PATH_S=$(sleep_s "$E2E_DIR/second.prom" "cluster=\"$inside\"")
note "PgSleep seconds: A $A_S, B $B_S, all of $inside $PATH_S"
note "A's series: $(grep "cluster_id=\"$ID_A\"" "$E2E_DIR/second.prom" | grep PgSleep | head -2)"
check "the exporter: A's cluster has its own second of pg_sleep(1) ($A_S s)" between "$A_S" 0.95 1.5
check "... and B's its own ($B_S s): one path, two series, never 2 s in one" between "$B_S" 0.95 1.5
check "A's series carry its container and owner" \
	grep -q "cluster=\"$inside\",cluster_id=\"$ID_A\",owner=\"$(id -u postgres)\",container=\"$CT_A_ID\",pod_uid=\"\"" "$E2E_DIR/second.prom"
check "pgoff_cluster_info names A's runtime; pgoff_cluster_path_shared is 1 for B" \
	bash -c "grep -q '^pgoff_cluster_info{.*cluster_id=\"$ID_A\".*runtime=\"docker\"' '$E2E_DIR/second.prom' &&
		grep -q '^pgoff_cluster_path_shared{.*cluster_id=\"$ID_B\".*} 1\$' '$E2E_DIR/second.prom'"
per_cluster='^pgoff_(offcpu_seconds_total|backends_waiting|backends_idle|wait_duration_seconds_count|wait_longest_seconds)\{'
# (A's own series are there: its sleep; whether a quiet cluster has an
# active wait between two scrapes, for pgoff_backends_waiting, is the
# machine's timing, not pgoff's)
check "no series of a cluster lacks its cluster_id ($(grep -cE "$per_cluster" "$E2E_DIR/second.prom") series, A's among them)" \
	bash -c "grep -qE '^pgoff_offcpu_seconds_total\{.*cluster_id=\"$ID_A\"' '$E2E_DIR/second.prom' &&
		! grep -E '$per_cluster' '$E2E_DIR/second.prom' | grep -q 'cluster_id=\"\"'" ||
	note "without one: $(grep -E "$per_cluster" "$E2E_DIR/second.prom" | grep 'cluster_id=""' | head -n 3)"

check "pgoff_backends_idle has one series a cluster (4: $(grep -c '^pgoff_backends_idle{' "$E2E_DIR/second.prom"))" \
	[ "$(grep -c '^pgoff_backends_idle{' "$E2E_DIR/second.prom")" = 4 ]

# pgoffctl metrics: the same labels as the exporter's
member metrics >"$E2E_DIR/metrics.prom" 2>"$E2E_DIR/metrics.err"
check "pgoffctl metrics: A's and B's PgSleep apart, with id, owner and container" \
	bash -c "grep -q '^pgoff_offcpu_seconds_total{cluster=\"$inside\",cluster_id=\"$ID_A\",owner=\"$(id -u postgres)\",container=\"$CT_A_ID\",.*wait_event=\"PgSleep\"' '$E2E_DIR/metrics.prom' &&
		grep -q '^pgoff_offcpu_seconds_total{cluster=\"$inside\",cluster_id=\"$ID_B\",owner=\"$(id -u postgres)\",container=\"\",.*wait_event=\"PgSleep\"' '$E2E_DIR/metrics.prom'" ||
	note "metrics: $(grep PgSleep "$E2E_DIR/metrics.prom" | head -3) $(head -c 300 "$E2E_DIR/metrics.err")"

# top --since: the record's rows carry the cluster; --container keeps A's
member top --since 1m --json --idle --container "${CT_A_ID:0:16}" >"$E2E_DIR/top-a.json" 2>"$E2E_DIR/top-a.err"
note "top --since --container: $(jq -c '[.rows[] | [.pid, .cluster_id, .container.id[0:12]]]' "$E2E_DIR/top-a.json" 2>&1 | head -c 300)"
check "top --since 1m --container: A's processes only, each with A's id" \
	jqe --arg id "$ID_A" --arg ct "$CT_A_ID" '(.rows | length) > 0 and
		all(.rows[]; .cluster_id == $id and .container.id == $ct)' "$E2E_DIR/top-a.json"

# --- restarts keep the ids --------------------------------------------------
kill -INT "$PM_A" && wait "$CT_A_JOB" 2>/dev/null
container ct-a "$PORT_A" "$CGROUP"; CT_A_JOB=$CT_JOB
wait_for 30 up ct-a "$PORT_A" || note "A did not come back: $(tail -5 "$E2E_DIR/ct-a.log")"
PM_A2=$(pgrep -P "$CT_A_JOB" -f postgres | head -n1)
a_back() { ps_json && [ -n "$(field "$PM_A2" .cluster_id)" ]; }
wait_for 15 a_back
check "container A restarted (postmaster ${PM_A2:-?}, was $PM_A): the same id ($(field "$PM_A2" .cluster_id))" \
	[ -n "$PM_A2" -a "$(field "$PM_A2" .cluster_id)" = "$ID_A" ]
e2e_stop_broker TERM
e2e_start_broker || { not_ok "start pgoffd again"; exit 1; }
all_back() {
	ps_json && [ "$(field "$PM_A2" .cluster_id)" = "$ID_A" ] &&
		[ "$(field "$PM_B" .cluster_id)" = "$ID_B" ] && [ "$(field "$PM_R" .cluster_id)" = "$ID_R" ] &&
		[ "$(field "$PM_REAL" .cluster_id)" = "$ID_REAL" ]
}
wait_for 15 all_back
check "pgoffd restarted: every cluster has the id it had" all_back ||
	note "ps: $(jq -c '[.clusters[] | [.postmaster_pid, .cluster_id]]' "$E2E_DIR/ps.json")"

# --- an outsider's look-alike at the real cluster's path -------------------
# pgoffe2e_out, in a user namespace of theirs (root there, to mount), a
# mount namespace with a tmpfs over the real cluster's parent, then a
# second user namespace where they are themselves again (postgres will
# not run as root), runs the root-owned postgres at $REAL
OUT_UID=$(id -u "$E2E_OUTSIDER") OUT_GID=$(id -g "$E2E_OUTSIDER")
OUT_SOCK=$E2E_DIR/out-sock PORT_O=$((50000 + RANDOM % 10000))
mkdir -p "$OUT_SOCK" && chown "$E2E_OUTSIDER" "$OUT_SOCK"
setpriv --reuid="$OUT_UID" --regid="$OUT_GID" --init-groups -- \
	unshare --user --map-root-user --mount sh -c "
	cd / && mount -t tmpfs -o mode=0755 none '$(dirname "$REAL")' &&
	exec unshare --user --map-user=$OUT_UID --map-group=$OUT_GID sh -c \"
		mkdir -m 0700 '$REAL' &&
		'$PGBIN/initdb' -D '$REAL' -A trust -U postgres >/dev/null &&
		exec '$PGBIN/postgres' -D '$REAL' -p $PORT_O -k '$OUT_SOCK' -c listen_addresses=\"" \
	>"$E2E_DIR/outsider.log" 2>&1 &
OUT_JOB=$!
osql() { psql -X -q -At -h "$OUT_SOCK" -p "$PORT_O" -U postgres -d postgres "$@"; }
o_up() { osql -c "select 1" >/dev/null 2>&1; }
wait_for 30 o_up || { not_ok "the look-alike is up"; sed 's/^/# /' "$E2E_DIR/outsider.log"; exit 1; }
PM_O=$(head -n1 "$OUT_SOCK/.s.PGSQL.$PORT_O.lock" 2>/dev/null)
o_traced() { ps_json && [ -n "$(field "$PM_O" .cluster_id)" ]; }
wait_for 15 o_traced
ID_O=$(field "$PM_O" .cluster_id)
note "look-alike: postmaster ${PM_O:-?} (uid $OUT_UID), $(field "$PM_O" .data_dir), id ${ID_O:-?}"
check "the look-alike is at the real cluster's path, $REAL, owned by $E2E_OUTSIDER" \
	[ "$(field "$PM_O" .data_dir)" = "$REAL" -a "$(field "$PM_O" .owner)" = "$OUT_UID" ]
check "... with an id of its own" [ -n "$ID_O" -a "$ID_O" != "$ID_REAL" ]
check "ps flags the real cluster: its path is also the look-alike's" \
	jqe --argjson pm "${PM_REAL:-0}" --arg o "$ID_O" \
		'.clusters[] | select(.postmaster_pid == $pm) | any(.path_shared_with[]?; . == $o)' "$E2E_DIR/ps.json"
# the real cluster's own sleep, counted before the look-alike's
sql -c "select pg_sleep(0.5)" >/dev/null
real_counted() {
	scrape before &&
		between "$(sleep_s "$E2E_DIR/before.prom" "cluster_id=\"$ID_REAL\"")" 0.45 1
}
wait_for 10 real_counted
REAL_BEFORE=$(sleep_s "$E2E_DIR/before.prom" "cluster=\"$REAL\"" "cluster_id=\"$ID_REAL\"")
osql -c "select pg_sleep(1)" >/dev/null
# the look-alike's second is counted (then the real one's must not be)
o_counted() {
	scrape after && between "$(sleep_s "$E2E_DIR/after.prom" "cluster_id=\"$ID_O\"")" 0.95 1.5
}
wait_for 10 o_counted
O_S=$(sleep_s "$E2E_DIR/after.prom" "cluster_id=\"$ID_O\"" "owner=\"$OUT_UID\"")
REAL_AFTER=$(sleep_s "$E2E_DIR/after.prom" "cluster=\"$REAL\"" "cluster_id=\"$ID_REAL\"")
note "PgSleep at $REAL: the real cluster $REAL_BEFORE s, then $REAL_AFTER s; the look-alike $O_S s"
check "the look-alike's pg_sleep(1) is in its own series ($O_S s, owner $OUT_UID)" between "$O_S" 0.95 1.5
check "... and never in the real cluster's ($REAL_BEFORE -> $REAL_AFTER s)" \
	[ "$REAL_BEFORE" = "$REAL_AFTER" -a "$REAL_AFTER" != 0.000 ]
check "pgoff_cluster_path_shared{cluster_id=\"$ID_REAL\"} is 1" \
	grep -q "^pgoff_cluster_path_shared{cluster=\"$REAL\",cluster_id=\"$ID_REAL\",.*} 1\$" "$E2E_DIR/after.prom"
exit "$TAP_FAILED"
