#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# e2e-timeout: 900 (it may build its test roots with debootstrap first)
# e2e-no-sanitizer-pass: the packages hold the plain build, whatever the pass
# The Debian packages (make deb) as an admin uses them, in a booted
# Debian 12 container (roots.sh): installed with apt from the files, no
# network; the service runs as pgoffd with no capabilities, a user the
# admin adds to pgoff sees the container's PostgreSQL and its lock wait;
# pgoff_exporter is installed but neither enabled nor started, and once
# configured as its README.Debian says (a bcrypt hash), started, it
# serves with the password and refuses without; an upgrade restarts both
# units under a running pgoffctl watch --follow; remove stops them and
# keeps the settings; purge leaves nothing of pgoff behind.
. "$(dirname "$0")/lib.sh"
e2e_require
. "$E2E_TOP/tests/e2e/roots.sh"
E2E_DIR=$(mktemp -d /tmp/pgoff-e2e.XXXXXX)
trap 'ct_stop; rm -rf "$E2E_DIR"' EXIT

for tool in dpkg-buildpackage dh lintian systemd-nspawn; do
	command -v "$tool" >/dev/null || { not_ok "$tool is installed (make deps)"; exit 1; }
done

# --- the packages: always the plain build (make deb builds its own, from
# a copy of the tree), rebuilt only when a file changed (make e2e-test
# T=deb after an edit)
debs=$E2E_TOP/build/deb
t0=$SECONDS
make -s -C "$E2E_TOP" deb >"$E2E_DIR/deb.log" 2>&1
rc=$?
note "make deb: $((SECONDS - t0)) s; the packages hold the plain build, whatever $PGOFF_BUILD is"
[ $rc = 0 ] || tail -n 30 "$E2E_DIR/deb.log" | sed 's/^/# /'
check "make deb builds the packages, lintian finds no error or warning" [ $rc = 0 ]
version=$(sed -n '1s/^pgoff (\([^)]*\)).*/\1/p' "$E2E_TOP/debian/changelog")
arch=$(dpkg --print-architecture)
pkgs=(pgoffd pgoffctl pgoff-exporter)
files=() infiles=()
for p in "${pkgs[@]}"; do
	f=$debs/${p}_${version}_$arch.deb
	[ -f "$f" ] || { not_ok "make deb made $f"; exit 1; }
	files+=("$f") infiles+=("/var/tmp/pgoff-debs/${f##*/}")
	note "$p: $(stat -c %s "$f") bytes, Installed-Size $(dpkg-deb -f "$f" Installed-Size) KiB"
done

# the upgrade: the same packages at a higher version (repacked; the unit
# restart is what is tested, not a changed binary)
up=$E2E_DIR/up
upfiles=()
for f in "${files[@]}"; do
	p=$(dpkg-deb -f "$f" Package)
	rm -rf "$up/x" && mkdir -p "$up" && dpkg-deb -R "$f" "$up/x" &&
		sed -i "s/^Version: .*/Version: $version+e2e1/" "$up/x/DEBIAN/control" &&
		dpkg-deb --root-owner-group -b "$up/x" "$up/${p}_$version+e2e1_$arch.deb" >/dev/null ||
		{ not_ok "repack $p at $version+e2e1"; exit 1; }
	upfiles+=("/var/tmp/pgoff-debs/up/${p}_$version+e2e1_$arch.deb")
done
rm -rf "$up/x"

# --- the container, with alice (not in pgoff) and the debs
systemd_root_ensure || { not_ok "a Debian 12 root with systemd"; exit 1; }
ct_mount "$E2E_DIR/ct" || { not_ok "an overlay of the root"; exit 1; }
mkdir -p "$CT_ROOT/var/tmp/pgoff-debs/up"
cp "${files[@]}" "$CT_ROOT/var/tmp/pgoff-debs/"
cp "$up"/*.deb "$CT_ROOT/var/tmp/pgoff-debs/up/"
chroot "$CT_ROOT" useradd -m alice
ct_boot
check "the container boots with systemd ($CT_STATE)" \
	[ -n "$CT_LEADER" -a \( "$CT_STATE" = running -o "$CT_STATE" = degraded \) ]
[ -n "$CT_LEADER" ] || exit 1
inside pg_createcluster 15 main >"$E2E_DIR/pg.out" 2>&1 &&
	inside systemctl start postgresql@15-main >>"$E2E_DIR/pg.out" 2>&1 ||
	sed 's/^/# /' "$E2E_DIR/pg.out"

# what is there before: files (but for what changes by itself), users
snapshot() {	# NAME
	inside find / -xdev \( -path /proc -o -path /sys -o -path /run/user -o -path /var/log \
		-o -path /var/cache/apt -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /tmp \
		-o -path /var/lib/postgresql \) -prune -o -print | sort >"$E2E_DIR/$1.files"
	inside find /run -xdev -path /run/user -prune -o -print | sort >"$E2E_DIR/$1.run"
	inside cat /etc/passwd /etc/group /etc/shadow /etc/gshadow >"$E2E_DIR/$1.users"
}
snapshot before
check "no BPF program of pgoffd is loaded before" [ "$(our_progs)" = 0 ]

# --- install: apt from the files
inside env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	"${infiles[@]}" >"$E2E_DIR/install.out" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 20 "$E2E_DIR/install.out" | sed 's/^/# /'
# apt-get's --no-download loses a local file's path (apt 2.6): what it
# fetched is checked instead
fetched=$(grep -E '^Get:[0-9]+ https?:' "$E2E_DIR/install.out")
[ -z "$fetched" ] || echo "$fetched" | sed 's/^/# /'
check "apt-get install of the three packages, nothing downloaded" [ $rc = 0 -a -z "$fetched" ]
check "... it says how to let a user in: usermod -aG pgoff USER" \
	grep -q 'usermod -aG pgoff USER' "$E2E_DIR/install.out"
active=$(inside systemctl is-active pgoffd)
[ "$active" = active ] || inside systemctl status pgoffd --no-pager -l 2>&1 | tail -n 20 | sed 's/^/# /'
check "pgoffd.service is enabled and active ($active)" \
	[ "$active" = active -a "$(inside systemctl is-enabled pgoffd)" = enabled ]
pid=$(inside systemctl show -p MainPID --value pgoffd)
seen=$(inside awk '$1 == "Uid:" { uid = $2 } $1 == "CapEff:" { cap = $2 } END { print uid, cap }' \
	"/proc/${pid:-0}/status")
check "... runs as pgoffd with no capabilities (uid, CapEff: $seen)" \
	[ "$seen" = "$(inside id -u pgoffd) 0000000000000000" ]
check "... serves /run/pgoff (root pgoff 750), the pgoff group has no member" \
	[ "$(inside stat -c '%U %G %a' /run/pgoff)" = "root pgoff 750" -a \
	  -z "$(inside getent group pgoff | cut -d: -f4)" ]
ex="$(inside systemctl is-enabled pgoff_exporter 2>&1) $(inside systemctl is-active pgoff_exporter 2>&1)"
[ "$ex" = "disabled inactive" ] || inside systemctl status pgoff_exporter --no-pager -l 2>&1 | tail -n 20 | sed 's/^/# /'
check "pgoff_exporter.service is installed, neither enabled nor active ($ex), as pgoff-exporter" \
	[ "$ex" = "disabled inactive" -a "$(inside systemctl show -p User --value pgoff_exporter)" = pgoff-exporter ]
check "... apt said why and where to read how" \
	bash -c "grep -q 'pgoff-exporter: not started: it needs a web config with basic_auth_users; see /usr/share/doc/pgoff-exporter/README.Debian' \
		'$E2E_DIR/install.out' && nsenter -t $CT_LEADER -a -r -w test -s /usr/share/doc/pgoff-exporter/README.Debian"
check "pgoffd's BPF programs are loaded" [ "$(our_progs)" -ge 5 ]

# --- the exporter, as README.Debian says: a web config with a bcrypt
# hash, the options, enable --now; on a port of its own (the container
# shares the host's network: curl runs in its network namespace anyway)
exp_port=
for _ in $(seq 50); do
	exp_port=$((20000 + RANDOM % 20000))
	ss -Hltn "sport = :$exp_port" | grep -q . || break
done
ct_curl() { nsenter -t "$CT_LEADER" -n curl -s --max-time 10 "$@"; }
exp_hash=$(/usr/bin/python3 -W ignore -c 'import crypt; print(crypt.crypt("deb pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))')
inside sh -c "printf 'basic_auth_users:\n  prometheus: %s\n' '$exp_hash' |
		install -D -m 0640 -g pgoff-exporter /dev/stdin /etc/pgoff/exporter-web.yml &&
	echo 'PGOFF_EXPORTER_ARGS=\"--web.config.file=/etc/pgoff/exporter-web.yml --web.listen-address=127.0.0.1:$exp_port\"' \
		>/etc/default/pgoff_exporter &&
	systemctl enable --now pgoff_exporter" >"$E2E_DIR/exporter.out" 2>&1
serves() {
	[ "$(ct_curl -o "$E2E_DIR/deb.prom" -w '%{http_code}' -u 'prometheus:deb pw' \
		"http://127.0.0.1:$exp_port/metrics")" = 200 ] && grep -qx 'pgoff_broker_up 1' "$E2E_DIR/deb.prom"
}
wait_for 10 serves
ex="$(inside systemctl is-enabled pgoff_exporter 2>&1) $(inside systemctl is-active pgoff_exporter 2>&1)"
if [ "$ex" != "enabled active" ]; then
	sed 's/^/# /' "$E2E_DIR/exporter.out"
	inside journalctl -u pgoff_exporter --no-pager -n 20 | sed 's/^/# journal: /'
fi
check "configured and started, pgoff_exporter.service is enabled and active ($ex)" [ "$ex" = "enabled active" ]
check "... it serves the metrics with the password (pgoff_broker_up 1: in the pgoff group)" serves
code=$(ct_curl -o "$E2E_DIR/deb-noauth.out" -w '%{http_code}' "http://127.0.0.1:$exp_port/metrics")
code2=$(ct_curl -o /dev/null -w '%{http_code}' -u 'prometheus:deb px' "http://127.0.0.1:$exp_port/metrics")
check "... and refuses without it (HTTP $code) or with a wrong one (HTTP $code2)" \
	bash -c "[ '$code' = 401 -a '$code2' = 401 ] && ! grep -q pgoff_ '$E2E_DIR/deb-noauth.out'"
ex_pid=$(inside systemctl show -p MainPID --value pgoff_exporter)

# --- a user the admin adds to pgoff
inside usermod -aG pgoff alice
inside su alice -c "pgoffctl status" >"$E2E_DIR/status.out" 2>&1
rc=$?
[ $rc = 0 ] || sed 's/^/# /' "$E2E_DIR/status.out"
check "alice, added to pgoff, runs pgoffctl status" [ $rc = 0 ]
# alice's ps (kept in ps.json): true once it lists the container's cluster
ps_lists_cluster() {
	inside su alice -c "pgoffctl ps --json" >"$E2E_DIR/ps.json" 2>"$E2E_DIR/ps.err"
	jq -e '.clusters[]? | select(.port == 5432)' "$E2E_DIR/ps.json" >/dev/null 2>&1
}
wait_for 30 ps_lists_cluster
note "ps: $(jq -c '.clusters' "$E2E_DIR/ps.json" 2>/dev/null | head -c 300) $(head -c 200 "$E2E_DIR/ps.err")"
check "... and pgoffctl ps lists the container's PostgreSQL 15 cluster" \
	jqe '[.clusters[] | select(.port == 5432 and (.version | startswith("15")))] | length == 1' \
	"$E2E_DIR/ps.json"
ct_check_lock_wait alice "$E2E_DIR"

# --- upgrade under a running watch --follow
subs() { inside pgoffctl status --json 2>/dev/null | jq -r '.subscribers // empty'; }
base=$(subs)
subscribed() { [ "$(subs)" = $((${base:-0} + 1)) ]; }
# setpriv execs pgoffctl (no su in between, which a lost terminal stops
# with nsenter still holding this test's descriptors): nsenter's child is it
# nsenter itself, not the inside function, is the job: $! is nsenter
gid=$(inside id -g alice)
nsenter -t "$CT_LEADER" -a -r -w setpriv --reuid=alice --regid="$gid" --init-groups -- \
	pgoffctl watch --follow --json </dev/null >"$E2E_DIR/watch.out" 2>"$E2E_DIR/watch.err" &
watch_job=$!
wait_for 10 subscribed
check "alice's watch --follow is subscribed (subscribers: ${base:-?} then $(subs))" \
	[ "$(subs)" = $((${base:-0} + 1)) ]
inside env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${upfiles[@]}" \
	>"$E2E_DIR/upgrade.out" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 20 "$E2E_DIR/upgrade.out" | sed 's/^/# /'
newpid=$(inside systemctl show -p MainPID --value pgoffd)
check "apt-get install of $version+e2e1 upgrades ($(inside dpkg-query -W -f '${Version}' pgoffd))" \
	[ $rc = 0 -a "$(inside dpkg-query -W -f '${Version}' pgoffd)" = "$version+e2e1" ]
check "... and restarts pgoffd.service (MainPID $pid, then $newpid), active" \
	[ "${newpid:-0}" != 0 -a "$newpid" != "$pid" -a "$(inside systemctl is-active pgoffd)" = active ]
ex_newpid=$(inside systemctl show -p MainPID --value pgoff_exporter)
ex_up=no
wait_for 10 serves && ex_up=yes
check "... and pgoff_exporter.service, which ran (MainPID $ex_pid, then $ex_newpid), serving again ($ex_up)" \
	[ "${ex_newpid:-0}" != 0 -a "$ex_newpid" != "$ex_pid" -a "$ex_up" = yes ]
resubscribed() { grep -q 'subscribed again' "$E2E_DIR/watch.err" && subscribed; }
wait_for 10 resubscribed
note "watch's stderr: $(tr '\n' '|' <"$E2E_DIR/watch.err" | head -c 400)"
check "... the watch said it lost pgoffd and reconnected, and is subscribed again" \
	bash -c "grep -q 'broker gone, reconnecting' '$E2E_DIR/watch.err' &&
		grep -q 'reconnected to pgoffd and subscribed again' '$E2E_DIR/watch.err' &&
		[ '$(subs)' = $((${base:-0} + 1)) ]"
check "... and keeps running" kill -0 "$watch_job"
# alice's pgoffctl, on the host: nsenter's child
wpid=$(pgrep -x -P "$watch_job" pgoffctl)
kill "${wpid:-$watch_job}"
wait_for 5 gone "$watch_job"
kill -KILL "$watch_job" 2>/dev/null
wait "$watch_job" 2>/dev/null

# --- remove: stopped, settings kept
inside sh -c 'mkdir -p /etc/pgoff /var/lib/pgoff && echo "min-floor = 1ms" >/etc/pgoff/pgoffd.conf &&
	echo kept >/var/lib/pgoff/note'
inside env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q pgoff-exporter pgoffctl pgoffd \
	>"$E2E_DIR/remove.out" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 20 "$E2E_DIR/remove.out" | sed 's/^/# /'
check "apt-get remove of the three packages" [ $rc = 0 ]
state=$(inside systemctl is-active pgoffd)
if [ "$state" != inactive ]; then
	inside systemctl status pgoffd --no-pager 2>&1 | head -n 5 | sed 's/^/# /'
	inside journalctl -u pgoffd --no-pager -n 30 | sed 's/^/# journal: /'
fi
check "after remove pgoffd is stopped ($state)" [ "$state" = inactive ]
ex=$(inside systemctl is-active pgoff_exporter)
check "... and pgoff_exporter ($ex)" [ "$ex" = inactive -o "$ex" = unknown ]
check "... no BPF program of pgoffd is left" progs_settle 0
check "... /etc/pgoff and /var/lib/pgoff are kept" \
	inside test -f /etc/pgoff/pgoffd.conf -a -f /var/lib/pgoff/note

# --- purge: nothing left
inside env DEBIAN_FRONTEND=noninteractive apt-get purge -y -q pgoff-exporter pgoffctl pgoffd \
	>"$E2E_DIR/purge.out" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 20 "$E2E_DIR/purge.out" | sed 's/^/# /'
check "apt-get purge of the three packages" [ $rc = 0 ]
snapshot after
comm -13 "$E2E_DIR/before.files" "$E2E_DIR/after.files" >"$E2E_DIR/added"
comm -23 "$E2E_DIR/before.files" "$E2E_DIR/after.files" >"$E2E_DIR/gone"
grep -i pgoff "$E2E_DIR/after.run" >>"$E2E_DIR/added"
[ -s "$E2E_DIR/added" ] && sed 's/^/# left: /' "$E2E_DIR/added" | head -n 20
[ -s "$E2E_DIR/gone" ] && sed 's/^/# gone: /' "$E2E_DIR/gone" | head -n 20
check "after purge no file is left or gone (/ and /run, as before install)" \
	[ ! -s "$E2E_DIR/added" -a ! -s "$E2E_DIR/gone" ]
diff "$E2E_DIR/before.users" "$E2E_DIR/after.users" | sed 's/^/# /'
check "... users and groups are as before (passwd, group, shadow, gshadow)" \
	cmp -s "$E2E_DIR/before.users" "$E2E_DIR/after.users"
check "... no pgoff unit is known to systemd" \
	bash -c "[ -z \"\$(nsenter -t $CT_LEADER -a -r -w systemctl list-unit-files --no-legend 'pgoff*')\" ]"
check "... no BPF program of pgoffd is loaded" progs_settle 0

ct_stop
check "the container powered off; the cached root is untouched" \
	[ ! -e "$PGOFF_ROOTS/bookworm-systemd/usr/sbin/pgoffd" ]
note "test_deb: $SECONDS s"
