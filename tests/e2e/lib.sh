# SPDX-License-Identifier: GPL-2.0-only
# Shared by the end-to-end tests and the demo: a real PostgreSQL 15 cluster
# in a temp dir, pgoff installed into a world-readable prefix, a real
# pgoffd, and two real users: one in the access group, one outside it.
#
# Output: TAP-style lines and the no-skip policy of tests/tap.sh.

set -u
E2E_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$E2E_TOP/tests/tap.sh"
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
E2E_GROUP=pgoffe2e
E2E_MEMBER=pgoffe2e_in
E2E_OUTSIDER=pgoffe2e_out
E2E_QUERY_GROUP=pgoffe2eq	# may see SQL (pgoffd --query-group)
E2E_QUERIER=pgoffe2e_q		# in both groups
E2E_BROKER_USER=pgoffe2e_d	# pgoffd's --user: a system user of its own
E2E_BROKER_PID=

# PGOFF_BUILD/PGOFF_SANITIZE: test another build (make asan); its lines
# are labelled so that the two runs are told apart
PGOFF_BUILD=${PGOFF_BUILD:-build}

# Prerequisites: root, BTF, BPF, PostgreSQL 15. Outside CI a missing one
# skips the file with a reason; in CI it fails.
e2e_require() {
	local why=
	[ "$(id -u)" = 0 ] || why="not root"
	[ -r /sys/kernel/btf/vmlinux ] || why="${why:+$why, }no kernel BTF"
	[ -x "$PGBIN/postgres" ] || why="${why:+$why, }no PostgreSQL 15 in $PGBIN"
	id postgres >/dev/null 2>&1 || why="${why:+$why, }no postgres user"
	[ -x "$E2E_TOP/$PGOFF_BUILD/pgoffd" ] || why="${why:+$why, }pgoffd not built in $PGOFF_BUILD"
	[ -z "$why" ] || tap_skip_file "e2e prerequisites" "$why"
}

e2e_setup() {
	E2E_DIR=$(mktemp -d /tmp/pgoff-e2e.XXXXXX)
	chmod 0755 "$E2E_DIR"
	trap e2e_cleanup EXIT
	# bash runs no EXIT trap when a signal ends it: a test that
	# tests/run.sh stops at its limit (SIGTERM) left its cluster, pgoffd
	# and load behind, on a machine other tests share
	trap 'exit 143' INT TERM HUP
	# a world-readable install: a 0700 home would hide the binaries
	make -s -C "$E2E_TOP" install PREFIX="$E2E_DIR/prefix" BUILD="$PGOFF_BUILD" \
		SANITIZE="${PGOFF_SANITIZE:-}" >/dev/null
	PGOFFD=$E2E_DIR/prefix/sbin/pgoffd
	PGOFFCTL=$E2E_DIR/prefix/bin/pgoffctl
	getent group "$E2E_GROUP" >/dev/null || groupadd --system "$E2E_GROUP"
	id "$E2E_MEMBER" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /bin/sh -G "$E2E_GROUP" "$E2E_MEMBER"
	id "$E2E_OUTSIDER" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /bin/sh "$E2E_OUTSIDER"
	getent group "$E2E_QUERY_GROUP" >/dev/null || groupadd --system "$E2E_QUERY_GROUP"
	id "$E2E_QUERIER" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /bin/sh \
			-G "$E2E_GROUP,$E2E_QUERY_GROUP" "$E2E_QUERIER"
	# pgoffd refuses nobody (other processes share its uid) and this
	# machine need not have a pgoffd user
	id "$E2E_BROKER_USER" >/dev/null 2>&1 ||
		useradd --system --no-create-home --shell /usr/sbin/nologin "$E2E_BROKER_USER"
	SOCK=$E2E_DIR/run/pgoffd.sock
	# for jobs whose $! must be pgoffctl itself (a function call would fork)
	AS_MEMBER=(setpriv --reuid="$E2E_MEMBER" --regid="$(id -g "$E2E_MEMBER")" --init-groups --)
}

e2e_cleanup() {
	# a broker that died: its log (sanitizer reports) before it is gone
	if [ -n "${E2E_BROKER_PID:-}" ] && ! kill -0 "$E2E_BROKER_PID" 2>/dev/null &&
	   [ -s "$E2E_DIR/pgoffd.log" ]; then
		echo "# pgoffd died; its log:"; sed "s/^/#   /" "$E2E_DIR/pgoffd.log" | tail -40
	elif [ "$TAP_FAILED" = 1 ] && [ -n "${E2E_BROKER_PID:-}" ]; then
		e2e_broker_state
	fi
	e2e_stop_broker TERM
	if [ -n "${PGDATA_DIR:-}" ] && [ -f "$PGDATA_DIR/postmaster.pid" ]; then
		su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' -m immediate stop" >/dev/null 2>&1
	fi
	# a blkio cgroup a test made: empty once the cluster is gone
	[ -n "${E2E_CGROUP:-}" ] && rmdir "$E2E_CGROUP" 2>/dev/null
	pkill -KILL -u "$E2E_MEMBER" 2>/dev/null
	pkill -KILL -u "$E2E_OUTSIDER" 2>/dev/null
	pkill -KILL -u "$E2E_QUERIER" 2>/dev/null
	pkill -KILL -u "$E2E_BROKER_USER" 2>/dev/null	# a broker left behind
	[ -n "${E2E_DIR:-}" ] && rm -rf "$E2E_DIR"
	userdel "$E2E_MEMBER" 2>/dev/null
	userdel "$E2E_OUTSIDER" 2>/dev/null
	userdel "$E2E_QUERIER" 2>/dev/null
	userdel "$E2E_BROKER_USER" 2>/dev/null
	groupdel "$E2E_GROUP" 2>/dev/null
	groupdel "$E2E_QUERY_GROUP" 2>/dev/null
	return 0
}

# After a failed check, what the test's pgoffd saw: its counters (what it
# lost and why), its clusters and the end of its log. A failure that
# does not come back when run again is then told by what was there.
e2e_broker_state() {
	# the log first: the status and ps asked here add lines to it
	local log
	log=$(grep -v 'client uid 0 pid [0-9]*: \(connected\|disconnected\)' \
		"$E2E_DIR/pgoffd.log" | tail -n 30)
	echo "# a check failed; pgoffd's state (counters that are not 0):"
	"$PGOFFCTL" --socket "$SOCK" status --json 2>&1 |
		jq -c 'del(.clusters_unnamed, .usdt_binaries) |
			.counters |= with_entries(select(.value != 0))' 2>&1 |
		head -c 3000 | sed 's/^/#   /'
	"$PGOFFCTL" --socket "$SOCK" ps --json 2>&1 |
		jq -c '(.clusters[] | {id, data_dir, postmaster_pid, why}),
			{processes: (.processes | length)}' 2>&1 |
		head -c 2000 | sed 's/^/#   /'
	echo "# ... and the end of its log (less the test's own status and ps):"
	sed 's/^/#   /' <<<"$log"
}

# pg_initdb DIR: a new cluster's files in DIR. Under tests/run.sh (which
# sets E2E_PG_TEMPLATES, a directory of this run's), initdb runs once and
# each test copies its files: 0.15 s, not 1 s, some 60 times a run.
pg_initdb() {
	local t=${E2E_PG_TEMPLATES:-}/data
	[ -e "$1" ] && { echo "pg_initdb: $1 exists"; return 1; }
	if [ -n "${E2E_PG_TEMPLATES:-}" ] && [ ! -d "$t" ]; then
		# (what a test killed in the middle of it left, made again)
		rm -rf "$t.new" && mkdir -p "$t.new" && chown postgres "$t.new" &&
			su postgres -s /bin/sh -c "$PGBIN/initdb -D '$t.new/data' -A trust -U postgres" \
				>"$E2E_DIR/initdb.log" 2>&1 && mv "$t.new/data" "$t" ||
			{ cat "$E2E_DIR/initdb.log"; return 1; }
	fi
	if [ -n "${E2E_PG_TEMPLATES:-}" ]; then
		cp -a "$t" "$1"
	else
		su postgres -s /bin/sh -c "$PGBIN/initdb -D '$1' -A trust -U postgres" \
			>"$E2E_DIR/initdb.log" 2>&1 || { cat "$E2E_DIR/initdb.log"; return 1; }
	fi
}

# pg_start [extra postgres -c options...]: a throwaway cluster, PGPORT set;
# PGCTL_POSTGRES="-p PATH" starts another postgres binary
pg_start() {
	local opts="-c listen_addresses= -k $E2E_DIR/pg"
	for o in "$@"; do opts="$opts -c $o"; done
	PGDATA_DIR=$E2E_DIR/pg/data
	PGPORT=$((20000 + RANDOM % 20000))
	mkdir -p "$E2E_DIR/pg" && chown postgres "$E2E_DIR/pg"
	pg_initdb "$PGDATA_DIR" || return 1
	su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D '$PGDATA_DIR' ${PGCTL_POSTGRES:-} -w -l '$E2E_DIR/pg/log' -o '-p $PGPORT $opts' start" \
		>/dev/null 2>&1 || { cat "$E2E_DIR/pg/log"; return 1; }
	export PGHOST=$E2E_DIR/pg PGPORT PGUSER=postgres PGDATABASE=postgres
}

sql() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# pgoff beside pg_wait_sampling (test_wait_sampling, make bench), each
# summed by wait event over the processes PIDS (comma-separated):
# sampler_on_time: pg_wait_sampling's collector at real-time priority, so
# that a busy machine does not delay its samples to when the CPUs free up
# (which is when backends have just gone to wait). Sets COLLECTOR (its
# pid).
sampler_on_time() {
	COLLECTOR=$(sql -c "select pid from pg_stat_activity
		where backend_type = 'pg_wait_sampling collector'")
	[ -n "$COLLECTOR" ] && chrt -f -p 10 "$COLLECTOR"
}
# sampled_sums PIDS: the profile's samples x its period, "Type:Event s"
sampled_sums() {
	sql -F' ' -c "select event_type || ':' || event,
		round(sum(count) * current_setting('pg_wait_sampling.profile_period')::int / 1000.0, 3)
		from pg_wait_sampling_profile where pid in ($1) and event is not null
		group by 1"
}
# episode_sums FILE PIDS: the episodes in FILE (watch --view waits
# --json), "Type:Event seconds seconds-on-a-CPU-inside episodes"
episode_sums() {
	jq -r --arg p "$2" '($p | split(",") | map(tonumber)) as $ps |
		select(.type == "episode" and (.pid as $x | $ps | index($x))) |
		"\(.pg.wait_event_type):\(.pg.wait_event) \(.duration_ns) \(.on_cpu_ns)"' "$1" |
		awk '{ t[$1] += $2; c[$1] += $3; n[$1]++ }
		     END { for (k in t) printf "%s %.3f %.3f %d\n", k, t[k] / 1e9, c[k] / 1e9, n[k] }'
}
# sum_of FILE EVENT: the seconds of EVENT in a file of those sums (0)
sum_of() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$1"; }

# start_broker [pgoffd options...]: wait until it answers status
e2e_start_broker() {
	# the sanitizer build: a small quarantine keeps its RSS meaningful
	[ -n "${PGOFF_SANITIZE:-}" ] && export ASAN_OPTIONS=quarantine_size_mb=16
	# a state directory of its own: no test reads another's record
	"$PGOFFD" --socket "$SOCK" --group "$E2E_GROUP" --user "$E2E_BROKER_USER" \
		--state-directory "$E2E_DIR/state" "$@" \
		2>"$E2E_DIR/pgoffd.log" &
	E2E_BROKER_PID=$!
	wait_for 15 broker_answers_or_died
	# it answers, or it died: which one
	"$PGOFFCTL" --socket "$SOCK" status >/dev/null 2>&1 && return 0
	echo "# pgoffd did not come up:"; sed 's/^/#   /' "$E2E_DIR/pgoffd.log"
	return 1
}
broker_answers_or_died() {
	"$PGOFFCTL" --socket "$SOCK" status >/dev/null 2>&1 || gone "$E2E_BROKER_PID"
}
# counter NAME: one of the test's pgoffd's status counters, now
counter() { "$PGOFFCTL" --socket "$SOCK" status --json | jq ".counters.$1"; }
# status_field NAME: a top-level field of the broker's status
status_field() { "$PGOFFCTL" --socket "$SOCK" status --json | jq ".$1"; }
# answers: the broker on $SOCK answers status (a broker a test started itself)
answers() { "$PGOFFCTL" --socket "$SOCK" status >/dev/null 2>&1; }

# e2e_stop_broker SIGNAL: stop it and wait; its exit status in E2E_BROKER_RC
e2e_stop_broker() {
	E2E_BROKER_RC=
	[ -n "$E2E_BROKER_PID" ] || return 0
	kill "-$1" "$E2E_BROKER_PID" 2>/dev/null
	wait "$E2E_BROKER_PID"
	E2E_BROKER_RC=$?
	E2E_BROKER_PID=
}

# as USER COMMAND...: run as one of the test users. setpriv execs the
# command itself (runuser would stay as its parent). Called in a subshell
# (a job: "member watch ... &", a pipeline, $(...)) it replaces that
# subshell, so that $! is pgoffctl and a kill reaches it: a function call
# forks, and killing the fork left pgoffctl subscribed. So it must be the
# last command of any subshell it is called in.
as() {
	local u=$1; shift
	if [ "$BASHPID" != "$$" ]; then
		exec setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
	fi
	setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups -- "$@"
}

# backend_sleep SECONDS [psql options]: a backend that prints its pid and
# then sleeps; sets SLEEPER_PID (the backend) and SLEEPER_JOB (psql). A
# watch for its sleep must subscribe within SECONDS: on the loaded ASan
# run, give it more than a second.
backend_sleep() {
	local secs=$1; shift
	local out
	out=$(mktemp "$E2E_DIR/sleeper.XXXXXX")
	psql -X -q -At "$@" -c "select pg_backend_pid()" -c "select pg_sleep($secs)" >"$out" &
	SLEEPER_JOB=$!
	# psql may take seconds to connect on a loaded machine (the ASan run)
	WAIT_STEP=0.01 wait_for 10 [ -s "$out" ]
	SLEEPER_PID=$(head -n1 "$out")
}

# on_block_device PATH: PATH's file system sits on a block device (a cold
# read from it reaches a disk; on tmpfs, overlay and the like it never
# does, and dropping the page cache or fadvise(DONTNEED) empties
# nothing), its MAJ:MIN (the whole disk's) in BLOCK_DEV; else false, and
# BLOCK_DEV_WHY says why
on_block_device() {
	local majmin
	# (the last of mounts stacked on one mount point is the one seen)
	majmin=$(findmnt -no MAJ:MIN -T "$1" | tail -n1 | tr -d ' ')
	BLOCK_DEV= BLOCK_DEV_WHY=
	if [ -z "$majmin" ] || [ ! -e "/sys/dev/block/$majmin" ]; then
		BLOCK_DEV_WHY="$1 is on $(findmnt -no FSTYPE,SOURCE -T "$1" | tail -n1 | tr -s ' '), not on a block device"
		return 1
	fi
	[ -e "/sys/dev/block/$majmin/partition" ] && majmin=$(cat "/sys/dev/block/$majmin/../dev")
	BLOCK_DEV=$majmin
}

# io_cgroup MAJ:MIN READ_IOPS: a cgroup (its path in E2E_CGROUP, which
# e2e_cleanup removes) whose reads from that disk are throttled to
# READ_IOPS a second: cgroup v1's blkio, or io.max where the host has
# cgroup v2 only (Debian 12 and later by default); else false, and
# E2E_CGROUP_WHY says why. A process is moved there by writing its pid
# to $E2E_CGROUP/cgroup.procs.
io_cgroup() {
	E2E_CGROUP= E2E_CGROUP_WHY=
	if [ -d /sys/fs/cgroup/blkio ]; then
		E2E_CGROUP=/sys/fs/cgroup/blkio/pgoff-e2e-$$
		mkdir "$E2E_CGROUP" && echo "$1 $2" >"$E2E_CGROUP/blkio.throttle.read_iops_device" &&
			return 0
		E2E_CGROUP_WHY="cgroup v1: cannot throttle reads of $1 in $E2E_CGROUP"
	elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
		# the io controller is the parent's to hand down (systemd does)
		if ! grep -qw io /sys/fs/cgroup/cgroup.subtree_control; then
			E2E_CGROUP_WHY="cgroup v2: the io controller is not enabled for /sys/fs/cgroup's children (cgroup.subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control))"
			return 1
		fi
		E2E_CGROUP=/sys/fs/cgroup/pgoff-e2e-$$
		mkdir "$E2E_CGROUP" && echo "$1 riops=$2" >"$E2E_CGROUP/io.max" && return 0
		E2E_CGROUP_WHY="cgroup v2: cannot throttle reads of $1 with $E2E_CGROUP/io.max"
	else
		E2E_CGROUP_WHY="neither cgroup v1's blkio nor cgroup v2 is mounted at /sys/fs/cgroup"
	fi
	return 1
}

# rt_spinner CPU [PRIO]: a SCHED_FIFO task (priority PRIO, 1 by default)
# on CPU that spins 1 ms and sleeps 0.3 ms until killed (its pid in
# RT_SPINNER: kill it in the test's trap). A normal task's wakeup never preempts an RT task, and an RT
# task's wakeup preempts a normal one at once: a normal task pinned to
# CPU that wakes while it spins waits in the run queue until the spin
# ends, and one running there is preempted for 1 ms every 1.3 ms. So
# the wait is certain whatever nice, autogroups (a backend started by
# pg_ctl has an autogroup of its own) or EEVDF's wakeup preemption do;
# CPU hogs make it likely only. 77 % of the CPU stays under RT
# throttling (95 %): the rest is the normal tasks'.
rt_spinner() {
	chrt -f "${2:-1}" taskset -c "$1" /usr/bin/python3 -c '
import time
while True:
    end = time.perf_counter() + 0.001
    while time.perf_counter() < end:
        pass
    time.sleep(0.0003)' &
	RT_SPINNER=$!
}

# our_progs: pgoff programs loaded in the kernel (names cut at 15 chars)
our_progs() {
	bpftool prog show 2>/dev/null |
		grep -cE 'name (sched_switch_|sched_waking_|sched_fork_|sched_exit_|sched_exec_|on_cpu_tick)'
}

# progs_settle N: the kernel frees programs after their last fd closes,
# a little later; wait up to 3 s for the count to come back to N
progs_settle() {
	wait_for 3 progs_are "$1"
}
progs_are() { [ "$(our_progs)" = "$1" ]; }

# psa_wait_for WHERE: pid|wait_event_type|wait_event of the first backend
# pg_stat_activity shows matching WHERE, polled for up to 5 s (empty if
# none): a psql that connects on a loaded machine (ASan) may take seconds
psa_wait_for() {
	SQL_ROWS=
	WAIT_STEP=0.02 wait_for 5 has_rows \
		"select pid, wait_event_type, wait_event from pg_stat_activity where $1 limit 1"
	echo "$SQL_ROWS"
}
# sleep_load N: 4 backends sleeping 1.2 ms N times, many short intervals
# of Timeout:PgSleep to record; sleep_load_wait waits for them (a bare
# wait would wait for pgoffd too)
sleep_load() {
	SLEEP_LOAD_JOBS=()
	for _ in $(seq 4); do
		sql -c "select pg_sleep(0.0012) from generate_series(1, $1)" >/dev/null &
		SLEEP_LOAD_JOBS+=($!)
	done
}
sleep_load_wait() { wait "${SLEEP_LOAD_JOBS[@]}"; }

# until_lock_waiter: SQL for a lock holder that returns once some backend
# waits for a heavyweight lock (pg_stat_activity), polled for up to 10 s
# (on a loaded machine the waiter's psql may start late): a hold after it
# is a wait at least that long
until_lock_waiter() {
	cat <<'SQL'
do $$ begin
	for i in 1..1000 loop
		perform pg_stat_clear_snapshot();
		exit when exists (select 1 from pg_stat_activity where wait_event_type = 'Lock');
		perform pg_sleep(0.01);
	end loop;
end $$;
SQL
}

# row_lock_wait SQL: B runs SQL, which must wait for the row lock of
# t's row id = 1, held by A until B waits for it, then 0.3 s more; B_PID
# is B's backend
row_lock_wait() {
	local a_job b_job
	{
		echo "begin;"
		echo "update t set id = id where id = 1;"
		echo "select pg_backend_pid();	-- printed once the row is A's"
		until_lock_waiter
		echo "select pg_sleep(0.3);"
		echo "commit;"
	} >"$E2E_DIR/a.sql"
	rm -f "$E2E_DIR/a.out"
	sql -f "$E2E_DIR/a.sql" >"$E2E_DIR/a.out" &
	a_job=$!
	wait_for 10 [ -s "$E2E_DIR/a.out" ] || note "A's psql printed nothing in 10 s"
	sql -c "$1" >/dev/null &
	b_job=$!
	IFS='|' read -r B_PID _ _ <<<"$(psa_wait_for "wait_event_type = 'Lock'")"
	wait "$a_job" "$b_job"
}

# has_rows QUERY: the query returns something (kept in SQL_ROWS)
has_rows() { SQL_ROWS=$(sql -c "$1"); [ -n "$SQL_ROWS" ]; }

# pgoffctl as a plain member of the group
member() { as "$E2E_MEMBER" "$PGOFFCTL" --socket "$SOCK" "$@"; }
# pgoffctl as a member of both groups (may see SQL)
querier() { as "$E2E_QUERIER" "$PGOFFCTL" --socket "$SOCK" "$@"; }
# jq as a test: true when the expression holds, nothing printed. Empty
# input is false: jq 1.6's -e exits 0 when there is nothing to test.
jqe() {
	local out
	out=$(jq -e "$@") && [ -n "$out" ]
}
# watchers N [SECONDS]: wait (5 s by default) until N clients have
# subscribed. Connected is not enough: what happens before the subscribe
# request is read would not be seen.
watchers() { wait_for "${2:-5}" subscribers_at_least "$1"; }
subscribers_at_least() {
	[ "$("$PGOFFCTL" --socket "$SOCK" status --json | jq .subscribers)" -ge "$1" ]
}

# float comparison: between VALUE LOW HIGH
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

# --- Sessions held open, for a wait that begins and ends when the test
# says so (after a watch subscribed) instead of after a fixed pause that
# a new psql's connect or a sanitizer build's start may outlast.
# session_open NAME: a psql session that stays open, its output in
# $E2E_DIR/NAME.out and its stderr in NAME.err, its backend's pid in
# SESSION_PID[NAME] (it may take seconds to connect on a loaded machine).
# session_send NAME SQL...: NAME runs SQL while the test goes on.
# session_run NAME SQL...: the same, and waits (up to 30 s) until NAME
# has run it; fails, saying what psql said, on an error or a timeout.
# session_close NAME: NAME quits; wait for it.
# until_queued PID: SQL for a lock holder that returns once backend PID
# waits for a lock (pg_locks: not granted), polled for up to 10 s, or
# raises an error: a hold after it is a wait at least that long.
# unwatch [JOB...]: stop these pgoffctl jobs (started as
# "${AS_MEMBER[@]}" "$PGOFFCTL" ... &, so that $! is pgoffctl) or wait for
# those that ended, then until pgoffd counts no subscriber (it learns of a
# client's exit a little later), so that the next "watchers N" counts
# only new ones.
declare -A SESSION_FD=() SESSION_JOB=() SESSION_PID=()
SESSION_SEQ=0
session_open() {
	local name=$1 fd
	rm -f "$E2E_DIR/$name.fifo" && mkfifo "$E2E_DIR/$name.fifo" || return 1
	: >"$E2E_DIR/$name.out"; : >"$E2E_DIR/$name.err"
	psql -X -q -At <"$E2E_DIR/$name.fifo" >>"$E2E_DIR/$name.out" 2>>"$E2E_DIR/$name.err" &
	SESSION_JOB[$name]=$!
	exec {fd}>"$E2E_DIR/$name.fifo"
	SESSION_FD[$name]=$fd
	session_run "$name" "select pg_backend_pid();" || return 1
	SESSION_PID[$name]=$(head -n1 "$E2E_DIR/$name.out")
}
session_send() {
	local name=$1; shift
	# (a subshell: a psql gone meanwhile is its SIGPIPE, not the test's)
	if gone "${SESSION_JOB[$name]}" ||
	   ! (printf '%s\n' "$@" >&"${SESSION_FD[$name]}") 2>/dev/null; then
		echo "# session $name: psql has quit: $(head -c 300 "$E2E_DIR/$name.err")" >&2
		return 1
	fi
}
session_run() {
	local name=$1; shift
	local mark="session $name: step $((++SESSION_SEQ)) done" errs
	errs=$(stat -c %s "$E2E_DIR/$name.err")
	session_send "$name" "$@" "select '$mark';" || return 1
	WAIT_STEP=0.01 wait_for 30 session_done_or_gone "$name" "$mark"
	if ! grep -qxF "$mark" "$E2E_DIR/$name.out"; then
		echo "# session $name did not finish: $(head -c 300 "$E2E_DIR/$name.err")" >&2
		return 1
	fi
	if [ "$(stat -c %s "$E2E_DIR/$name.err")" != "$errs" ]; then
		echo "# session $name: $(tail -c +$((errs + 1)) "$E2E_DIR/$name.err" | head -c 600)" >&2
		return 1
	fi
}
session_done_or_gone() {
	grep -qxF "$2" "$E2E_DIR/$1.out" || gone "${SESSION_JOB[$1]}"
}
session_close() {
	local fd=${SESSION_FD[$1]}
	session_send "$1" '\q'
	exec {fd}>&-
	wait "${SESSION_JOB[$1]}"
}
until_queued() {
	cat <<SQL
do \$\$ begin
	for i in 1..1000 loop
		if exists (select 1 from pg_locks where pid = $1 and not granted) then return; end if;
		perform pg_sleep(0.01);
	end loop;
	raise exception 'backend $1 did not wait for a lock within 10 s';
end \$\$;
SQL
}
unwatch() {
	# (a bare wait would wait for every job: the sessions too)
	if [ $# -gt 0 ]; then kill "$@" 2>/dev/null; wait "$@" 2>/dev/null; fi
	wait_for 5 no_subscribers
}
no_subscribers() { [ "$("$PGOFFCTL" --socket "$SOCK" status --json | jq .subscribers)" = 0 ]; }
