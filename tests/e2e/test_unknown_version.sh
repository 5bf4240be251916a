#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A PostgreSQL major pgoffd has no tables for (20, or a fork with its own
# ids) is never mis-named: its wait events are raw ids, each event says
# why in pg.missing, status and ps say so for that cluster, and the log
# once. The server is PostgreSQL 15 whose version text was made to read
# 20 (the binary is otherwise the same, so it runs, root-owned as a
# distribution's would be).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

bindir=$E2E_DIR/pg20/bin
mkdir -p "$bindir"
/usr/bin/python3 - "$PGBIN/postgres" "$bindir/postgres" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
old = b"(PostgreSQL) 15."
assert data.count(old) == 1, data.count(old)
open(sys.argv[2], 'wb').write(data.replace(old, b"(PostgreSQL) 20."))
PY
chmod 0755 "$bindir/postgres"
# 20.N, N the host's minor release (15.N): what the copy and pgoffd say
minor=$("$PGBIN/postgres" --version | sed -n 's/.*(PostgreSQL) 15\.\([0-9]*\).*/\1/p')
v20=20.${minor:-?}
# it finds its libraries and share files beside its bin directory
ln -s /usr/lib/postgresql/15/lib "$E2E_DIR/pg20/lib"
ln -s /usr/share/postgresql/15 "$E2E_DIR/pg20/share"
check "the copy says it is PostgreSQL $v20 ($("$bindir/postgres" --version))" \
	bash -c "'$bindir/postgres' --version | grep -qF '(PostgreSQL) $v20 '"
# pg_ctl would start the postgres beside its own real path: -p names it
PGCTL_POSTGRES="-p $bindir/postgres" pg_start ||
	{ not_ok "start the PostgreSQL that says 20"; exit 1; }
check "the postmaster runs that copy" \
	[ "$(readlink "/proc/$(head -n1 "$PGDATA_DIR/postmaster.pid")/exe")" = "$bindir/postgres" ]
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

member ps --json >"$E2E_DIR/ps.json"
note "ps: $(jq -c '.clusters' "$E2E_DIR/ps.json")"
check "ps: the cluster is version $v20 with no wait names, and says why" \
	jqe --arg d "$PGDATA_DIR" --arg v "$v20" 'any(.clusters[] | select(.data_dir == $d); .version == $v and
		.wait_names == null and (.wait_names_missing | test("no names for PostgreSQL 20")))' "$E2E_DIR/ps.json"
member status --json >"$E2E_DIR/status.json"
check "status lists it among the clusters whose waits cannot be named" \
	jqe --arg v "$v20" '.clusters_unnamed | length == 1 and .[0].version == $v' "$E2E_DIR/status.json"
check "the log says so, once" \
	[ "$(grep -c 'no names for PostgreSQL 20' "$E2E_DIR/pgoffd.log")" = 1 ]

member watch --pg-wait Timeout --min 100ms --json --count 1 --timeout 20s \
	>"$E2E_DIR/sleep.json" 2>"$E2E_DIR/sleep.err" &
w=$!
watchers 1
sql -c "select pg_sleep(0.3)" >/dev/null
wait "$w"
note "event: $(jq -c '.pg | del(.cluster)' "$E2E_DIR/sleep.json" 2>/dev/null) $(cat "$E2E_DIR/sleep.err")"
check "pg_sleep: the raw id, not 15's name or any other version's" \
	jqe '.pg.wait_event_info == 150994946 and .pg.wait_event == "class 0x09 id 2" and .pg.wait_event_type == "class 0x09 id 2"' "$E2E_DIR/sleep.json"
check "... and pg.missing says there are no names for PostgreSQL 20" \
	jqe '.pg.missing.wait_event_name | test("no names for PostgreSQL 20")' "$E2E_DIR/sleep.json"
check "... while the rest is told: backend type, database, user" \
	jqe '.pg.backend_type == "client backend" and .pg.database == "postgres" and .pg.user == "postgres"' "$E2E_DIR/sleep.json"
