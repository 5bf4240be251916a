#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The test roots the end-to-end tests use (roots.sh), built ahead of
# them: tests/run.sh starts this in the background when make test
# begins, so that a fresh machine builds them two at a time while the
# code is built and the unit tests and fuzzers run, not one after
# another in the middle of the e2e tests. In the order the tests want
# them: systemd's first (test_deb, the fifth e2e test), then the majors'
# (test_runtime_names and test_versions, near the end); a test that
# wants one still being built waits on its lock. Cached roots are only
# looked at. Prints what it did as TAP comments; a root it could not
# build is tried again, and its failure reported, by the test that
# needs it.
#
# The majors' roots are built at the lowest CPU priority (nice 19): they
# are wanted only at the end, and on a 2-CPU machine two debootstraps
# beside the build slowed it and the unit tests by a third; they take
# the CPU the e2e tests leave idle (most of them wait on PostgreSQL).
# systemd's, wanted a minute into the e2e tests, is built at once.
set -u
. "$(dirname "$0")/roots.sh"

ensure() {	# a major (pg_root_ensure) or "systemd"
	if [ "$1" = systemd ]; then
		systemd_root_ensure
	else
		pg_root_ensure "$1"
	fi
}

t0=$SECONDS
for r in systemd $PG_ROOT_MAJORS; do
	([ "$r" = systemd ] || renice --priority 19 -p "$BASHPID" >/dev/null
	 ensure "$r" 2>&1 || echo "# root for $r: not built here: its test will try") &
	while [ "$(jobs -rp | wc -l)" -ge 2 ]; do
		wait -n
	done
done
wait
echo "# test roots ready in $((SECONDS - t0)) s"
