#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Run each libFuzzer target: first over the corpus in the repo (every
# input that ever mattered must still pass), then for SECONDS of new
# inputs. New corpus units go to a temp dir, crashes next to the binary.
# Targets run side by side, one a CPU (FUZZ_JOBS, default nproc: a
# libFuzzer run is one thread); their lines are printed in order.
# usage: tests/fuzz/run.sh SECONDS TARGET...
set -u
secs=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/pgoff-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT

# fuzz_one TARGET: its two TAP lines
fuzz_one() {
	local target=$1 name kind corpus dict runs
	name=$(basename "$target")
	kind=${name#fuzz_}
	corpus=$here/corpus/$kind
	dict=
	[ -f "$here/$kind.dict" ] && dict=-dict=$here/$kind.dict
	if "$target" -runs=0 $dict -artifact_prefix="$work/" "$corpus" >"$work/$name.replay" 2>&1; then
		echo "ok - $name: the $(ls "$corpus" | wc -l) corpus inputs replay cleanly"
	else
		echo "not ok - $name: a corpus input fails"
		tail -n 30 "$work/$name.replay" | sed 's/^/# /'
	fi
	mkdir -p "$work/$kind"
	if "$target" -max_total_time="$secs" -max_len=8192 -timeout=10 $dict \
		-artifact_prefix="$(dirname "$target")/$name-" -print_final_stats=1 \
		"$work/$kind" "$corpus" >"$work/$name.log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log")
		echo "ok - $name: ${runs:-?} inputs in ${secs}s, no crash, leak or UB"
	else
		echo "not ok - $name: found a failing input (kept as $(dirname "$target")/$name-*)"
		grep -E "ERROR|SUMMARY|runtime error" "$work/$name.log" | head -n 5 | sed 's/^/# /'
	fi
}

max_jobs=${FUZZ_JOBS:-$(nproc)}
for target in "$@"; do
	while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do
		wait -n
	done
	fuzz_one "$target" >"$work/$(basename "$target").tap" &
done
wait
for target in "$@"; do
	cat "$work/$(basename "$target").tap"
done
