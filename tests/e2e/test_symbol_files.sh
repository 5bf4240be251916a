#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A cluster owner runs their postmaster in a mount namespace of their
# own, with libraries whose paths lead, in pgoffd's namespace, into a
# FUSE mount that never answers (a symlink) and to a FIFO. The library
# behind the FUSE path is every wait's innermost frame (an LD_PRELOAD
# shim of epoll_wait that makes the system call itself). While a member
# watches those stacks, pgoffd's status answers within 100 ms, the
# shim's frames are named module+0xoffset, the refusals are counted and
# logged, and SIGTERM ends pgoffd at once: pgoffd's loop never opens or
# reads a path the owner chose (the prober's worker does, within its
# deadline).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

owner=$E2E_DIR/owner
mnt=$E2E_DIR/mnt
FUSE_PID=
stall_cleanup() {
	# the mount's requests fail once its server is gone; then unmount,
	# before anything walks the directory
	[ -n "$FUSE_PID" ] && kill "$FUSE_PID" 2>/dev/null && wait "$FUSE_PID" 2>/dev/null
	umount -l "$mnt" 2>/dev/null	# (mountpoint(1) would stat it)
	e2e_cleanup
}
trap stall_cleanup EXIT

command -v cc >/dev/null || { not_ok "a C compiler for the shim"; exit 1; }
mkdir -p "$E2E_DIR/libs" "$mnt"
cat >"$E2E_DIR/shim.c" <<'C'
#include <errno.h>
#include <sys/epoll.h>
/* the system call made here: this file is every wait's innermost frame */
__attribute__((noinline)) int pgoff_shim_wait(int fd, struct epoll_event *ev,
					      int n, int timeout)
{
	long r;
#if defined(__x86_64__)
	register long r10 __asm__("r10") = timeout;

	__asm__ volatile("syscall" : "=a"(r) : "0"(232L), "D"((long)fd),
			 "S"(ev), "d"((long)n), "r"(r10) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long x0 __asm__("x0") = fd, x1 __asm__("x1") = (long)ev;
	register long x2 __asm__("x2") = n, x3 __asm__("x3") = timeout;
	register long x4 __asm__("x4") = 0, x5 __asm__("x5") = 8;
	register long x8 __asm__("x8") = 22;	/* epoll_pwait */

	__asm__ volatile("svc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3),
			 "r"(x4), "r"(x5), "r"(x8) : "memory");
	r = x0;
#endif
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return (int)r;
}
int epoll_wait(int fd, struct epoll_event *ev, int n, int timeout)
{
	return pgoff_shim_wait(fd, ev, n, timeout);
}
C
echo 'int pgoff_shim_b(void) { return 0; }' >"$E2E_DIR/shim_b.c"
cc -O1 -fPIC -shared -o "$E2E_DIR/libs/libpgoffa.so" "$E2E_DIR/shim.c" &&
	cc -O0 -fPIC -shared -o "$E2E_DIR/libs/libpgoffb.so" "$E2E_DIR/shim_b.c" ||
	{ not_ok "build the shims"; exit 1; }
chmod -R a+rX "$E2E_DIR/libs"

# in pgoffd's namespace: a's directory is a symlink into a FUSE mount
# that never answers, b's library a FIFO
/usr/bin/python3 "$E2E_TOP/tests/e2e/fuse_stall.py" "$mnt" >"$E2E_DIR/fuse.out" 2>&1 &
FUSE_PID=$!
fuse_up() { grep -q mounted "$E2E_DIR/fuse.out"; }
wait_for 10 fuse_up || { not_ok "mount the FUSE file system that never answers: $(cat "$E2E_DIR/fuse.out")"; exit 1; }
mkdir -p "$owner/b" && ln -s "$mnt" "$owner/a" && mkfifo "$owner/b/libpgoffb.so" &&
	chown -R -h postgres "$owner" || { not_ok "make the owner's paths"; exit 1; }
# the path waits: shown with a timeout that kills its reader
timeout -s KILL 2 cat "$owner/a/libpgoffa.so" >/dev/null 2>&1
check "reading the shim's path in pgoffd's namespace blocks (killed after 2 s: rc 137)" [ $? = 137 ]

# the cluster, in a mount namespace where the owner's directory holds
# both shims, its postmaster mapping them from there
PGDATA_DIR=$E2E_DIR/pg/data
PGPORT=$((20000 + RANDOM % 20000))
mkdir -p "$E2E_DIR/pg" && chown postgres "$E2E_DIR/pg"
su postgres -s /bin/sh -c "$PGBIN/initdb -D '$PGDATA_DIR' -A trust -U postgres" \
	>"$E2E_DIR/initdb.log" 2>&1 || { cat "$E2E_DIR/initdb.log"; not_ok "initdb"; exit 1; }
unshare -m --propagation private sh -c "mount -t tmpfs -o mode=0755 owner '$owner' &&
	mkdir '$owner/a' '$owner/b' && cp '$E2E_DIR/libs/libpgoffa.so' '$owner/a/' &&
	cp '$E2E_DIR/libs/libpgoffb.so' '$owner/b/' &&
	su postgres -s /bin/sh -c \"LD_PRELOAD='$owner/a/libpgoffa.so $owner/b/libpgoffb.so' \
	$PGBIN/pg_ctl -D '$PGDATA_DIR' -w -l '$E2E_DIR/pg/log' \
	-o '-p $PGPORT -c listen_addresses= -k $E2E_DIR/pg' start\"" >"$E2E_DIR/start.log" 2>&1 ||
	{ cat "$E2E_DIR/start.log" "$E2E_DIR/pg/log"; not_ok "start PostgreSQL 15 with the shims"; exit 1; }
export PGHOST=$E2E_DIR/pg PGPORT PGUSER=postgres PGDATABASE=postgres
pm=$(head -n1 "$PGDATA_DIR/postmaster.pid")
maps_both() { grep -q libpgoffa.so "/proc/$pm/maps" && grep -q libpgoffb.so "/proc/$pm/maps"; }
check "the postmaster maps both shims" maps_both

e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
ok "pgoffd starts and answers status"
refused_counted() { [ "$(counter user_symbol_files_refused)" -ge 1 ] 2>/dev/null; }
wait_for 15 refused_counted
check "the refused files are counted (user_symbol_files_refused $(counter user_symbol_files_refused))" \
	refused_counted
check "and logged" grep -q "not read for user stacks' symbols" "$E2E_DIR/pgoffd.log" ||
	note "log: $(tail -n 5 "$E2E_DIR/pgoffd.log")"

# user stacks of backends that sleep, while status is asked 1000 times
member watch --view intervals --min 50ms --user-stack --json --timeout 60s \
	>"$E2E_DIR/stacks.all" 2>&1 &
w_job=$!
watchers 1 10 || not_ok "the watch subscribed (gave up after 10 s)"
psql -X -q -At -c "select pg_sleep(0.1) from generate_series(1, 60)" >/dev/null 2>&1 &
s_job=$!
out=$(/usr/bin/python3 "$E2E_TOP/tests/e2e/status_latency.py" "$SOCK" 4 2>&1)
read -r n p50 p99 max _ <<<"$out"
note "status round trips with user stacks through the stalled path: ${n:-?}, p50 ${p50:-?} ms, p99 ${p99:-?} ms, max ${max:-?} ms"
check "status answers within 100 ms at p99 (${p99:-?} ms of ${n:-?} round trips)" \
	between "${p99:-999}" 0 100 || note "$(tail -n +2 <<<"$out")"
check "no status round trip took a second (max ${max:-?} ms)" \
	between "${max:-99999}" 0 1000
stack_seen() { jqe -s 'any(.[]; .user_stack // [] | length > 1)' "$E2E_DIR/stacks.all" 2>/dev/null; }
wait_for 10 stack_seen
kill "$s_job" 2>/dev/null
wait "$s_job" 2>/dev/null
unwatch "$w_job"
jq -c 'select(.user_stack != null) | .user_stack' "$E2E_DIR/stacks.all" 2>/dev/null | head -n 1 |
	sed 's/^/# a user stack: /'
check "user stacks still come, the shim's frames unnamed (libpgoffa.so+0x...)" \
	jqe -s 'any(.[]; .user_stack // [] | any(.[]; test("^libpgoffa.so\\+0x")))' "$E2E_DIR/stacks.all" ||
	note "no such stack among $(grep -c user_stack "$E2E_DIR/stacks.all") lines"
check "status reports the frames of files not handed over (user_symbols_unopened $(counter user_symbols_unopened))" \
	[ "$(counter user_symbols_unopened)" -ge 1 ]

# pgoffd's own shutdown: nothing of it waits on the mount (a pgoffd
# that hangs is killed after 10 s, and fails)
exited() { case $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) in "" | Z) return 0 ;; esac; return 1; }
kill -TERM "$E2E_BROKER_PID"
wait_for 10 exited "$E2E_BROKER_PID"
check "SIGTERM ends pgoffd within 10 s" exited "$E2E_BROKER_PID"
exited "$E2E_BROKER_PID" || kill -KILL "$E2E_BROKER_PID"
e2e_stop_broker TERM
check "pgoffd exits 0 (status $E2E_BROKER_RC)" [ "$E2E_BROKER_RC" = 0 ]
