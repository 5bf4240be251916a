#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A cluster in its own mount and pid namespaces, as in a container: its
# data directory is at a path that does not exist outside (/proc/PID/cwd
# names it as the postmaster sees it), and postmaster.pid holds the
# postmaster's pid in its own namespace (1: it is the namespace's init,
# as in the official container image). pgoffd must trace it all the same.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup
command -v unshare >/dev/null || { not_ok "unshare (util-linux) is needed"; exit 1; }

e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

ns=$E2E_DIR/ns
inside=/mnt/pgoff-data	# the data directory's path inside the namespace
port=$((20000 + RANDOM % 20000))
mkdir -p "$ns" && chown postgres "$ns"
su postgres -s /bin/sh -c "$PGBIN/initdb -D '$ns/data' -A trust -U postgres" \
	>"$E2E_DIR/initdb.log" 2>&1 || { not_ok "initdb"; cat "$E2E_DIR/initdb.log"; exit 1; }
# a tmpfs hides the host's /mnt; the data directory is bind-mounted into it
unshare --mount --pid --fork --kill-child --mount-proc sh -c "
	mount -t tmpfs none /mnt && mkdir '$inside' && mount --bind '$ns/data' '$inside' &&
	exec setpriv --reuid=postgres --regid=postgres --init-groups -- \
		'$PGBIN/postgres' -D '$inside' -p $port -k '$ns' -c listen_addresses=" \
	>"$E2E_DIR/ns.log" 2>&1 &
ns_job=$!
trap 'kill -INT "$(pgrep -P "$ns_job")" 2>/dev/null; wait "$ns_job"; e2e_cleanup' EXIT
nsql() { psql -X -q -At -h "$ns" -p "$port" -U postgres -d postgres "$@"; }
nsql_up() { nsql -c "select 1" >/dev/null 2>&1; }
wait_for 30 nsql_up
check "the namespaced cluster is up" eval "nsql -c \"select 1\" >/dev/null"
pm=$(pgrep -P "$ns_job")
note "postmaster: pid ${pm:-?} here, NSpid $(grep NSpid "/proc/${pm:-0}/status" | cut -f2-); cwd $(readlink "/proc/${pm:-0}/cwd")"
check "its postmaster.pid names pid 1, as in a container" \
	[ "$(head -n1 "$ns/data/postmaster.pid")" = 1 ]
check "its data directory path does not exist out here" [ ! -e "$inside" ]

# found by a rescan (pgoffd started first), with the facts as seen inside
ps_lists_pm() {
	member ps --json >"$E2E_DIR/ps.json" 2>&1
	jqe --argjson pm "${pm:-0}" '.clusters[] | select(.postmaster_pid == $pm)' "$E2E_DIR/ps.json"
}
wait_for 10 ps_lists_pm
cluster=$(jq -c --argjson pm "${pm:-0}" '.clusters[] | select(.postmaster_pid == $pm)' "$E2E_DIR/ps.json")
note "ps: ${cluster:-no such cluster}"
check "pgoffd traces the namespaced cluster" [ -n "$cluster" ]
check "... with its data directory as the postmaster sees it, and its port" \
	jqe --arg d "$inside" --argjson p "$port" '.data_dir == $d and .port == $p' <<<"${cluster:-null}"

# a backend's wait in it: an episode under the host's pid of the backend
# (the session, connected first, says its pid as seen inside)
PGHOST=$ns PGPORT=$port PGUSER=postgres PGDATABASE=postgres session_open ns ||
	{ not_ok "a session in the namespaced cluster"; exit 1; }
member watch --pg-wait Timeout:PgSleep --min 100ms --json --count 1 --timeout 30s \
	>"$E2E_DIR/sleep.json" 2>"$E2E_DIR/sleep.err" &
w=$!
watchers 1
session_run ns "select pg_sleep(0.5);" || not_ok "pg_sleep(0.5) in the namespaced cluster"
wait "$w"
note "watch: $(head -c 400 "$E2E_DIR/sleep.json") $(cat "$E2E_DIR/sleep.err")"
check "a pg_sleep in it is an episode of Timeout/PgSleep of about 0.5 s" \
	jqe '.type == "episode" and .pg.wait_event == "PgSleep" and .duration_ns >= 490e6 and .duration_ns < 1e9' "$E2E_DIR/sleep.json"
check "... from that cluster" \
	jqe --arg d "$inside" '.pg.cluster.data_dir == $d' "$E2E_DIR/sleep.json"
backend=$(jq -r '.pid // empty' "$E2E_DIR/sleep.json" 2>/dev/null)
# the backend is still there: its pid out here, its parent the postmaster,
# and the pid it has inside is the one PostgreSQL gave
child_of_postmaster() {
	[ -n "$1" ] && [ "$(awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null)" = "$pm" ]
}
check "... under the backend's pid as seen out here (${backend:-?}, a child of the postmaster)" \
	child_of_postmaster "$backend"
nspid=$(awk '$1 == "NSpid:" { print $3 }' "/proc/${backend:-0}/status" 2>/dev/null)
check "... which is pg_backend_pid() ${SESSION_PID[ns]} inside (${nspid:-?})" \
	[ "${nspid:-}" = "${SESSION_PID[ns]}" ]
session_close ns
