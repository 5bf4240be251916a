#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Least privilege, proven on the running broker: pgoffd itself keeps no
# capability and runs as an unprivileged user; its prober keeps exactly
# CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH; and a cluster started after
# the drop is still found and told in PostgreSQL's terms.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# fs.suid_dumpable=1 leaves a process dumpable after its uid changes:
# pgoffd and the prober must make themselves non-dumpable, whatever the
# setting
dumpable_was=$(sysctl -n fs.suid_dumpable)
restore_dumpable() { [ -z "$dumpable_was" ] || sysctl -qw fs.suid_dumpable="$dumpable_was"; }
trap 'restore_dumpable; e2e_cleanup' EXIT
sysctl -qw fs.suid_dumpable=1
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
restore_dumpable
prober=$(pgrep -P "$E2E_BROKER_PID" | head -n1)
user=$(id -u "$E2E_BROKER_USER")
# status FIELD PID: the value(s) of a /proc/PID/status line, tabs folded
status() { awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "/proc/$2/status"; }

check "pgoffd runs as uid $user (real, effective, saved, fs)" \
	[ "$(status Uid "$E2E_BROKER_PID")" = "$user $user $user $user" ]
check "pgoffd has no supplementary groups" [ -z "$(status Groups "$E2E_BROKER_PID")" ]
for set in CapEff CapPrm CapBnd CapInh CapAmb; do
	check "pgoffd $set is empty" [ "$(status $set "$E2E_BROKER_PID")" = 0000000000000000 ]
done
check "pgoffd has no_new_privs" [ "$(status NoNewPrivs "$E2E_BROKER_PID")" = 1 ]

check "the prober is pgoffd's only child" [ -n "$prober" ]
check "the prober runs as uid $user" [ "$(status Uid "$prober")" = "$user $user $user $user" ]
# CAP_DAC_READ_SEARCH = 2, CAP_SYS_PTRACE = 19
for set in CapEff CapPrm CapBnd; do
	check "the prober's $set is exactly dac_read_search + sys_ptrace" \
		[ "$(status $set "$prober")" = 0000000000080004 ]
done
check "the prober has no_new_privs" [ "$(status NoNewPrivs "$prober")" = 1 ]
# the files of a process that is not dumpable are root's (/proc/PID
# itself stays the process's)
proc_owner=$(stat -c %u "/proc/$prober/status")
check "the prober is not dumpable, started with fs.suid_dumpable=1 (/proc/PID/status owned by uid $proc_owner)" \
	[ "$proc_owner" = 0 ]
proc_owner=$(stat -c %u "/proc/$E2E_BROKER_PID/status")
check "pgoffd is not dumpable, started with fs.suid_dumpable=1 (/proc/PID/status owned by uid $proc_owner)" \
	[ "$proc_owner" = 0 ]
# map_ids PID: the ids of the BPF maps a process holds, with each fd's
# access mode (0 read-only, 2 read-write), as "id:mode" words
map_ids() {
	local f
	for f in /proc/"$1"/fdinfo/*; do
		awk '$1 == "flags:" { m = strtonum("0" $2) % 4 } $1 == "map_id:" { id = $2 }
			END { if (id != "") print id ":" m }' "$f" 2>/dev/null
	done | sort -n | xargs
}
targets_id=$(bpftool map show 2>/dev/null | awk -F'[: ]+' '$4 == "targets" { print $1 }' | tail -n1)
quotas_id=$(bpftool map show 2>/dev/null | awk -F'[: ]+' '$4 == "quotas" { print $1 }' | tail -n1)
slots_id=$(bpftool map show 2>/dev/null | awk -F'[: ]+' '$4 == "target_slots" { print $1 }' | tail -n1)
note "targets map $targets_id, quotas map $quotas_id, target_slots map $slots_id; the prober holds maps: $(map_ids "$prober"), maps $(grep -c bpf-map "/proc/$prober/maps") into memory"
# prog_names PID: the names of the BPF programs a process holds
prog_names() {
	local id
	for id in $(awk '$1 == "prog_id:" { print $2 }' /proc/"$1"/fdinfo/* 2>/dev/null); do
		bpftool prog show id "$id" 2>/dev/null | awk -F'[: ]+' 'NR == 1 { print $4 }'
	done | sort | xargs
}
note "the prober holds programs: '$(prog_names "$prober")'"
# The wait-probe program: the prober links the probes of a postmaster's
# binary found after start (docs/ARCHITECTURE.md, How it works); a uprobe program only,
# no scheduler hook.
check "the prober holds the targets map read-write, the quotas and the targets' slot counts mapped, the wait-probe program, and nothing else of BPF" \
	[ "$(map_ids "$prober")" = "$targets_id:2" -a \
	  "$(grep -c 'anon_inode:bpf-map' "/proc/$prober/maps")" = 2 -a \
	  "$(prog_names "$prober")" = pg_usdt ]
pgoffd_targets=$(map_ids "$E2E_BROKER_PID" | tr ' ' '\n' | grep -E "^($targets_id|$slots_id):")
check "pgoffd holds no descriptor of the targets map nor of its slot counts (${pgoffd_targets:-none})" \
	[ -n "$targets_id" -a -n "$slots_id" -a -z "$pgoffd_targets" ]
sockdir=$(stat -c '%U %G %a' "$(dirname "$SOCK")")
check "the socket directory is root's, not that user's: root $E2E_GROUP 750 (saw $sockdir)" \
	[ "$sockdir" = "root $E2E_GROUP 750" ]

# discovery after the drop: exe, cwd, maps and postmaster.pid via the prober
pg_start || { not_ok "start PostgreSQL 15"; exit 1; }
lists_cluster() {
	member ps --json | jqe --arg d "$PGDATA_DIR" --argjson p "$PGPORT" \
		'any(.clusters[]; .data_dir == $d and .port == $p)'
}
wait_for 10 lists_cluster	# found by a scan (once a second)
# the backend sleeps once the watch has subscribed: none of it is missed
member watch --view intervals --pg-wait Timeout:PgSleep --min 200ms --json --count 1 \
	--timeout 15s >"$E2E_DIR/late.json" &
w=$!
watchers 1 || note "the watch did not subscribe: $(head -c 300 "$E2E_DIR/late.json" | tr "\n" " ")"
sql -c "select pg_sleep(0.5)" >/dev/null
wait "$w"
name="a cluster started after the drop: its data directory, port and wait events"
if jqe --arg d "$PGDATA_DIR" --argjson p "$PGPORT" \
	'.pg.cluster.data_dir == $d and .pg.cluster.port == $p and .pg.wait_event == "PgSleep"' \
	"$E2E_DIR/late.json"; then
	ok "$name"
else
	not_ok "$name"
	note "got: $(cat "$E2E_DIR/late.json")"
	note "clusters now: $(member ps --json | jq -c .clusters)"
	sed 's/^/# pgoffd: /' "$E2E_DIR/pgoffd.log"
fi

kill -0 "$E2E_BROKER_PID" 2>/dev/null || sed "s/^/# pgoffd: /" "$E2E_DIR/pgoffd.log"
kill -KILL "$E2E_BROKER_PID"; wait "$E2E_BROKER_PID" 2>/dev/null; E2E_BROKER_PID=
# exited PID: gone, or a zombie
exited() { case $(status State "$1" 2>/dev/null) in ""|Z*) return 0 ;; esac; return 1; }
check "the prober dies with pgoffd (killed with -9)" wait_for 3 exited "$prober"
