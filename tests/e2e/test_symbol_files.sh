#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A cluster owner points the path of a library their postmaster maps
# into a FUSE mount that never answers (a symlink put where the
# directory was), and another library's path at a FIFO. The library in
# the FUSE mount is in every backend's user stack (an LD_PRELOAD shim of
# epoll_wait, built with frame pointers). While a member watches those
# stacks, pgoffd's status answers within 100 ms, its frames are named
# module+0xoffset, the refusals are counted and logged, and SIGTERM ends
# pgoffd at once: its loop never opens or reads a path the owner chose
# (the prober's worker does, within its deadline).
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
	mountpoint -q "$mnt" 2>/dev/null && umount -l "$mnt"
	e2e_cleanup
}
trap stall_cleanup EXIT

command -v cc >/dev/null || { not_ok "a C compiler for the shim"; exit 1; }
mkdir -p "$owner/a" "$owner/b" "$mnt"
cat >"$E2E_DIR/shim.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/epoll.h>
/* a frame of this file under libc's epoll_wait in every wait */
__attribute__((noinline)) static int shim_inner(int fd, struct epoll_event *ev,
						  int n, int timeout)
{
	static int (*real)(int, struct epoll_event *, int, int);

	if (!real)
		real = (int (*)(int, struct epoll_event *, int, int))
			dlsym(RTLD_NEXT, "epoll_wait");
	return real(fd, ev, n, timeout);
}
int epoll_wait(int fd, struct epoll_event *ev, int n, int timeout)
{
	int r = shim_inner(fd, ev, n, timeout);

	return r;
}
C
echo 'int pgoff_shim_b(void) { return 0; }' >"$E2E_DIR/shim_b.c"
cc -O0 -fno-omit-frame-pointer -fPIC -shared -o "$owner/a/libpgoffa.so" "$E2E_DIR/shim.c" &&
	cc -O0 -fPIC -shared -o "$owner/b/libpgoffb.so" "$E2E_DIR/shim_b.c" ||
	{ not_ok "build the shims"; exit 1; }
chown -R postgres "$owner"
chmod -R a+rX "$owner"

# the cluster, its postmaster mapping both shims
PGDATA_DIR=$E2E_DIR/pg/data
PGPORT=$((20000 + RANDOM % 20000))
mkdir -p "$E2E_DIR/pg" && chown postgres "$E2E_DIR/pg"
su postgres -s /bin/sh -c "$PGBIN/initdb -D '$PGDATA_DIR' -A trust -U postgres" \
	>"$E2E_DIR/initdb.log" 2>&1 || { cat "$E2E_DIR/initdb.log"; not_ok "initdb"; exit 1; }
su postgres -s /bin/sh -c "LD_PRELOAD='$owner/a/libpgoffa.so $owner/b/libpgoffb.so' \
	$PGBIN/pg_ctl -D '$PGDATA_DIR' -w -l '$E2E_DIR/pg/log' \
	-o '-p $PGPORT -c listen_addresses= -k $E2E_DIR/pg' start" >/dev/null 2>&1 ||
	{ cat "$E2E_DIR/pg/log"; not_ok "start PostgreSQL 15 with the shims"; exit 1; }
export PGHOST=$E2E_DIR/pg PGPORT PGUSER=postgres PGDATABASE=postgres
pm=$(head -n1 "$PGDATA_DIR/postmaster.pid")
maps_both() { grep -q libpgoffa.so "/proc/$pm/maps" && grep -q libpgoffb.so "/proc/$pm/maps"; }
check "the postmaster maps both shims" maps_both

# the owner's move: a's directory becomes a symlink into the mount that
# never answers, b's library a FIFO
/usr/bin/python3 "$E2E_TOP/tests/e2e/fuse_stall.py" "$mnt" >"$E2E_DIR/fuse.out" 2>&1 &
FUSE_PID=$!
fuse_up() { grep -q mounted "$E2E_DIR/fuse.out"; }
wait_for 10 fuse_up || { not_ok "mount the FUSE file system that never answers: $(cat "$E2E_DIR/fuse.out")"; exit 1; }
su postgres -s /bin/sh -c "mv '$owner/a' '$owner/a.real' && ln -s '$mnt' '$owner/a' &&
	mv '$owner/b/libpgoffb.so' '$owner/b/old.so' && mkfifo '$owner/b/libpgoffb.so'" ||
	{ not_ok "swap the paths"; exit 1; }
# the path now waits: shown with a timeout that kills its reader
timeout -s KILL 2 cat "$owner/a/libpgoffa.so" >/dev/null 2>&1
check "reading the shim's path now blocks (killed after 2 s: rc 137)" [ $? = 137 ]

e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
ok "pgoffd starts and answers status"
counter() { "$PGOFFCTL" --socket "$SOCK" status --json | jq ".counters.$1"; }
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
	jqe -s 'any(.[]; .user_stack // [] | any(.[]; test("^libpgoffa.so\\+0x")))' "$E2E_DIR/stacks.all"
check "status reports the frames of files not handed over (user_symbols_unopened $(counter user_symbols_unopened))" \
	[ "$(counter user_symbols_unopened)" -ge 1 ]

# pgoffd's own shutdown: nothing of it waits on the mount (a pgoffd
# that hangs is killed after 10 s, and fails)
kill -TERM "$E2E_BROKER_PID"
wait_for 10 gone "$E2E_BROKER_PID"
check "SIGTERM ends pgoffd within 10 s" gone "$E2E_BROKER_PID"
e2e_stop_broker KILL
