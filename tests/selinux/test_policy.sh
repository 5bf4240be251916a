#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The SELinux module, checked offline against a real base policy: build
# selinux/pgoffd.pp with `make selinux`; link it with Debian's
# selinux-policy-default (downloaded and unpacked in a temp dir, never
# installed; SELinux need not be enabled) and expand that to a kernel
# policy, which also checks the base policy's neverallow rules; then ask
# setools what the policy allows: required rules present, forbidden ones
# absent, file contexts valid.
#
# Output: TAP-style lines and the no-skip policy of tests/tap.sh; exits 1
# if any failed.
#
# SELINUX_BASE_DEB=path/to/selinux-policy-default_*.deb uses that package
# instead of downloading one. KEEP=1 keeps the temp dir (policy.33).

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$top/tests/selinux
. "$top/tests/tap.sh"

tools=(make m4 checkmodule semodule_package semodule_link semodule_expand
       semodule_unpackage sesearch seinfo sechecker setfiles bunzip2 dpkg-deb)
missing=
for t in "${tools[@]}"; do
	command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
[ -f /usr/share/selinux/devel/Makefile ] ||
	missing="$missing /usr/share/selinux/devel/Makefile"
[ -n "${SELINUX_BASE_DEB:-}" ] || command -v apt-get >/dev/null 2>&1 ||
	missing="$missing apt-get"
[ -z "$missing" ] ||
	tap_skip_file "SELinux policy tools present" "missing:$missing (make deps installs them)"

tmp=$(mktemp -d /tmp/pgoff-selinux.XXXXXX)
if [ "${KEEP:-}" = 1 ]; then
	note "keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
started=$(date +%s.%N)

# --- build ---------------------------------------------------------------
if make -s --no-print-directory -C "$top" BUILD="$tmp/build" selinux >"$tmp/build.log" 2>&1 &&
   [ -s "$tmp/build/selinux/pgoffd.pp" ]; then
	ok "make selinux builds pgoffd.pp ($(stat -c %s "$tmp/build/selinux/pgoffd.pp") bytes)"
else
	sed 's/^/# /' "$tmp/build.log"
	not_ok "make selinux builds pgoffd.pp"
	exit 1
fi

# A confined client granted the socket through pgoffd_stream_connect():
# built beside pgoffd.te/.if (the devel Makefile reads the interfaces of
# the local modules it finds, by their .te).
mkdir -p "$tmp/client"
cp "$top"/selinux/pgoffd.{te,if,fc} "$here/pgoffctltest.te" "$tmp/client/"
if make -s -C "$tmp/client" -f /usr/share/selinux/devel/Makefile NAME= \
	pgoffctltest.pp >"$tmp/client.log" 2>&1; then
	ok "a module calling pgoffd_stream_connect() compiles"
else
	sed 's/^/# /' "$tmp/client.log"
	not_ok "a module calling pgoffd_stream_connect() compiles"
	exit 1
fi

# --- the base policy -----------------------------------------------------
mkdir -p "$tmp/deb" "$tmp/mods"
deb=${SELINUX_BASE_DEB:-}
if [ -z "$deb" ]; then
	get() { (cd "$tmp/deb" && apt-get -q -o APT::Sandbox::User=root \
		download selinux-policy-default >"$tmp/apt.log" 2>&1); }
	# a machine whose package lists are missing or stale: update once
	get || { apt-get -q -o DPkg::Lock::Timeout=600 update >>"$tmp/apt.log" 2>&1 && get; }
	for f in "$tmp"/deb/selinux-policy-default_*.deb; do
		[ -f "$f" ] && deb=$f
	done
fi
if [ -n "$deb" ] && dpkg-deb -x "$deb" "$tmp/root"; then
	ok "selinux-policy-default unpacked ($(dpkg-deb -f "$deb" Version), not installed)"
else
	sed 's/^/# /' "$tmp/apt.log" 2>/dev/null
	not_ok "selinux-policy-default downloaded and unpacked"
	exit 1
fi

# base + the modules whose types the assertions name: PostgreSQL's, the
# staff role, user_t (unprivuser), unconfined_t and httpd_t (apache).
mods=(base postgresql staff unprivuser unconfined apache)
for m in "${mods[@]}"; do
	bunzip2 -c "$tmp/root/usr/share/selinux/default/$m.pp.bz2" >"$tmp/mods/$m.pp" ||
		{ not_ok "module $m.pp in selinux-policy-default"; exit 1; }
done
paths=()
for m in "${mods[@]}"; do paths+=("$tmp/mods/$m.pp"); done
if semodule_link -o "$tmp/linked.pp" "${paths[@]}" "$tmp/build/selinux/pgoffd.pp" \
	"$tmp/client/pgoffctltest.pp" >"$tmp/link.log" 2>&1; then
	ok "pgoffd.pp links with Debian's base policy (${mods[*]})"
else
	grep -v 'loading package' "$tmp/link.log" | sed 's/^/# /'
	not_ok "pgoffd.pp links with Debian's base policy"
	exit 1
fi
# without -a: the base policy's neverallow rules are checked here
if semodule_expand "$tmp/linked.pp" "$tmp/policy.33" >"$tmp/expand.log" 2>&1; then
	ok "the linked policy expands to a kernel policy (neverallow rules hold)"
else
	sed 's/^/# /' "$tmp/expand.log"
	not_ok "the linked policy expands to a kernel policy"
	exit 1
fi
pol=$tmp/policy.33
note "$(seinfo "$pol" | grep -E 'Policy Version|Allow:' | tr -s ' ' | tr '\n' ' ')"
note "pgoffd_t: $(sesearch "$pol" -A -s pgoffd_t -ds | wc -l) allow rules of its own"

# --- assertions ----------------------------------------------------------
q() { sesearch "$pol" "$@" 2>&1; }

# has DESC PERMS SESEARCH-ARGS...: every one of PERMS (space-separated)
# is granted by some unconditional rule the query returns.
has() {
	local desc=$1 perms=$2; shift 2
	local out p miss=
	out=$(q -A "$@" -p "${perms// /,}" | grep -v ']:')
	for p in $perms; do
		grep -Eq "[{ ]${p}[ };]" <<<"$out" || miss="$miss $p"
	done
	if [ -z "$miss" ]; then
		ok "$desc"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$desc (missing:$miss)"
	fi
}

# none DESC SESEARCH-ARGS...: the query returns no rule at all.
none() {
	local desc=$1 out; shift
	out=$(q -A "$@")
	if [ -z "$out" ]; then
		ok "$desc"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$desc"
	fi
}

# What pgoffd needs to load and attach its programs.
has "pgoffd_t: bpf map_create map_read map_write prog_load prog_run" \
	"map_create map_read map_write prog_load prog_run" -s pgoffd_t -t pgoffd_t -c bpf
has "pgoffd_t: capability2 bpf perfmon (and syslog for kallsyms addresses)" \
	"bpf perfmon syslog" -s pgoffd_t -t pgoffd_t -c capability2
has "pgoffd_t: capabilities of the drop and the prober (setuid setgid setpcap chown sys_ptrace dac_read_search)" \
	"setuid setgid setpcap chown sys_ptrace dac_read_search" -s pgoffd_t -t pgoffd_t -c capability
has "pgoffd_t: capset at the privilege drop (process setcap), fork for the prober and its workers, their memory limit, killing one that overruns" \
	"setcap fork setrlimit sigkill" -s pgoffd_t -t pgoffd_t -c process
has "pgoffd_t: the pipe from a prober worker (fifo_file read write)" \
	"read write" -s pgoffd_t -t pgoffd_t -c fifo_file
has "pgoffd_t: mmap of the BPF ring buffer (anon_inodefs file read write map)" \
	"read write map" -s pgoffd_t -t anon_inodefs_t -c file
has "pgoffd_t: reads /proc/kallsyms (system_map_t)" "open read" -s pgoffd_t -t system_map_t -c file
has "pgoffd_t: reads /sys/kernel/btf/vmlinux (sysfs_t)" "open read" -s pgoffd_t -t sysfs_t -c file
has "pgoffd_t: lists /proc to find PostgreSQL" "read search" -s pgoffd_t -t proc_t -c dir
has "pgoffd_t: reads /proc/PID files of postgresql_t (stat, cmdline, maps)" \
	"open read" -s pgoffd_t -t postgresql_t -c file
has "pgoffd_t: reads /proc/PID/exe and cwd of postgresql_t" "read" -s pgoffd_t -t postgresql_t -c lnk_file
has "pgoffd_t: reads the postgres binary (postgresql_exec_t)" \
	"open read" -s pgoffd_t -t postgresql_exec_t -c file
has "pgoffd_t: reads /etc/pgoff (pgoffd_conf_t)" "open read" -s pgoffd_t -t pgoffd_conf_t -c file
has "pgoffd_t: listens on its socket" "create bind listen accept" -s pgoffd_t -t pgoffd_t -c unix_stream_socket
has "pgoffd_t: creates and removes its socket in /run/pgoff" \
	"create unlink setattr" -s pgoffd_t -t pgoffd_runtime_t -c sock_file
has "pgoffd_t: creates /run/pgoff" "create setattr add_name" -s pgoffd_t -t pgoffd_runtime_t -c dir
has "pgoffd_t: owns, locks and fills /var/lib/pgoff" "create setattr add_name remove_name lock" \
	-s pgoffd_t -t pgoffd_var_lib_t -c dir
has "pgoffd_t: writes, cuts and removes its record segments" \
	"create open read append write setattr unlink" -s pgoffd_t -t pgoffd_var_lib_t -c file

if q -T -s init_t -t pgoffd_exec_t -c process | grep -q 'type_transition init_t pgoffd_exec_t:process pgoffd_t;'; then
	ok "init_t enters pgoffd_t through pgoffd_exec_t"
else
	not_ok "init_t enters pgoffd_t through pgoffd_exec_t"
fi
out=$(q -T -s pgoffd_t -t var_run_t)
if grep -q 'var_run_t:dir pgoffd_runtime_t' <<<"$out" &&
   grep -q 'var_run_t:sock_file pgoffd_runtime_t' <<<"$out"; then
	ok "what pgoffd creates in /run is pgoffd_runtime_t (dir, sock_file)"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "what pgoffd creates in /run is pgoffd_runtime_t"
fi

# Who may connect.
for d in staff_t sysadm_t unconfined_t pgoffctltest_t; do
	has "$d may connect to pgoffd (connectto)" connectto -s $d -t pgoffd_t -c unix_stream_socket
	has "$d may write the socket file" write -s $d -t pgoffd_runtime_t -c sock_file
done
none "user_t (no pgoffd_stream_connect) may not connect to pgoffd" \
	-s user_t -t pgoffd_t -c unix_stream_socket -p connectto
none "httpd_t may not connect to pgoffd" -s httpd_t -t pgoffd_t -c unix_stream_socket -p connectto

# What pgoffd must never get.
none "pgoffd_t has no capability sys_admin" -s pgoffd_t -t pgoffd_t -c capability -p sys_admin
has "pgoffd_t may open its own CPU clock events, CPU-wide, and set their BPF program (the on-CPU sampler)" \
	"open cpu kernel write" -s pgoffd_t -t pgoffd_t -c perf_event
none "... and has no other perf_event permission (reading counters, tracepoint events)" \
	-s pgoffd_t -c perf_event -p read,tracepoint
none "... nor on events of another domain" -s pgoffd_t -t '^(?!pgoffd_t$)' -rt -c perf_event
out=$(q -A -s pgoffd_t -c process -p ptrace | grep -v ' pgoffd_t:process ')
if [ -z "$out" ]; then
	ok "pgoffd_t has no process ptrace on any other domain"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "pgoffd_t has no process ptrace on any other domain"
fi
none "pgoffd_t writes, creates, removes or relabels no postgresql_* file or directory" \
	-s pgoffd_t -t '^postgresql_' -rt -c file,dir,lnk_file,sock_file,fifo_file \
	-p write,append,create,unlink,rename,setattr,add_name,remove_name,link,rmdir,relabelfrom,relabelto

# Reading beyond postgresql_t only behind booleans that are off by default.
out=$(q -A -s pgoffd_t -t postgresql_db_t -c file -p read)
bad=$(grep -v '\[ pgoffd_read_postmaster_pid \]:True' <<<"$out" | grep -v '^$')
if [ -n "$out" ] && [ -z "$bad" ] &&
   seinfo "$pol" -b pgoffd_read_postmaster_pid -x | grep -q 'pgoffd_read_postmaster_pid false;'; then
	ok "postgresql_db_t (postmaster.pid) is read only under pgoffd_read_postmaster_pid, off by default"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "postgresql_db_t is read only under pgoffd_read_postmaster_pid, off by default"
fi
out=$(q -A -s pgoffd_t -t user_t -c file,dir,lnk_file)
bad=$(grep -v '\[ pgoffd_trace_all_domains \]:True' <<<"$out" | grep -v '^$')
if [ -z "$bad" ] &&
   seinfo "$pol" -b pgoffd_trace_all_domains -x | grep -q 'pgoffd_trace_all_domains false;'; then
	ok "other domains' /proc (user_t) is read only under pgoffd_trace_all_domains, off by default"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	not_ok "other domains' /proc is read only under pgoffd_trace_all_domains, off by default"
fi

# The same negatives as attribute-aware assertions, with expected sources.
if sechecker "$here/checks.ini" "$pol" >"$tmp/sechecker.log" 2>&1; then
	ok "sechecker: $(grep -c '^\[' "$here/checks.ini") assertions (connectto sources, ptrace, sys_admin, data writes)"
else
	sed 's/^/# /' "$tmp/sechecker.log"
	not_ok "sechecker tests/selinux/checks.ini"
fi

# --- file contexts ---------------------------------------------------------
# The .fc inside the package against the policy; it is m4 output, with
# the support macros' comments and blank lines, dropped here.
if semodule_unpackage "$tmp/build/selinux/pgoffd.pp" "$tmp/unpacked.mod" "$tmp/raw.fc" &&
   grep -Ev '^[[:space:]]*(#|$)' "$tmp/raw.fc" >"$tmp/pgoffd.fc" &&
   [ "$(wc -l <"$tmp/pgoffd.fc")" -ge 5 ] &&
   setfiles -c "$pol" "$tmp/pgoffd.fc" >"$tmp/setfiles.log" 2>&1; then
	ok "file contexts validate (setfiles -c, $(wc -l <"$tmp/pgoffd.fc") entries)"
else
	sed 's/^/# /' "$tmp/setfiles.log" 2>/dev/null
	not_ok "file contexts validate (setfiles -c)"
fi
for path in /usr/sbin/pgoffd:pgoffd_exec_t /usr/local/sbin/pgoffd:pgoffd_exec_t \
	/etc/pgoff/pgoffd.conf:pgoffd_conf_t /run/pgoff/pgoffd.sock:pgoffd_runtime_t \
	/var/lib/pgoff/0000000000000001.seg:pgoffd_var_lib_t; do
	p=${path%%:*} t=${path##*:}
	# the first regex that matches, as matchpathcon would (last one wins
	# in file_contexts order; pgoffd.fc has one entry for each path)
	got=$(awk -v p="$p" '{ re = "^" $1 "$"; if (p ~ re) t = $NF } END { print t }' "$tmp/pgoffd.fc")
	if [[ $got == *":$t:"* ]]; then
		ok "$p is labelled $t"
	else
		not_ok "$p is labelled $t (got '$got')"
	fi
done

note "took $(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
exit "$TAP_FAILED"
