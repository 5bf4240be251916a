#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_pprof_go.sh - pgoff's own profile.proto encoder (client/pprof.c)
# read by the reference decoder, go tool pprof (Debian's golang-go):
# - a known profile (build/tests/pprof_write fixed): -raw shows the
#   sample types off_cpu/nanoseconds and count/count, the period type,
#   time and duration, every sample with its values, locations and
#   labels (pid a number); -top the heaviest frame and the total; the
#   hostile names (control bytes, a megabyte of text) come out escaped
#   and bounded;
# - random profiles (pprof_write random SEED, 2000 samples each, hostile
#   names among the frames): go tool pprof reads each, with the number
#   of samples, intervals and nanoseconds the encoder was given.
# With CI=true a missing go is a failure, never a skip.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build_rel=${PGOFF_BUILD:-build}
case $build_rel in
/*) build=$build_rel ;;
*) build=$top/$build_rel ;;
esac
writer=$build/tests/pprof_write
. "$top/tests/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# go tool pprof keeps nothing, but wants a home and a cache
export HOME=$tmp GOCACHE=$tmp/gocache PPROF_TMPDIR=$tmp

if [ ! -x "$writer" ]; then
	not_ok "$writer is built (make $build_rel/tests/pprof_write)"
	exit 1
fi
if missing go "profiles read by go tool pprof"; then
	exit "$TAP_FAILED"
fi

"$writer" fixed "$tmp/fixed.pb.gz" 2>"$tmp/write.err"
check "pprof_write fixed writes a profile" [ $? = 0 ] || sed 's/^/# /' "$tmp/write.err"
check "... gzipped (gzip -t)" gzip -t "$tmp/fixed.pb.gz"
go tool pprof -raw "$tmp/fixed.pb.gz" >"$tmp/raw.txt" 2>"$tmp/raw.err"
rc=$?
check "go tool pprof -raw reads it (exit $rc)" [ $rc = 0 ] || sed 's/^/# /' "$tmp/raw.err"
raw_has() {
	grep -qE -- "$1" "$tmp/raw.txt" && return 0
	echo "# not in -raw: $1"; sed 's/^/#   /' "$tmp/raw.txt" | cut -c1-200 | head -40
	return 1
}
check "sample types: off_cpu/nanoseconds (the default), then count/count" \
	raw_has '^off_cpu/nanoseconds\[dflt\] +count/count$'
check "period type off_cpu nanoseconds, period 1" \
	bash -c "grep -qx 'PeriodType: off_cpu nanoseconds' '$tmp/raw.txt' && grep -qx 'Period: 1' '$tmp/raw.txt'"
check "time and duration" \
	bash -c "grep -qx 'Time: 2026-12-04 02:50:00 +0000 UTC' '$tmp/raw.txt' && grep -qx 'Duration: 15s' '$tmp/raw.txt'"
check "the two lock intervals of pid 4242 are one sample: 4 s, count 2, six frames" \
	raw_has '^ +4000000000 +2: 1 2 3 4 5 6 $'
check "pid 4243's own sample: 0.5 s, count 1" raw_has '^ +500000000 +1: 1 2 3 4 5 6 $'
check "labels in PostgreSQL's terms" \
	raw_has '^ +backend_type:\[client backend\] cluster:\[/var/lib/postgresql/15/main\] database:\[shop\] query_id:\[-6365623389011187613\] wait:\[lock\] wait_event:\[transactionid\] wait_event_type:\[Lock\]$'
check "pid is a numeric label" raw_has '^ +pid:\[4242\]$'
check "one location per frame, leaf first: do_epoll_wait .. Lock:transactionid" \
	bash -c "grep -qE '^ +1: 0x0 M=[0-9]+ do_epoll_wait :0' '$tmp/raw.txt' &&
		grep -qE '^ +6: 0x0 M=[0-9]+ Lock:transactionid :0' '$tmp/raw.txt'"
check "a label value's escape and bad byte are '?'" raw_has 'database:\[bad\?\]0;title\?\? db\]'
check "a frame's newline, escape and C1 control are '?'" raw_has ' evil\?\?\[2Jframe\?\? :0'
long=$(grep -oE 'M=[0-9]+ x+\.\. :0' "$tmp/raw.txt" | awk '{ print length($2) }')
check "a megabyte name is cut to 1024 bytes, ending '..' (got ${long:-none})" [ "${long:-0}" = 1024 ]
check "the comments are there, escaped" \
	bash -c "grep -qx 'Comment: a comment with ?\[31m escapes' '$tmp/raw.txt'"
go tool pprof -top "$tmp/fixed.pb.gz" >"$tmp/top.txt" 2>&1
sed 's/^/# top: /' "$tmp/top.txt" | head -12
check "-top: 4.75 s in all, do_epoll_wait the heaviest" \
	bash -c "grep -q 'Total samples = 4750ms' '$tmp/top.txt' &&
		grep -A1 'flat  flat%' '$tmp/top.txt' | tail -n1 | grep -qE '4750ms +100% .* do_epoll_wait$'"
go tool pprof -top -sample_index=count "$tmp/fixed.pb.gz" >"$tmp/count.txt" 2>&1
check "-top -sample_index=count: 4 intervals" grep -q 'Total samples = 4 *$' "$tmp/count.txt"
go tool pprof -top -tagfocus=wait_event=transactionid "$tmp/fixed.pb.gz" >"$tmp/focus.txt" 2>&1
check "-tagfocus on a label: the lock wait's 4.5 s" grep -q 'Showing nodes accounting for 4.50s, ' "$tmp/focus.txt"

# random profiles: what go reads is what was added
bad=
for seed in 1 2 3 4 5; do
	want=$("$writer" random "$seed" "$tmp/r$seed.pb.gz" 2>&1)
	got=$(go tool pprof -raw "$tmp/r$seed.pb.gz" 2>/dev/null | awk '
		/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $2 ~ /^[0-9]+:$/ { n++; t += $1; c += $2 }
		END { printf "samples %d intervals %d ns %.0f\n", n, c, t }')
	[ "$want" = "$got" ] || bad+=" seed $seed: wrote '$want', go read '$got';"
done
check "5 random profiles with hostile names: go reads the samples, intervals and ns written${bad:+ ($bad)}" \
	[ -z "$bad" ]
exit "$TAP_FAILED"
