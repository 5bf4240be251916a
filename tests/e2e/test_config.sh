#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The settings file: pgoffd -n checks it; SIGHUP reloads it (a user no
# longer in the group is told and cut off, a new floor applies to live
# subscriptions); a bad file on SIGHUP changes nothing.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

conf=$E2E_DIR/pgoffd.conf
# record = no: the recorder's own 10 ms would be the kernel's threshold
printf '# e2e\ngroup = %s\nuser = %s\nmin-floor = 100us\nrecord = no\n' "$E2E_GROUP" "$E2E_BROKER_USER" >"$conf"
"$PGOFFD" -n -c "$conf" >"$E2E_DIR/n.out" 2>&1
check "pgoffd -n accepts a good file" [ $? = 0 ]
printf 'group = %s\nuser = %s\nmin-flor = 1ms\n' "$E2E_GROUP" "$E2E_BROKER_USER" >"$E2E_DIR/bad.conf"
"$PGOFFD" -n -c "$E2E_DIR/bad.conf" >"$E2E_DIR/n.out" 2>&1
rc=$?
check "pgoffd -n rejects an unknown key, naming file and line (exit 2)" \
	bash -c "[ $rc = 2 ] && grep -q \"bad.conf:3: unknown setting 'min-flor'\" '$E2E_DIR/n.out'" ||
	note "exit $rc: $(head -c 200 "$E2E_DIR/n.out" | tr "\n" " ")"
"$PGOFFD" -n -c "$conf" --group no_such_group_e2e >"$E2E_DIR/n.out" 2>&1
check "the command line wins over the file (a missing group: exit 2)" [ $? = 2 ]
"$PGOFFD" -n -c "$conf" --user nobody >"$E2E_DIR/n.out" 2>&1
rc=$?
check "pgoffd refuses to run as nobody (exit 2, saw $rc: $(cat "$E2E_DIR/n.out"))" \
	bash -c "[ $rc = 2 ] && grep -q 'must not be nobody' '$E2E_DIR/n.out'"
if ! id pgoffd >/dev/null 2>&1; then
	printf 'group = %s\n' "$E2E_GROUP" >"$E2E_DIR/nouser.conf"
	"$PGOFFD" -n -c "$E2E_DIR/nouser.conf" >"$E2E_DIR/n.out" 2>&1
	rc=$?
	check "without a pgoffd user: exit 2, no fallback to nobody, says how to create it (saw $rc)" \
		bash -c "[ $rc = 2 ] && grep -q 'user pgoffd does not exist; create it with .systemd-sysusers.' '$E2E_DIR/n.out'"
else
	note "this machine has a pgoffd user: the missing-user case is not tried"
fi

"$PGOFFD" -c "$conf" --socket "$SOCK" 2>"$E2E_DIR/pgoffd.log" &
E2E_BROKER_PID=$!
wait_for 15 answers

member watch --min 1ms --json >/dev/null 2>"$E2E_DIR/member.err" &
member_job=$!
querier watch --min 1ms --json >/dev/null 2>&1 &
querier_job=$!
watchers 2
floor() { "$PGOFFCTL" --socket "$SOCK" status --json | jq .kernel_min_duration_ns; }
check "before: the kernel threshold is the watchers' 1 ms" [ "$(floor)" = 1000000 ]

# only the query group may connect now, and nothing below 50 ms
# (and a restart-only setting, which is kept and named)
printf 'group = %s\nuser = %s\nmin-floor = 50ms\nrecord = no\nringbuf-size = 65536\n' "$E2E_QUERY_GROUP" "$E2E_BROKER_USER" >"$conf"
kill -HUP "$E2E_BROKER_PID"
wait "$member_job"
note "member: $(cat "$E2E_DIR/member.err")"
check "SIGHUP: a member no longer in the group is told and cut off" \
	grep -q "no longer in the access group" "$E2E_DIR/member.err"
check "SIGHUP: the new floor applies to the live subscription (50 ms)" [ "$(floor)" = 50000000 ]
member status >/dev/null 2>&1
check "SIGHUP: the member cannot connect any more (exit 3)" [ $? = 3 ]
check "SIGHUP: the query group's member still can" querier status --json >/dev/null
check "SIGHUP: the reload is logged" grep -q "configuration reloaded" "$E2E_DIR/pgoffd.log"
check "SIGHUP: a restart-only setting that differs is kept, and named" \
	grep -q "SIGHUP: ringbuf-size changes only with a restart; kept as it was" "$E2E_DIR/pgoffd.log" ||
	sed 's/^/# pgoffd: /' "$E2E_DIR/pgoffd.log" | grep SIGHUP

printf 'group = %s\nuser = %s\nmax-clients = lots\nrecord = no\n' "$E2E_GROUP" "$E2E_BROKER_USER" >"$conf"
kill -HUP "$E2E_BROKER_PID"
check "SIGHUP with a bad file: nothing changes, and the log says why" \
	wait_for 5 grep -q "not reloaded: .*invalid value 'lots' for max-clients" "$E2E_DIR/pgoffd.log" ||
	sed 's/^/# pgoffd: /' "$E2E_DIR/pgoffd.log" | tail -n 5
check "... the querier's watch is still served" kill -0 "$querier_job"
kill "$querier_job" 2>/dev/null; wait "$querier_job" 2>/dev/null || true
