#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
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
systemd-analyze verify "$unit" >"$E2E_DIR/verify.out" 2>&1
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
