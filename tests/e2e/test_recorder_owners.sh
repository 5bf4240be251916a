#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flight record shared fairly between cluster owners: a cluster of
# postgres's stores its waits first (its "week"); then a second local
# user's cluster floods pgoffd with about four times record-max-size of
# recorded waits. The flooder is refused past its half of the record
# (counted, per owner, in history and status) instead of pushing the
# first cluster's events out; every one of them still replays after the
# flood, and the first cluster goes on being recorded. The second user
# also runs a rootless container (a user namespace of theirs, its uids
# the host's subuids): its cluster, a subuid's, counts for that user,
# so its flood shares the user's half instead of taking a third share;
# and it counts in max-clusters-per-user, so a second container of
# theirs, past the limit, is not traced.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

pg_start autovacuum=off || { not_ok "start PostgreSQL 15"; exit 1; }

# the second owner's cluster, owned by pgoffe2e_out (not in the group)
OUT=$E2E_DIR/out OUT_SOCK=$E2E_DIR/out-sock PORT_O=$((PGPORT + 1))
mkdir -p "$OUT" "$OUT_SOCK" && chown "$E2E_OUTSIDER" "$OUT" "$OUT_SOCK"
as "$E2E_OUTSIDER" "$PGBIN/initdb" -D "$OUT/data" -A trust -U postgres \
	>"$E2E_DIR/initdb-out.log" 2>&1 ||
	{ not_ok "initdb as $E2E_OUTSIDER"; sed 's/^/# /' "$E2E_DIR/initdb-out.log"; exit 1; }
as "$E2E_OUTSIDER" "$PGBIN/pg_ctl" -D "$OUT/data" -w -l "$OUT/log" \
	-o "-p $PORT_O -k $OUT_SOCK -c listen_addresses= -c autovacuum=off" start \
	>/dev/null 2>&1 || { not_ok "start the second cluster"; sed 's/^/# /' "$OUT/log"; exit 1; }
trap 'kill -QUIT ${PM_C:-} ${PM_C2:-} 2>/dev/null; as "$E2E_OUTSIDER" "$PGBIN/pg_ctl" -D "$OUT/data" -m immediate stop >/dev/null 2>&1; e2e_cleanup' EXIT
osql() { psql -X -q -At -h "$OUT_SOCK" -p "$PORT_O" -U postgres -d postgres "$@"; }
OUT_UID=$(id -u "$E2E_OUTSIDER") OUT_GID=$(id -g "$E2E_OUTSIDER") PG_UID=$(id -u postgres)

# the second user's rootless container, as podman makes one: a user
# namespace of theirs where they are root, its uids 1.. the host's
# subuids SUB.. (written here as newuidmap writes /etc/subuid's range);
# postgres runs there as its uid 999, the host's SUB_PG
SUB=400001 SUB_PG=400999
# userns_cluster DIR PORT UID: a cluster in a new namespace of the user's,
# its files in DIR, run as the namespace's UID; PM_NS is its postmaster
userns_cluster() {
	local dir=$1 port=$2 inner=$3 host=$((SUB + $3 - 1))
	mkdir -p "$dir/sock" && chown "$host:$host" "$dir" "$dir/sock" && mkfifo "$dir/go"
	setpriv --reuid="$OUT_UID" --regid="$OUT_GID" --init-groups -- unshare --user sh -c "
		read _ <'$dir/go' &&
		exec setpriv --reuid=$inner --regid=$inner --clear-groups sh -c \"
			'$PGBIN/initdb' -D '$dir/data' -A trust -U postgres >'$dir/initdb.log' 2>&1 &&
			exec '$PGBIN/postgres' -D '$dir/data' -p $port -k '$dir/sock' \
				-c listen_addresses= -c autovacuum=off\"" >"$dir/ct.log" 2>&1 &
	PM_NS=$!
	in_userns() { [ "$(readlink "/proc/$PM_NS/ns/user")" != "$(readlink /proc/self/ns/user)" ]; }
	wait_for 10 in_userns
	# (a map is written once, whole: a here-string makes it one write)
	cat >"/proc/$PM_NS/uid_map" <<<"$(printf '0 %s 1\n1 %s 65536' "$OUT_UID" "$SUB")" &&
		cat >"/proc/$PM_NS/gid_map" <<<"$(printf '0 %s 1\n1 %s 65536' "$OUT_GID" "$SUB")" &&
		echo go >"$dir/go" || { not_ok "map the uids of the namespace at $dir"; exit 1; }
	up() { psql -X -q -At -h "$dir/sock" -p "$port" -U postgres -d postgres -c "select 1" >/dev/null 2>&1; }
	wait_for 60 up || { not_ok "the cluster at $dir is up"; sed 's/^/# /' "$dir/ct.log" "$dir/initdb.log"; exit 1; }
}
CT=$E2E_DIR/ct CT_SOCK=$E2E_DIR/ct/sock PORT_C=$((PGPORT + 2))
userns_cluster "$CT" "$PORT_C" 999
PM_C=$PM_NS
csql() { psql -X -q -At -h "$CT_SOCK" -p "$PORT_C" -U postgres -d postgres "$@"; }

# 2 MiB of events (record-max-size is shared with the aggregation), in
# segments of 512 KiB; every wait recorded, with its SQL (random text,
# which compresses little, so that the flood is quick)
e2e_start_broker --record-min 0 --record-queries full --record-max-size 4M ||
	{ not_ok "start pgoffd"; exit 1; }
hist() { member history --json; }
traced_both() {
	member ps --json | jq -e --argjson a "$PG_UID" --argjson b "$OUT_UID" \
		'[.clusters[].owner] | index($a) and index($b)' >/dev/null
}
ct_cluster() { member ps --json | jq -c --argjson p "$PM_C" '.clusters[] | select(.postmaster_pid == $p)'; }
traced_all() { traced_both && [ -n "$(ct_cluster)" ]; }
wait_for 20 traced_all || note "ps: $(member ps --json | jq -c '[.clusters[] | {id, owner, account_uid}]')"
check "pgoffd traces the three clusters (owners $PG_UID, $OUT_UID and the container's $SUB_PG)" traced_all
note "the container's cluster: $(ct_cluster | jq -c '{owner, account_uid, account_uid_missing}')"
check "... the container's, a subuid's, counts for the user who made its namespace ($OUT_UID)" \
	jqe ".owner == $SUB_PG and .account_uid == $OUT_UID" <<<"$(ct_cluster)"
check "... as pgoffd logged" grep -q "postmaster $PM_C (uid $SUB_PG, in a user namespace of uid $OUT_UID)" "$E2E_DIR/pgoffd.log"

# --- the first cluster's waits: 200 sleeps of one session, a statement each
T0=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
{ echo "select pg_backend_pid();"; for _ in $(seq 200); do echo "select pg_sleep(0.002);"; done; } \
	>"$E2E_DIR/sleeps.sql"
sql -f "$E2E_DIR/sleeps.sql" >"$E2E_DIR/sleeps.out"
P1=$(head -n1 "$E2E_DIR/sleeps.out")
# replayed: the first cluster's session's stored events (waits and
# intervals), and of them its sleeps
replayed() {
	# (member execs in a subshell: its own, so that jq runs after it)
	(member watch --since "$T0" --pid "$P1" --view both --min 0 --json \
		--timeout 3s) 2>"$E2E_DIR/replay.err" >"$E2E_DIR/replay.json"
	jq -s 'length' "$E2E_DIR/replay.json"
}
# what the last replay gave, by type and wait event
replay_note() {
	note "replayed of $P1: $(jq -s -c 'group_by(.type + " " + (.pg.wait_event // "-")) |
		map({key: (.[0].type + " " + (.[0].pg.wait_event // "-")), value: length}) |
		from_entries' "$E2E_DIR/replay.json" 2>&1)"
}
stored_200() { R1=$(replayed); [ "${R1:-0}" -ge 400 ]; }
wait_for 10 stored_200
replay_note
check "the first cluster's 200 sleeps are stored ($R1 events replayed)" [ "${R1:-0}" -ge 400 ] ||
	note "replay: $(head -c 300 "$E2E_DIR/replay.err")"
before=$(hist)
note "history before the flood: $(jq -c '{bytes, segments, first_seq, last_seq, owners}' <<<"$before")"

# --- the flood: 4 sessions of the second cluster, 1 KiB statements
python3 - "$E2E_DIR/flood.sql" <<'PY'
import random, string, sys
chars = string.ascii_letters + string.digits
with open(sys.argv[1], "w") as f:
    for _ in range(2000):
        f.write("select pg_sleep(0.0002), '%s';\n" % "".join(random.choices(chars, k=900)))
PY
# (two sessions in the user's own cluster, two in their container's)
flood() {
	local jobs=()
	for _ in 1 2; do
		osql -f "$E2E_DIR/flood.sql" >/dev/null &
		jobs+=($!)
		csql -f "$E2E_DIR/flood.sql" >/dev/null &
		jobs+=($!)
	done
	wait "${jobs[@]}"
}
flood
after=$(hist)
owner() { jq -c --argjson u "$1" '.owners[] | select(.uid == $u)' <<<"$after"; }
note "history after: $(jq -c '{bytes, segments, first_seq, last_seq, counters}' <<<"$after")"
note "owner $PG_UID: $(owner "$PG_UID"); owner $OUT_UID: $(owner "$OUT_UID")"
flooded=$(owner "$OUT_UID" | jq '.events_stored + .events_refused')
check "the flood was far more than the record holds ($flooded events of about 1 KiB, cap 2 MiB)" \
	[ "${flooded:-0}" -ge 8000 ]
check "the flooder was refused past its share, counted in history" \
	jqe '.events_refused > 0 and .share_bytes == 1048576' <<<"$(owner "$OUT_UID")"
check "... its container's waits among them: two owners, not one a subuid's ($(jq -c '[.owners[].uid]' <<<"$after"))" \
	jqe "[.owners[].uid] | sort == ([$PG_UID, $OUT_UID] | sort)" <<<"$after"
# its bytes are its part of each batch written; a batch (50 ms) may pass
# each owner's part of a batch is what its own lines of it take
# compressed alone, in proportion (test_owner_share checks the sharing)
cost() { owner "$1" | jq '.disk_per_line_byte // 1'; }
check "each owner's last batch is its lines compressed: the flooder's $(cost "$OUT_UID"), the first owner's $(cost "$PG_UID") a byte" \
	awk -v f="$(cost "$OUT_UID")" -v p="$(cost "$PG_UID")" 'BEGIN { exit !(p > 0 && p < 1 && f > 0 && f < 1) }'
check "... and holds its half of the record, no more (a batch at most over)" \
	jqe '.bytes <= .share_bytes + 65536' <<<"$(owner "$OUT_UID")"
# status, read later, counts what was still in the ring then too
sc=$(member status --json | jq .counters.record_dropped_owner_share)
check "... and in status: record_dropped_owner_share $sc >= $(owner "$OUT_UID" | jq .events_refused)" \
	[ "${sc:-0}" -ge "$(owner "$OUT_UID" | jq .events_refused)" ]
check "the first cluster's owner was refused nothing" jqe '.events_refused == 0 and .events_stored >= 400' <<<"$(owner "$PG_UID")"
check "no segment holding the first cluster's events was removed (first seq $(jq .first_seq <<<"$before") kept)" \
	jqe ".first_seq == $(jq .first_seq <<<"$before") and .counters.segments_removed == 0" <<<"$after"
R2=$(replayed)
replay_note
check "every one of the first cluster's events still replays ($R1 before the flood, $R2 after)" \
	[ "${R2:-0}" -eq "${R1:-0}" ]

# --- the first cluster goes on being recorded
stored0=$(owner "$PG_UID" | jq .events_stored)
sql -c "select pg_sleep(0.05)" >/dev/null
more_stored() { after=$(hist); [ "$(owner "$PG_UID" | jq .events_stored)" -gt "$stored0" ]; }
wait_for 10 more_stored
check "the first cluster's new waits are still stored" more_stored

# --- the owners' parts survive a restart of pgoffd
e2e_stop_broker TERM
check "pgoffd saved each owner's part of the record" \
	grep -q "^$OUT_UID " "$E2E_DIR/state/owners"
# (two clusters a user from now on: the second user's own and container's)
e2e_start_broker --record-min 0 --record-queries full --record-max-size 4M \
	--max-clusters-per-user 2 || { not_ok "restart pgoffd"; exit 1; }
wait_for 20 traced_all
after=$(hist)
note "after the restart: $(jq -c '.owners' <<<"$after")"
check "after a restart, the flooder's bytes are still its own (at least half its share)" \
	jqe '.bytes >= 524288' <<<"$(owner "$OUT_UID")"
osql -f "$E2E_DIR/flood.sql" >/dev/null
after=$(hist)
check "... and its flood is refused at once" jqe '.events_refused > 0' <<<"$(owner "$OUT_UID")"
R3=$(replayed)
check "... and the first cluster's events still replay ($R3)" [ "${R3:-0}" -eq "${R1:-0}" ]

# --- max-clusters-per-user counts a user's containers: a second one,
# its postgres another subuid (a uid /proc shows no cluster of), is the
# user's third cluster
userns_cluster "$E2E_DIR/ct2" "$((PGPORT + 3))" 998
PM_C2=$PM_NS
refusal() { member ps --json | jq -c --argjson p "$PM_C2" '.untraced[]? | select(.pid == $p)'; }
refused() { [ -n "$(refusal)" ]; }
wait_for 10 refused
check "a user's third cluster, in a second container of theirs, is not traced: $(refusal)" \
	jqe --arg w "uid $OUT_UID (whose user namespace it runs in) has as many clusters traced as max-clusters-per-user allows (2)" \
	'.uid == '"$((SUB + 997))"' and (.why | contains($w))' <<<"$(refusal)"
check "... while their two are" traced_all
exit "$TAP_FAILED"
