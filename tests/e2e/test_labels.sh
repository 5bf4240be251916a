#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Labels of short-lived backends: with a new connection per transaction
# (pgbench -C, as PHP or serverless applications work), a backend may
# live for a few milliseconds, and goes off the CPU before PostgreSQL
# has set its title. The kernel reads its title from its memory at the
# first switch-out after that, and pgoffd holds its earlier records
# until then: every client backend's event carries database and user.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start max_connections=50 || { not_ok "start PostgreSQL 15"; exit 1; }
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
pgbench -i -s 1 -q >"$E2E_DIR/init.log" 2>&1 || { not_ok "pgbench -i"; cat "$E2E_DIR/init.log"; exit 1; }
pm=$(head -n1 "$PGDATA_DIR/postmaster.pid")

member watch --min 100us --json --timeout 10s >"$E2E_DIR/all.json" 2>"$E2E_DIR/watch.err" &
w=$!
watchers 1
pgbench -C -c 4 -j 2 -T 6 -n >"$E2E_DIR/pgbench.log" 2>&1
wait "$w"
note "pgbench: $(grep -E '^(number of transactions actually|tps)' "$E2E_DIR/pgbench.log" | tr '\n' ' ')"
# every process but the postmaster and its long-lived helpers: the
# backends pgbench connected, labelled or not
jq -s --argjson pm "$pm" '
	[.[] | select((.type == "offcpu" or .type == "episode") and .pid != $pm and
		(.pg.backend_type == null or .pg.backend_type == "client backend"))] as $b
	| { events: ($b | length),
	    labelled: ([$b[] | select(.pg.backend_type == "client backend" and
		.pg.database == "postgres" and .pg.user == "postgres")] | length),
	    backends: ([$b[] | .pid] | unique | length) }' "$E2E_DIR/all.json" >"$E2E_DIR/count.json"
note "client backends' events: $(jq -c . "$E2E_DIR/count.json")"
check "pgbench -C made many short-lived backends (>= 50 seen)" \
	jqe '.backends >= 50' "$E2E_DIR/count.json"
check ">= 99.9 % of their events carry database and user" \
	jqe '.events > 0 and .labelled >= 0.999 * .events' "$E2E_DIR/count.json"
if ! jqe '.labelled == .events' "$E2E_DIR/count.json"; then
	note "unlabelled: $(jq -c --argjson pm "$pm" 'select((.type == "offcpu" or .type == "episode") and .pid != $pm and .pg.backend_type == null) | {pid, type, missing: .pg.missing}' "$E2E_DIR/all.json" | head -3)"
fi
check "the watch itself said nothing on stderr" [ ! -s "$E2E_DIR/watch.err" ]
