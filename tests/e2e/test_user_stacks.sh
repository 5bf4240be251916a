#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# watch --user-stack: PostgreSQL's own call path on a row-lock wait, a
# commit's WAL flush and an uninstrumented read (pg_read_binary_file of a
# cold file), symbolized from the real PostgreSQL 15 binary's .dynsym;
# nobody asking: no user stack walked.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# commit_delay: XLogFlush sleeps before the flush (commit_siblings 0:
# always), so a commit is off the CPU inside XLogFlush on any disk, unless
# another process flushed its record first (the walwriter, another
# commit): XLogFlush then returns at once. Three commits, one is enough.
pg_start deadlock_timeout=10s commit_delay=100000 commit_siblings=0 ||
	{ not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
# no floor: a cold read's I/O waits on a VM whose disk the host caches
# can each be shorter than the default 100 us (CI's ASan run saw none)
e2e_start_broker --min-floor 0 || { not_ok "start pgoffd"; exit 1; }
ok "pgoffd starts and answers status"
show() { note "$1: $(jq -c '{wait, kernel_wait, mismatch, pg: .pg.wait_event, user_stack, user_stack_error}' "$2" 2>/dev/null || cat "$2")"; }

# --- a row-lock wait: B asks for the row A holds once the watch (on B's
# pid) is there, since a user stack is walked when an interval begins; A
# holds it 0.3 s after B queued
session_open a && session_open b || { not_ok "open psql sessions A and B"; exit 1; }
b_pid=${SESSION_PID[b]}
session_run a "begin;" "update t set v = 1 where id = 1;" ||
	{ not_ok "session A takes the row lock"; exit 1; }
member watch --view intervals --pid "$b_pid" --pg-wait Lock --min 100ms --user-stack \
	--json --count 1 --timeout 20s >"$E2E_DIR/lock.out" 2>&1 &
w_job=$!
watchers 1 10 || not_ok "the watch on B subscribed (gave up after 10 s)"
session_send b "update t set v = 2 where id = 1;"
session_run a "$(until_queued "$b_pid")" "select pg_sleep(0.3);" "commit;" ||
	not_ok "session A holds the lock until B waits for it, then commits"
wait "$w_job"
session_close a
session_close b
unwatch
show "row lock (backend $b_pid)" "$E2E_DIR/lock.out"
check "row-lock wait: user stack has ProcSleep and LockAcquireExtended, no error" \
	jqe '.pg.wait_event_type == "Lock" and (.user_stack | index("ProcSleep") != null and index("LockAcquireExtended") != null) and (has("user_stack_error") | not)' "$E2E_DIR/lock.out"
# epoll_wait keeps no frame: the walk alone goes from it to WaitLatch
check "row-lock wait: epoll_wait, then its caller WaitEventSetWait, then WaitLatch" \
	jqe '.user_stack[0:3] == ["epoll_wait", "WaitEventSetWait", "WaitLatch"]' "$E2E_DIR/lock.out"
check "row-lock wait: the kernel stack is there too" jqe '.stack | length > 0' "$E2E_DIR/lock.out"

# --- a commit's WAL flush (and pg_sleep before it). C first waits for an
# advisory lock H holds: a wait that began before the watch, let go 0.1 s
# after the watch is there.
session_open h && session_open c || { not_ok "open psql sessions H and C"; exit 1; }
c_pid=${SESSION_PID[c]}
session_run h "select pg_advisory_lock(1);" || { not_ok "session H takes an advisory lock"; exit 1; }
session_send c "select pg_advisory_lock(1);"
session_run h "$(until_queued "$c_pid")" || not_ok "C waits for H's advisory lock"
"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --pid "$c_pid" --min 50ms \
	--user-stack --json --timeout 60s >"$E2E_DIR/commit.all" 2>&1 &
w_job=$!
watchers 1 10 || not_ok "the watch on C subscribed (gave up after 10 s)"
session_run h "select pg_sleep(0.1);" "select pg_advisory_unlock(1);" ||
	not_ok "session H lets the advisory lock go"
session_run c "select pg_sleep(0.3);" "insert into t values (2, 0);" \
	"insert into t values (3, 0);" "insert into t values (4, 0);" ||
	not_ok "session C sleeps and commits"
session_close h
session_close c
commit_seen() { jqe -s 'any(.[]; .user_stack // [] | index("XLogFlush") != null)' "$E2E_DIR/commit.all" 2>/dev/null; }
sleep_seen() { jqe -s 'any(.[]; .pg.wait_event == "PgSleep" and .user_stack != null)' "$E2E_DIR/commit.all" 2>/dev/null; }
# the symbolized intervals reach the watch a little later (the line
# being written may be cut: 2>/dev/null)
wait_for 10 commit_seen && wait_for 10 sleep_seen
unwatch "$w_job"
jq -c 'select(.user_stack // [] | index("XLogFlush") != null)' "$E2E_DIR/commit.all" | head -n1 >"$E2E_DIR/commit.out"
jq -c 'select(.pg.wait_event == "PgSleep" and .user_stack != null)' "$E2E_DIR/commit.all" | head -n1 >"$E2E_DIR/sleep.out"
[ -s "$E2E_DIR/commit.out" ] || cp "$E2E_DIR/commit.all" "$E2E_DIR/commit.out"
show "commit (backend $c_pid)" "$E2E_DIR/commit.out"
note "intervals in XLogFlush, of 3 commits: $(jq -s 'map(select(.user_stack // [] | index("XLogFlush") != null)) | length' "$E2E_DIR/commit.all" 2>/dev/null)"
show "pg_sleep (backend $c_pid)" "$E2E_DIR/sleep.out"
# RecordTransactionCommit and CommitTransaction are static: not in .dynsym
check "commit: an interval whose user stack has XLogFlush under CommitTransactionCommand" \
	jqe '.user_stack | index("XLogFlush") < index("CommitTransactionCommand")' "$E2E_DIR/commit.out"
check "pg_sleep: Timeout/PgSleep, user stack has pg_sleep" \
	jqe '.user_stack | index("pg_sleep") != null' "$E2E_DIR/sleep.out"
# the advisory lock wait began before the watch: it says why it has none
check "an interval older than the subscription: user_stack null, and why" \
	jqe -s 'any(.[]; .user_stack == null and (.user_stack_error | test("began before")))' "$E2E_DIR/commit.all"

# --- flame --user-stack: wait event, kernel wait, PostgreSQL outermost
# first, then the kernel stack. F's 0.4 s sleep begins once flame is
# there; flame records 6 s from its subscription, time enough to receive it.
# An interval whose switch back onto a CPU no tracepoint reported (this
# VM's scheduler, now and then: test_runq) is closed later without its
# kernel stack (pgoffd's switch_in_unseen counts it): such a round is
# told and run again, up to three.
session_open f || { not_ok "open psql session F"; exit 1; }
f_pid=${SESSION_PID[f]}
flame_kernel_epoll() {
	grep -Eq '^Timeout:PgSleep;wait: sleep;(.*;)?PostgresMain;(.*;)?pg_sleep;(.*;)?WaitLatch;WaitEventSetWait;epoll_wait;(.*;)?do_epoll_wait' \
		"$E2E_DIR/flame.out"
}
for round in 1 2 3; do
	unseen=$(counter switch_in_unseen)
	member flame --folded --user-stack --pid "$f_pid" --min 100ms --duration 6s \
		>"$E2E_DIR/flame.out" 2>"$E2E_DIR/flame.err" &
	fl_job=$!
	watchers 1 10 || not_ok "flame on F subscribed (gave up after 10 s)"
	session_run f "select pg_sleep(0.4);" || not_ok "session F sleeps"
	wait "$fl_job"
	unwatch
	flame_kernel_epoll || [ "$(counter switch_in_unseen)" = "$unseen" ] || {
		note "round $round: an interval's switch-in went unseen ($unseen, then $(counter switch_in_unseen)); another round"
		continue
	}
	break
done
session_close f
grep -m1 PostgresMain "$E2E_DIR/flame.out" | sed 's/^/# flame: /'
check "flame --user-stack: PgSleep; wait: sleep; PostgresMain ... pg_sleep ... epoll_wait; then the kernel's epoll" \
	flame_kernel_epoll || note "flame said: $(head -c 300 "$E2E_DIR/flame.err")"

# --- pg_read_binary_file of a cold file: uninstrumented I/O
# (a file leaves the page cache only if a disk holds it: on tmpfs the
# read below would never wait for I/O; a failure in CI)
if ! on_block_device "$PGDATA_DIR"; then
	tap_skip "cold pg_read_binary_file" "$BLOCK_DEV_WHY"
else
	dd if=/dev/urandom of="$PGDATA_DIR/cold.bin" bs=1M count=16 status=none
	chown postgres "$PGDATA_DIR/cold.bin"
	sync "$PGDATA_DIR/cold.bin"
	# out of the page cache: fadvise (dd iflag=nocache) once left the read
	# below nothing to wait for, so it is asked again until mincore says
	# no page is left (pages still being written back stay)
	cached_pages() {
		/usr/bin/python3 - "$PGDATA_DIR/cold.bin" <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
pages = (size + os.sysconf("SC_PAGE_SIZE") - 1) // os.sysconf("SC_PAGE_SIZE")
addr = libc.mmap(None, size, 1, 1, fd, 0)	# PROT_READ, MAP_SHARED: nothing read in
vec = (ctypes.c_ubyte * pages)()
if libc.mincore(ctypes.c_void_p(addr), ctypes.c_size_t(size), vec):
    sys.exit("mincore: " + os.strerror(ctypes.get_errno()))
print(sum(b & 1 for b in vec))
PY
	}
	uncached() {
		dd if="$PGDATA_DIR/cold.bin" iflag=nocache count=0 status=none
		[ "$(cached_pages)" = 0 ]
	}
	wait_for 5 uncached || note "cold.bin keeps $(cached_pages) pages in the page cache"
	"${AS_MEMBER[@]}" "$PGOFFCTL" --socket "$SOCK" watch --view intervals --type io --db postgres \
		--min 1us --user-stack --json --timeout 60s >"$E2E_DIR/read.all" 2>&1 &
	r_job=$!
	watchers 1 10 || not_ok "the io watch subscribed (gave up after 10 s)"
	sql -c "select length(pg_read_binary_file('cold.bin'))" >/dev/null
	note "cold.bin: $(cached_pages) pages in the page cache after the read"
	# the SQL function's C entry is pg_read_binary_file or, in 15,
	# pg_read_binary_file_all (a jump to it): a cold code page of it faults
	# (uninstrumented I/O too) before the file's read does
	in_read() { echo 'any(.user_stack // [] | .[]; test("^pg_read_binary_file"))'; }
	# the symbolized intervals reach the watch a little later
	read_seen() { jqe -s "any(.[]; .mismatch != null and $(in_read))" "$E2E_DIR/read.all" 2>/dev/null; }
	wait_for 10 read_seen
	unwatch "$r_job"
	jq -c "select(.mismatch != null and $(in_read))" \
		"$E2E_DIR/read.all" | head -n1 >"$E2E_DIR/read.out"
	[ -s "$E2E_DIR/read.out" ] || {
		jq -c . "$E2E_DIR/read.all" | head -n1 >"$E2E_DIR/read.out"
		note "no such interval among $(wc -l <"$E2E_DIR/read.all") lines; their user stacks:"
		jq -c '[.mismatch != null, .user_stack]' "$E2E_DIR/read.all" | head -n 20 | sed 's/^/#   /'
	}
	show "pg_read_binary_file" "$E2E_DIR/read.out"
	check "cold pg_read_binary_file: flagged mismatch, user stack has pg_read_binary_file(_all)" \
		jqe '.kernel_wait == "io" and (.mismatch | test("uninstrumented")) and '"$(in_read)" \
		"$E2E_DIR/read.out"
fi

# --- nobody asking walks nothing; a bad combination is refused
member watch --user-stack --view waits --count 1 >/dev/null 2>"$E2E_DIR/bad.err"
rc=$?
refused_why() { [ "$rc" = 2 ] && grep -q 'user_stack is on intervals' "$E2E_DIR/bad.err"; }
check "--user-stack --view waits: exit 2, told why" refused_why ||
	note "exit $rc; said: $(head -c 300 "$E2E_DIR/bad.err")"
check "status has user_stack_failed (0)" [ "$(counter user_stack_failed)" = 0 ]
# postgres and libc, named above: cached, nothing over a cap, evicted,
# or put off past the owner's load budget
check "status has user_symbols_evicted, _refused and _deferred (0, 0, 0)" \
	[ "$(counter user_symbols_evicted) $(counter user_symbols_refused) $(counter user_symbols_deferred)" = "0 0 0" ]
member watch --view intervals --min 10ms --json --timeout 2s >"$E2E_DIR/plain.out" 2>&1 &
p_job=$!
watchers 1
sql -c "select pg_sleep(0.3)" >/dev/null
wait "$p_job"
check "without --user-stack: events, none with a user stack" \
	jqe -s 'length > 0 and all(.[]; has("user_stack") | not)' "$E2E_DIR/plain.out"
jqe -s 'length > 0 and all(.[]; has("user_stack") | not)' "$E2E_DIR/plain.out" ||
	note "saw: $(head -c 600 "$E2E_DIR/plain.out")"
