#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# e2e-timeout: 900 (it may build its test roots with debootstrap first)
# What make install puts in place for systemd: the unit verifies, the
# sysusers entry creates the group and the user, the tmpfiles entry the
# socket directory (both applied to a scratch root, not to this system).
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

unit=$E2E_DIR/prefix/lib/systemd/system/pgoffd.service
if ! command -v systemd-analyze >/dev/null; then
	not_ok "systemd-analyze is not installed (Debian package systemd)"
	exit 1
fi
# the unit names its man page, which the prefix holds
MANPATH=$E2E_DIR/prefix/share/man systemd-analyze verify "$unit" >"$E2E_DIR/verify.out" 2>&1
rc=$?
sed 's/^/# /' "$E2E_DIR/verify.out"
check "systemd-analyze verify accepts pgoffd.service, without a warning" \
	[ $rc = 0 -a ! -s "$E2E_DIR/verify.out" ]
check "the unit starts the installed pgoffd, after checking its settings" \
	grep -qx "ExecStartPre=$E2E_DIR/prefix/sbin/pgoffd --check" "$unit"
check "the unit's capability bounding set has no CAP_SYS_ADMIN" \
	bash -c "grep '^CapabilityBoundingSet=' '$unit' | grep -qv SYS_ADMIN"
check "the unit allows only Unix sockets and no new privileges" \
	bash -c "grep -qx 'RestrictAddressFamilies=AF_UNIX' '$unit' && grep -qx 'NoNewPrivileges=yes' '$unit'"

root=$E2E_DIR/sysroot
mkdir -p "$root/etc" && touch "$root/etc/passwd" "$root/etc/group"
systemd-sysusers --root="$root" "$E2E_DIR/prefix/lib/sysusers.d/pgoff.conf" >/dev/null 2>&1
check "sysusers creates the pgoff group and the pgoffd user" \
	bash -c "grep -q '^pgoff:' '$root/etc/group' && grep -q '^pgoffd:' '$root/etc/passwd'"
systemd-tmpfiles --root="$root" --create "$E2E_DIR/prefix/lib/tmpfiles.d/pgoff.conf" >/dev/null 2>&1
uid=$(awk -F: '$1 == "pgoffd" { print $3 }' "$root/etc/passwd")
gid=$(awk -F: '$1 == "pgoff" { print $3 }' "$root/etc/group")
made=$(stat -c '%a %u %g' "$root/run/pgoff")
check "tmpfiles creates /run/pgoff 0750 root:pgoff (saw $made; pgoffd is uid $uid)" \
	[ "$made" = "750 0 $gid" ]

# --- the unit under a real systemd (PID 1 of a booted Debian 12
# container, systemd-nspawn): installed with make install DESTDIR=, into
# an overlay of a cached root, so that the cache stays as built
. "$E2E_TOP/tests/e2e/roots.sh"
systemd_root_ensure || { not_ok "a Debian 12 root with systemd"; exit 1; }
sys=$E2E_DIR/nspawn
ct_mount "$sys" || { not_ok "an overlay of the root"; exit 1; }
trap 'ct_stop; e2e_cleanup' EXIT
make -s -C "$E2E_TOP" install DESTDIR="$sys/root" PREFIX=/usr BUILD="$PGOFF_BUILD" \
	SANITIZE="${PGOFF_SANITIZE:-}" >"$E2E_DIR/install.log" 2>&1 ||
	{ not_ok "make install DESTDIR= into the root"; cat "$E2E_DIR/install.log"; exit 1; }
# the sanitizer build needs its runtime, which the root does not have
if [ -n "${PGOFF_SANITIZE:-}" ]; then
	for lib in $(ldd "$E2E_TOP/$PGOFF_BUILD/pgoffd" | awk '/lib(asan|ubsan)/ { print $3 }'); do
		cp "$lib" "$sys/root$lib"
	done
	# LeakSanitizer stops the world with ptrace(2), which the unit's
	# @system-service filter refuses: allowed for this build only
	mkdir -p "$sys/root/etc/systemd/system/pgoffd.service.d"
	printf '[Service]\nSystemCallFilter=ptrace\n' \
		>"$sys/root/etc/systemd/system/pgoffd.service.d/sanitizer.conf"
fi
in_root() { chroot "$sys/root" "$@"; }
in_root systemd-sysusers >/dev/null 2>&1
in_root systemctl enable pgoffd >/dev/null 2>&1
in_root useradd -m -G pgoff alice
in_root groupadd others
ct_boot
leader=$CT_LEADER state=$CT_STATE
note "the container's systemd: $state; $(inside systemctl --version | head -n1)"
check "the container boots with systemd as PID 1" [ -n "$leader" -a "$(cat "/proc/${leader:-0}/comm" 2>/dev/null)" = systemd ]
active=$(inside systemctl is-active pgoffd)
if [ "$active" != active ]; then
	inside systemctl status pgoffd --no-pager -l 2>&1 | sed 's/^/# /' | tail -20
fi
check "systemctl: pgoffd.service is active ($active)" [ "$active" = active ]
check "... running as pgoffd with no capabilities left" \
	bash -c "[ \"\$(nsenter -t $leader -a -r -w systemctl show -p MainPID --value pgoffd | xargs -I{} nsenter -t $leader -a -r -w awk '\$1 == \"CapEff:\" { print \$2 }' /proc/{}/status)\" = 0000000000000000 ]"
check "... serving /run/pgoff/pgoffd.sock in a root-only directory" \
	bash -c "[ \"\$(nsenter -t $leader -a -r -w stat -c '%U %G %a' /run/pgoff)\" = 'root pgoff 750' ]"

# the container's PostgreSQL 15 (Debian's package: a cluster made and
# started the Debian way): found by the unit's prober, listed to a member
# of pgoff, and its lock wait seen, with the pids of the container's own
# pid namespace, where pgoffd runs too
inside pg_createcluster 15 main >"$sys/pg.out" 2>&1 &&
	inside systemctl start postgresql@15-main >>"$sys/pg.out" 2>&1 ||
	sed 's/^/# /' "$sys/pg.out"
pg_answers() { inside su postgres -c "psql -X -q -At -c 'select 1'" >/dev/null 2>&1; }
# alice's ps (kept in ps.json): true once it lists the container's cluster
ps_lists_cluster() {
	inside su alice -c "pgoffctl ps --json" >"$sys/ps.json" 2>"$sys/ps.err"
	jq -e '.clusters[]? | select(.port == 5432)' "$sys/ps.json" >/dev/null 2>&1
}
wait_for 30 pg_answers
wait_for 30 ps_lists_cluster
note "ps in the container: $(jq -c '.clusters' "$sys/ps.json" 2>/dev/null | head -c 300) $(head -c 200 "$sys/ps.err")"
check "a member of pgoff lists the container's PostgreSQL 15 cluster through the unit's socket" \
	jqe '[.clusters[] | select(.port == 5432 and (.version | startswith("15")))] | length == 1' "$sys/ps.json"
ct_check_lock_wait alice "$sys"
# PostgreSQL's wait probes, attached at start within the unit's
# capabilities (no CAP_SYS_ADMIN: a uprobe_multi link needs none)
inside su alice -c "pgoffctl status --json" >"$sys/status.json" 2>&1
note "usdt_binaries: $(jq -c .usdt_binaries "$sys/status.json" 2>/dev/null | head -c 300)"
check "under the unit, pgoffd probed /usr/lib/postgresql/15/bin/postgres's wait probes" \
	jqe '.usdt_binaries[] | select(.path == "/usr/lib/postgresql/15/bin/postgres") | .probed and .sites == 8' "$sys/status.json"
# the on-CPU sampler's perf events, within the unit's system call filter
check "under the unit, pgoffd samples every CPU for a running backend's wait ($(jq .on_cpu_sample_cpus "$sys/status.json" 2>/dev/null) of $(nproc) CPUs)" \
	jqe ".on_cpu_sample_cpus == $(nproc) and .on_cpu_sample_us == 10000" "$sys/status.json" ||
	inside journalctl -u pgoffd --no-pager | grep -i 'sampler\|perf' | tail -n 5 | sed 's/^/# /'

# systemctl reload: a changed group applies
inside sh -c 'mkdir -p /etc/pgoff && echo "group = others" > /etc/pgoff/pgoffd.conf'
inside systemctl reload pgoffd >"$sys/reload.out" 2>&1 ||
	{ sed 's/^/# /' "$sys/reload.out"; inside journalctl -u pgoffd --no-pager | tail -n 20 | sed 's/^/# /'; }
alice_refused() { ! inside su alice -c "pgoffctl status" >/dev/null 2>&1; }
wait_for 5 alice_refused
inside su alice -c "pgoffctl status" >"$sys/status.out" 2>&1
rc=$?
note "after reload, alice: exit $rc, $(head -c 200 "$sys/status.out")"
check "systemctl reload applies a changed group: the member is refused (exit 3)" [ "$rc" = 3 ]
check "... and pgoffd is still active" [ "$(inside systemctl is-active pgoffd)" = active ]

# systemctl stop: nothing left loaded
check "with pgoffd running, its BPF programs are loaded" [ "$(our_progs)" -ge 5 ]
inside systemctl stop pgoffd
check "systemctl stop leaves no BPF program" progs_settle 0
check "... and the unit stopped cleanly (not failed)" \
	[ "$(inside systemctl is-failed pgoffd)" = inactive ]
ct_stop
check "the container powered off; the cached root is untouched" \
	[ ! -e "$PGOFF_ROOTS/bookworm-systemd/usr/sbin/pgoffd" ]
