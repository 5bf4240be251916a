# SPDX-License-Identifier: GPL-2.0-only
# Other Debian suites' PostgreSQL, each in a root file system of its own
# (debootstrap --variant=minbase), cached across runs, and run like a
# container: its own mount and pid namespaces, chrooted. Sourced by the
# end-to-end tests (after lib.sh) and by the version survey; needs root.
#
#   root_ensure NAME SUITE PACKAGES...           a root with those packages
#   root_ensure_experimental NAME PACKAGES...    sid, the packages from
#                                                experimental
#   pgroot_start NAME MAJOR [name=value...]      initdb and start a server
#   pgroot_sql NAME [psql args...]               that root's own psql
#   pgroot_stop NAME, pgroot_stop_all            stop, remove its data
#   pgroot_restart NAME [name=value...]          same data, new settings
#   hostpid NSPID                                the host's pid of a process
#                                                of root $R's server
#
# Roots live in $PGOFF_ROOTS/NAME (outside the repository: a fresh clone
# on the same machine finds them), each with a stamp naming what it was
# built from and when; a root whose stamp differs or is older than 7 days
# is built again. A build happens in a temp dir beside it and is renamed
# into place only when complete, under an exclusive flock of NAME.lock;
# a root in use (a server started from it) holds that lock shared, so it
# is never rebuilt under a running server (roots_unlocked starts anything
# else that may outlive the shell). Everything a server mounts (its
# /proc, its /dev/shm) lives in its own mount namespace and goes with it;
# nothing is ever mounted on the host. A server dies with the shell that
# started it, even by SIGKILL.

PGOFF_ROOTS=${PGOFF_ROOTS:-/var/cache/pgoff-tests/roots}
# host_mirror: the Debian archive the host's own apt uses (its sources,
# deb822 or one-line; the first entry for a plain suite, not -security or
# -updates), so that the host's mirror or proxy applies to the roots too
host_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && awk 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; plain = 0; off = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
				if ($i ~ /^Enabled: *no/) off = 1
				if ($i ~ /^Suites:/) { n = split($i, s, /[ \t]+/)
					for (j = 2; j <= n; j++) if (s[j] != "" && s[j] !~ /-/) plain = 1 } }
			  if (uri != "" && plain && !off) { print uri; exit } }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] && awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++
			if ($i ~ /^\[/ || $i ~ /\]$/) i++
			if ($(i + 1) !~ /-/) { print $i; exit } }' "$f"
	done
}
PGOFF_MIRROR=${PGOFF_MIRROR:-$(host_mirror | head -n1)}
PGOFF_ROOT_MAX_AGE=${PGOFF_ROOT_MAX_AGE:-$((7 * 86400))}
declare -gA ROOT_LOCK_FD=()	# NAME: the fd holding NAME.lock
declare -gA PGR_PM=() PGR_JOB=() PGR_PORT=() PGR_SOCK=() PGR_SOCK_IN=() PGR_DIR=() \
	PGR_BIN=() PGR_LOG=() PGR_MAJOR=()

# what a root is built from; a root whose stamp says otherwise is rebuilt
_root_key() {	# SUITE RELEASE PACKAGES...
	local suite=$1 release=$2; shift 2
	printf 'suite=%s\nrelease=%s\nmirror=%s\npackages=%s\n' "$suite" "${release:-$suite}" \
		"$PGOFF_MIRROR" "$(printf '%s\n' "$@" | sort -u | tr '\n' ' ')"
}

# _root_fresh DIR KEY: DIR is a complete root built from KEY, young enough
# (as of PGOFF_ROOT_NOW, the start of the test run, if set)
_root_fresh() {
	local stamp=$1/.pgoff-root built
	[ -f "$stamp" ] || return 1
	[ "$(grep -v '^built=' "$stamp")" = "$2" ] || return 1
	built=$(sed -n 's/^built=//p' "$stamp")
	[ -n "$built" ] && [ $((${PGOFF_ROOT_NOW:-$(date +%s)} - built)) -lt "$PGOFF_ROOT_MAX_AGE" ]
}

# _root_log_tail LOG: the end of a failed build's log, as TAP comments
_root_log_tail() {
	echo "# last lines of $1:"
	tail -n 25 "$1" | sed 's/^/#   /'
}

# _root_lock NAME MODE(-x|-s): take NAME.lock, once per process and name
_root_lock() {
	local name=$1 mode=$2 fd
	mkdir -p "$PGOFF_ROOTS" || return 1
	if [ -z "${ROOT_LOCK_FD[$name]:-}" ]; then
		exec {fd}>>"$PGOFF_ROOTS/$name.lock" || return 1
		ROOT_LOCK_FD[$name]=$fd
	fi
	fd=${ROOT_LOCK_FD[$name]}
	flock -n "$mode" "$fd" && return 0
	echo "# root $name: waiting for another run's build or use of it (flock $PGOFF_ROOTS/$name.lock)"
	# a build takes minutes; a root used by a whole e2e run, longer
	flock -w 1800 "$mode" "$fd" && return 0
	echo "# root $name: still locked after 30 min; held by pids: $(fuser "$PGOFF_ROOTS/$name.lock" 2>/dev/null)"
	return 1
}

# _root_build NAME SUITE RELEASE KEY PACKAGES...: build into a temp dir,
# rename into place. Called with NAME.lock held exclusively.
_root_build() {
	local name=$1 suite=$2 release=$3 key=$4; shift 4
	local dest=$PGOFF_ROOTS/$name tmp log t0=$SECONDS rc size apt_t=()
	# the remains of interrupted builds (the lock says nobody builds them)
	if [ -z "$PGOFF_MIRROR" ]; then
		echo "# root $name: no Debian archive in the host's apt sources; set PGOFF_MIRROR"
		return 1
	fi
	rm -rf --one-file-system "$PGOFF_ROOTS/.$name.build."*
	tmp=$(mktemp -d "$PGOFF_ROOTS/.$name.build.XXXXXX") || return 1
	log=$tmp/build.log
	echo "# root $name: building ($suite${release:+ + $release}: $*)"
	# debootstrap mounts /proc and /sys in the target: in a mount namespace
	# of its own, they cannot outlive it, even if it is killed
	unshare --mount --propagation private \
		debootstrap --variant=minbase "$suite" "$tmp/root" "$PGOFF_MIRROR" >"$log" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "# root $name: debootstrap $suite failed (status $rc)"
		_root_log_tail "$log"
		[ -f "$tmp/root/debootstrap/debootstrap.log" ] &&
			_root_log_tail "$tmp/root/debootstrap/debootstrap.log"
		rm -rf --one-file-system "$tmp"
		return 1
	fi
	{
		echo "deb $PGOFF_MIRROR $suite main"
		[ -n "$release" ] && echo "deb $PGOFF_MIRROR $release main"
	} >"$tmp/root/etc/apt/sources.list"
	# no service is started by a package's postinst, and no cluster made:
	# the tests make their own
	printf '#!/bin/sh\nexit 101\n' >"$tmp/root/usr/sbin/policy-rc.d"
	chmod 0755 "$tmp/root/usr/sbin/policy-rc.d"
	mkdir -p "$tmp/root/etc/postgresql-common"
	echo "create_main_cluster = false" >"$tmp/root/etc/postgresql-common/createcluster.conf"
	# PACKAGE/RELEASE takes those packages from RELEASE and all they need
	# from SUITE (so name every package that must come from RELEASE):
	# apt-get -t experimental would prefer all of experimental, and fails
	# whenever experimental is in the middle of a transition (perl 5.44
	# here, 2026-12)
	apt_t=("$@")
	[ -n "$release" ] && apt_t=("${apt_t[@]/%//$release}")
	# sid's and experimental's Release files are often past Valid-Until
	unshare --mount --propagation private sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc" || exit 1
		chroot "$root" apt-get -q -o Acquire::Check-Valid-Until=false update || exit 1
		DEBIAN_FRONTEND=noninteractive chroot "$root" apt-get -q -y \
			--no-install-recommends -o Dpkg::Options::=--force-confold install "$@" || exit 1
		chroot "$root" apt-get clean' sh "$tmp/root" "${apt_t[@]}" >>"$log" 2>&1
	rc=$?
	rm -f "$tmp/root/usr/sbin/policy-rc.d"
	if [ "$rc" != 0 ]; then
		echo "# root $name: apt-get install ${apt_t[*]} failed in $suite (status $rc)"
		_root_log_tail "$log"
		rm -rf --one-file-system "$tmp"
		return 1
	fi
	{ echo "$key"; echo "built=$(date +%s)"; } >"$tmp/root/.pgoff-root"
	cp "$log" "$tmp/root/.pgoff-root.log"
	if [ -e "$dest" ]; then
		mv "$dest" "$tmp/old" || { rm -rf --one-file-system "$tmp"; return 1; }
	fi
	mv "$tmp/root" "$dest" || { rm -rf --one-file-system "$tmp"; return 1; }
	rm -rf --one-file-system "$tmp"
	size=$(du -sh --one-file-system "$dest" | cut -f1)
	echo "# root $name: built in $((SECONDS - t0)) s, $size"
}

# _root_ensure NAME SUITE RELEASE PACKAGES...
_root_ensure() {
	local name=$1 suite=$2 release=$3; shift 3
	local key dest=$PGOFF_ROOTS/$name
	key=$(_root_key "$suite" "$release" "$@")
	_root_lock "$name" -x || return 1
	# nobody runs a server from it now (they would hold the lock): the
	# data of servers whose run was killed can go
	rm -rf --one-file-system "$dest/var/tmp/pgoff-e2e."*
	if ! _root_fresh "$dest" "$key"; then
		_root_build "$name" "$suite" "$release" "$key" "$@" || { _root_lock "$name" -s; return 1; }
	else
		echo "# root $name: cached ($(du -sh --one-file-system "$dest" | cut -f1)," \
			"built $(date -u -d "@$(sed -n 's/^built=//p' "$dest/.pgoff-root")" '+%F %T') UTC)"
	fi
	# in use from now on: shared, so that nobody rebuilds it under us
	_root_lock "$name" -s
}

# roots_unlocked COMMAND...: COMMAND without the roots' lock fds, for a
# process that may outlive this shell and must not keep a root "in use"
# (pgoffd; a server keeps them on purpose)
roots_unlocked() {
	local fd closes=
	for fd in "${ROOT_LOCK_FD[@]}"; do closes+=" $fd>&-"; done
	eval "\"\$@\"$closes"
}

root_ensure() {	# NAME SUITE PACKAGES...
	local name=$1 suite=$2; shift 2
	_root_ensure "$name" "$suite" "" "$@"
}

root_ensure_experimental() {	# NAME PACKAGES...: sid plus experimental
	local name=$1; shift
	_root_ensure "$name" sid experimental "$@"
}

# The roots the tests use, by PostgreSQL major: where Debian ships it.
# 15 is the host's own (bookworm): root "host", which is /.
PG_ROOT_MAJORS="13 17 18 19"	# those with a root of their own
pg_root_name() {	# MAJOR: the name pgroot_start wants for it
	if [ "$1" = 15 ]; then echo host; else echo "pg$1"; fi
}
pg_root_ensure() {	# MAJOR: sets PGROOT_NAME
	PGROOT_NAME=$(pg_root_name "$1")
	case $1 in
	15) [ -x /usr/lib/postgresql/15/bin/postgres ] ||
		{ echo "# no PostgreSQL 15 on the host (make deps)"; return 1; } ;;
	13) root_ensure pg13 bullseye postgresql-13 ;;
	17) root_ensure pg17 trixie postgresql-17 ;;
	18) root_ensure pg18 sid postgresql-18 ;;
	# PACKAGE/experimental pulls no dependency from experimental:
	# the client and libpq of the same version are named
	19) root_ensure_experimental pg19 postgresql-19 postgresql-client-19 libpq5 ;;
	*) echo "# no root known for PostgreSQL $1"; return 1 ;;
	esac
}

# bookworm with systemd as init, for pgoffd under a real systemd
# (systemd-nspawn -b); with what the Debian packages depend on
# (test_deb.sh installs them there without a network; libnettle8, for
# the cluster ids, comes with libmicrohttpd12's GnuTLS)
systemd_root_ensure() {
	root_ensure bookworm-systemd bookworm systemd systemd-sysv dbus libbpf1 libelf1 libcap2 \
		libjson-c5 postgresql-15 libmicrohttpd12 libyaml-0-2
}

# _pgr_root NAME: the root's directory; "host" is the host's own / (its
# PostgreSQL 15, run the same way: own namespaces, chroot /)
_pgr_root() {
	if [ "$1" = host ]; then echo ""; else echo "$PGOFF_ROOTS/$1"; fi
}

# _pgr_ids ROOT: uid:gid of the root's own postgres user (its packages
# made it; not the host's)
_pgr_ids() {
	awk -F: '$1 == "postgres" { print $3 ":" $4; found = 1 } END { exit !found }' "$1/etc/passwd"
}

# _pgr_run NAME COMMAND...: a command of the root, chrooted, as its postgres
_pgr_run() {
	local root ids
	root=$(_pgr_root "$1"); shift
	ids=$(_pgr_ids "$root") || { echo "# ${root:-/} has no postgres user"; return 1; }
	chroot --userspec="$ids" "${root:-/}" env -i PATH=/usr/bin:/bin HOME=/var/lib/postgresql \
		LANG=C.UTF-8 "$@"
}

# pgroot_sql NAME [psql args...]: that root's own psql, to its server
pgroot_sql() {
	local name=$1; shift
	_pgr_run "$name" "${PGR_BIN[$name]}/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-h "${PGR_SOCK_IN[$name]}" -p "${PGR_PORT[$name]}" -U postgres -d postgres "$@"
}

# hostpid NSPID: the host's pid of a process of $R's cluster (R: the
# caller's root, the one its loop over the majors is at)
hostpid() {
	local p
	for p in "${PGR_PM[$R]}" $(pgrep -P "${PGR_PM[$R]}"); do
		[ "$(awk '/^NSpid:/ { print $NF }' "/proc/$p/status" 2>/dev/null)" = "$1" ] &&
			{ echo "$p"; return 0; }
	done
	return 1
}

# pgroot_start NAME MAJOR [name=value...]: initdb and start PostgreSQL
# MAJOR of root NAME (root_ensure'd first) in its own mount and pid
# namespaces, chrooted, with the given settings; waits until it accepts
# connections. Sets, by NAME: PGR_PM (the postmaster's pid on the host),
# PGR_PORT, PGR_SOCK (its socket directory as seen from the host),
# PGR_SOCK_IN (the same, inside), PGR_DIR (data and socket, host path),
# PGR_LOG (the server's log, on the host). The data directory is
# PGR_DIR/data. The postmaster is pid 1 of its namespace: when it exits
# the kernel ends whatever is left in there, and with it the mounts.
pgroot_start() {
	local name=$1 major=$2; shift 2
	local root bin=/usr/lib/postgresql/$major/bin dir inside ids port
	root=$(_pgr_root "$name")
	[ -x "$root$bin/postgres" ] || { echo "# ${root:-/} has no $bin/postgres"; return 1; }
	ids=$(_pgr_ids "$root") || { echo "# ${root:-/} has no postgres user"; return 1; }
	dir=$(mktemp -d "$root/var/tmp/pgoff-e2e.XXXXXX") || return 1
	chmod 0755 "$dir" && chown "$ids" "$dir"
	inside=${dir#"$root"}
	port=$((20000 + RANDOM % 20000))
	PGR_DIR[$name]=$dir PGR_SOCK[$name]=$dir PGR_SOCK_IN[$name]=$inside PGR_PORT[$name]=$port
	PGR_BIN[$name]=$bin PGR_MAJOR[$name]=$major PGR_LOG[$name]=$dir.log PGR_PM[$name]=
	_pgr_run "$name" "$bin/initdb" -D "$inside/data" -U postgres -A trust -E UTF8 \
		--locale=C -N >"$dir.log" 2>&1 ||
		{ echo "# initdb $major in $name failed:"; sed 's/^/#   /' "$dir.log"; return 1; }
	_pgr_launch "$name" "$@" && return 0
	pgroot_stop "$name"
	return 1
}

# _pgr_launch NAME [name=value...]: start the server of NAME's data
# directory in new namespaces; wait until it accepts connections
_pgr_launch() {
	local name=$1; shift
	local root dir=${PGR_DIR[$name]} inside=${PGR_SOCK_IN[$name]} port=${PGR_PORT[$name]}
	local bin=${PGR_BIN[$name]} major=${PGR_MAJOR[$name]} ids opts=() o pm
	root=$(_pgr_root "$name")
	ids=$(_pgr_ids "$root") || return 1
	PGR_PM[$name]=
	for o in "$@"; do opts+=(-c "$o"); done
	# If this shell dies, even by SIGKILL, the server goes with it: unshare
	# gets SIGKILL when its parent (this shell) dies, and the postmaster
	# when unshare does (pid 1 of its namespace: the kernel then ends the
	# rest). The postmaster's --pdeathsig is set by the root's own setpriv
	# after the switch to postgres: a change of credentials clears it,
	# which is why unshare --kill-child alone does not do it.
	setpriv --pdeathsig KILL unshare --mount --pid --fork --mount-proc="$root/proc" \
		sh -c 'root=$1 uid=${2%:*} gid=${2#*:}; shift 2
			mkdir -p "$root/dev/shm" &&
			mount -t tmpfs -o mode=1777,size=1g pgoff-shm "$root/dev/shm" &&
			exec chroot "${root:-/}" setpriv --reuid="$uid" --regid="$gid" --clear-groups \
				--pdeathsig KILL -- env -i PATH=/usr/bin:/bin \
				HOME=/var/lib/postgresql LANG=C.UTF-8 "$@"' \
		sh "$root" "$ids" "$bin/postgres" -D "$inside/data" -k "$inside" -p "$port" \
		-c listen_addresses= "${opts[@]}" >>"$dir.log" 2>&1 &
	PGR_JOB[$name]=$!
	WAIT_STEP=0.1 wait_for 30 _pgr_up_or_gone "$name" "$root$bin/postgres" 2>/dev/null
	[ -n "${PGR_PM[$name]}" ] && return 0
	echo "# PostgreSQL $major in $name did not come up; its log:"
	tail -n 20 "$dir.log" | sed 's/^/#   /'
	return 1
}

# _pgr_up_or_gone NAME EXE: true once NAME's postmaster (running EXE)
# accepts connections (PGR_PM set) or its namespace is gone
_pgr_up_or_gone() {
	local pm
	pm=$(pgrep -P "${PGR_JOB[$1]}")
	if [ -n "$pm" ] && [ "$(readlink "/proc/$pm/exe")" = "$2" ] &&
	   pgroot_sql "$1" -c "select 1" >/dev/null 2>&1; then
		PGR_PM[$1]=$pm
		return 0
	fi
	gone "${PGR_JOB[$1]}"
}

# pgroot_restart NAME [name=value...]: the same cluster, stopped (fast)
# and started again in new namespaces with these settings
pgroot_restart() {
	local name=$1 job=${PGR_JOB[$1]:-}; shift
	if [ -n "$job" ]; then
		kill -INT "${PGR_PM[$name]}" 2>/dev/null
		WAIT_STEP=0.1 wait_for 30 gone "$job" 2>/dev/null
		kill -KILL "$job" 2>/dev/null
		wait "$job" 2>/dev/null
	fi
	PGR_JOB[$name]= PGR_PM[$name]=
	_pgr_launch "$name" "$@"
}

# pgroot_stop NAME: SIGINT to the postmaster (fast shutdown) by its host
# pid, wait (SIGKILL to the namespace after 30 s), then remove its data.
# Returns 1 if anything of the root is still mounted on the host.
pgroot_stop() {
	local name=$1 job=${PGR_JOB[$1]:-} root pm
	root=$(_pgr_root "$name")
	if [ -n "$job" ]; then
		pm=${PGR_PM[$name]:-$(pgrep -P "$job")}
		[ -n "$pm" ] && kill -INT "$pm" 2>/dev/null
		if ! WAIT_STEP=0.1 wait_for 30 gone "$job" 2>/dev/null; then
			echo "# PostgreSQL in $name did not stop in 30 s: killing its namespace"
			kill -KILL "$job" 2>/dev/null
		fi
		wait "$job" 2>/dev/null
	fi
	PGR_JOB[$name]= PGR_PM[$name]=
	if [ -n "${PGR_DIR[$name]:-}" ]; then
		rm -rf --one-file-system "${PGR_DIR[$name]}" "${PGR_DIR[$name]}.log"
		PGR_DIR[$name]=
	fi
	if [ -n "$root" ] && findmnt -rn -o TARGET | grep -q "^$root/"; then
		echo "# still mounted under $root: $(findmnt -rn -o TARGET | grep "^$root/" | tr '\n' ' ')"
		return 1
	fi
	return 0
}

# pgroot_stop_all: every server started here (an EXIT trap calls it)
pgroot_stop_all() {
	local name rc=0
	for name in "${!PGR_JOB[@]}"; do
		[ -n "${PGR_JOB[$name]}" ] || [ -n "${PGR_DIR[$name]:-}" ] || continue
		pgroot_stop "$name" || rc=1
	done
	return $rc
}

# The systemd root booted as a container (systemd-nspawn -b), on an
# overlay of the cached root so that the cache stays as built:
#   ct_mount DIR   the overlay at DIR/root (its upper and work dirs in
#                  DIR); sets CT_ROOT; the root can be changed (chroot)
#                  before it boots; its timers are masked (a daily job
#                  such as dpkg-db-backup would write files in the middle
#                  of a test that compares them)
#   ct_boot        boot it, wait until its systemd has started up; sets
#                  CT_LEADER (its PID 1, on the host) and CT_STATE (what
#                  systemctl is-system-running said last); 0 if running or
#                  degraded, else 1 and the console's last lines
#   inside CMD...  a command in the container (all its namespaces, its root)
#   ct_stop        power it off (SIGKILL after 10 s), unmount; also fine
#                  when nothing was booted (an EXIT trap calls it)
CT_DIR= CT_ROOT= CT_JOB= CT_LEADER= CT_STATE=
ct_mount() {
	CT_DIR=$1 CT_ROOT=$1/root
	mkdir -p "$CT_DIR/upper" "$CT_DIR/work" "$CT_ROOT" &&
		mount -t overlay overlay \
			-o "lowerdir=$PGOFF_ROOTS/bookworm-systemd,upperdir=$CT_DIR/upper,workdir=$CT_DIR/work" \
			"$CT_ROOT" &&
		ln -sfn /dev/null "$CT_ROOT/etc/systemd/system/timers.target"
}

_ct_leader() {
	CT_LEADER=$(pgrep -x -P "$CT_JOB" systemd | head -n1)
	[ -n "$CT_LEADER" ]
}
_ct_up_or_gone() {
	CT_STATE=$(nsenter -t "${CT_LEADER:-0}" -a -r -w systemctl is-system-running 2>&1)
	case $CT_STATE in running | degraded) return 0 ;; esac
	gone "$CT_JOB"
}

# nspawn's own system call filter stands for none of a host's: bpf(2) and
# perf_event_open(2) (the on-CPU sampler) pass it, and the unit's filter
# is the one under test
ct_boot() {
	systemd-nspawn -q -b -D "$CT_ROOT" --register=no --keep-unit --capability=all \
		--system-call-filter='bpf perf_event_open' >"$CT_DIR/console.log" 2>&1 &
	CT_JOB=$! CT_LEADER= CT_STATE=
	# nspawn's child that is systemd: before the exec it is nspawn itself,
	# which may fork on (so a child seen early may be gone)
	WAIT_STEP=0.1 wait_for 10 _ct_leader 2>/dev/null
	# until its manager answers (before that: "Failed to connect to bus")
	# and has finished starting up
	WAIT_STEP=0.3 wait_for 90 _ct_up_or_gone 2>/dev/null
	case $CT_STATE in running | degraded) return 0 ;; esac
	tail -n 15 "$CT_DIR/console.log" | sed 's/^/# console: /'
	return 1
}

# -r -w: the container's root, not its mount namespace's first root (nspawn
# moves the container's root over /, where the host's tree stays below)
inside() { nsenter -t "$CT_LEADER" -a -r -w "$@"; }

ct_stop() {
	local leader
	if [ -n "$CT_JOB" ] && kill -0 "$CT_JOB" 2>/dev/null; then
		leader=$(pgrep -P "$CT_JOB" | head -n1)
		# a command still running inside: its nsenter would stop with it
		# when the container's shutdown stops everything (SIGSTOP), and
		# hold this test's descriptors (the e2e and roots locks) forever
		[ -n "$CT_LEADER" ] && pkill -KILL -f "^nsenter -t $CT_LEADER " 2>/dev/null
		[ -n "$leader" ] && nsenter -t "$leader" -a -r -w systemctl poweroff >/dev/null 2>&1
		WAIT_STEP=0.1 wait_for 10 gone "$CT_JOB" 2>/dev/null
		kill -KILL "$CT_JOB" 2>/dev/null
		wait "$CT_JOB" 2>/dev/null
	fi
	CT_JOB=
	[ -n "$CT_ROOT" ] && umount "$CT_ROOT" 2>/dev/null
	return 0
}

# ct_check_lock_wait USER DIR: a row-lock wait of the container's
# PostgreSQL 15 cluster (port 5432, running) is seen by USER's pgoffctl
# watch through the unit's socket, with the pids of the container's own
# pid namespace, where pgoffd runs too: one check; files in DIR.
ct_check_lock_wait() {
	local user=$1 dir=$2 base holder watch_job holder_pid
	subscribers() { inside pgoffctl status --json 2>/dev/null | jq -r '.subscribers // empty'; }
	base=$(subscribers)
	inside su postgres -c "psql -X -q -c 'create table ct_lock (v int); insert into ct_lock values (1)'" \
		>/dev/null 2>&1
	inside setpriv --reuid="$user" --regid="$(inside id -g "$user")" --init-groups -- \
		pgoffctl watch --pg-wait Lock:transactionid --min 200ms --json --count 1 --timeout 30s \
		</dev/null >"$dir/lock.json" 2>"$dir/lock.err" &
	watch_job=$!
	subscribed() { [ "$(subscribers)" = $((${base:-0} + 1)) ]; }
	WAIT_STEP=0.1 wait_for 10 subscribed
	# the holder prints its pid once the row is its own, and holds it 1 s
	# from the moment the waiter waits, however long each psql took
	{
		echo "begin;"
		echo "update ct_lock set v = 2;"
		echo "select pg_backend_pid();"
		until_lock_waiter
		echo "select pg_sleep(1);"
		echo "commit;"
	} | inside su postgres -c "psql -X -q -At" >"$dir/holder.out" 2>&1 &
	holder=$!
	wait_for 20 [ -s "$dir/holder.out" ] || note "the holder's psql printed nothing in 20 s"
	inside su postgres -c "psql -X -q -c 'update ct_lock set v = 3'" >/dev/null 2>&1
	wait "$holder" "$watch_job"
	holder_pid=$(head -n1 "$dir/holder.out")
	[ -s "$dir/lock.json" ] || {
		note "pgoffd's status: $(inside pgoffctl status --json | jq -c '{traced_processes, clusters, counters}')"
		inside journalctl -u pgoffd --no-pager | tail -n 8 | sed 's/^/# /'
	}
	note "watch in the container: $(head -c 400 "$dir/lock.json") $(head -c 200 "$dir/lock.err"); holder $holder_pid"
	check "$user, in pgoff, sees the container's lock wait, woken by the holder's pid there ($holder_pid)" \
		jqe --argjson h "${holder_pid:-0}" '.type == "episode" and .pg.wait_event == "transactionid" and
			.duration_ns > 5e8 and .waker.pid == $h and .pg.backend_type == "client backend"' "$dir/lock.json"
}
