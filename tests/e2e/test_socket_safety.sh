#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where root makes the socket, and who pgoffctl talks to: every local
# account is hostile. pgoffd refuses a socket directory that another user
# owns or could change (a sticky /tmp, a directory writable by others on
# the way, a symbolic link), creates its own root:GROUP 0750, and a
# socket an ordinary user serves is refused by pgoffctl before it sends
# a byte.
. "$(dirname "$0")/lib.sh"
e2e_require
e2e_setup

# refused SOCKET WORDS NAME: pgoffd started on SOCKET exits 1 before
# serving, and its log has WORDS
refused() {
	local sock=$1 words=$2 name=$3 rc
	timeout 60 "$PGOFFD" --socket "$sock" --group "$E2E_GROUP" --user "$E2E_BROKER_USER" \
		--record no \
		>/dev/null 2>"$E2E_DIR/refused.log"
	rc=$?
	if [ $rc = 1 ] && grep -qF -- "$words" "$E2E_DIR/refused.log"; then
		ok "$name"
	else
		not_ok "$name"
		note "exit $rc, want 1 and \"$words\"; the log:"
		sed 's/^/#   /' "$E2E_DIR/refused.log" | tail -5
	fi
}

# A file that root must never give away: its owner, group and mode.
victim=$E2E_DIR/victim
echo secret >"$victim" && chmod 0600 "$victim"
victim_was=$(stat -c '%U %G %a' "$victim")

refused /tmp/pgoff-e2e-squat.sock "socket directory: /tmp is writable by its group or others" \
	"--socket /tmp/x.sock (sticky, writable by all) is refused, naming /tmp"
check "... and nothing was made in /tmp" [ ! -e /tmp/pgoff-e2e-squat.sock ]

# a directory the outsider owns: they could swap the socket for a link
# between bind and chown (review finding 3)
evil=$E2E_DIR/evil
mkdir "$evil" && chown "$E2E_OUTSIDER" "$evil" && chmod 0755 "$evil"
ln -s "$victim" "$evil/pgoffd.sock"
refused "$evil/pgoffd.sock" "socket directory: $evil is owned by uid $(id -u "$E2E_OUTSIDER")" \
	"a socket directory owned by another user is refused, naming it"
now=$(stat -c '%U %G %a' "$victim")
check "... and the link's target is untouched ($now, was $victim_was)" [ "$now" = "$victim_was" ]
check "... and the link too" [ -L "$evil/pgoffd.sock" ]

# on the way: a directory others may write, not sticky
mkdir -m 0777 "$E2E_DIR/open"
refused "$E2E_DIR/open/run/pgoffd.sock" "$E2E_DIR/open is writable by its group or others (mode 0777) without the sticky bit" \
	"an ancestor writable by others is refused, naming it"
check "... and no directory was made in it" [ ! -e "$E2E_DIR/open/run" ]

# a symbolic link as the socket directory (even one root made)
mkdir -m 0750 "$E2E_DIR/real"
ln -s "$E2E_DIR/real" "$E2E_DIR/link"
refused "$E2E_DIR/link/pgoffd.sock" "$E2E_DIR/link is a symbolic link" \
	"a socket directory that is a symbolic link is refused, naming it"

# the real one: made root:GROUP 0750, with a sticky /tmp above it
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }
made=$(stat -c '%U %G %a' "$(dirname "$SOCK")")
check "pgoffd makes its socket directory root:$E2E_GROUP 0750 (saw $made)" \
	[ "$made" = "root $E2E_GROUP 750" ]
quiet() { "$@" >/dev/null; }
check "a member can use it" quiet member status --json

# pgoffctl: a socket an ordinary user serves, as a fake pgoffd would
fake=$E2E_DIR/outsider
mkdir "$fake" && chown "$E2E_OUTSIDER" "$fake" && chmod 0755 "$fake"
as "$E2E_OUTSIDER" /usr/bin/python3 - "$fake/pgoffd.sock" "$fake/got" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(4)
os.chmod(sys.argv[1], 0o777)	# anyone may connect, as a squatter wants
got = b""
s.settimeout(20)
try:
    c, _ = s.accept()
    c.settimeout(1)
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += d
    except socket.timeout:
        pass
except socket.timeout:
    pass
open(sys.argv[2], "wb").write(got)
PY
fake_job=$!
wait_for 5 [ -S "$fake/pgoffd.sock" ]
member --socket "$fake/pgoffd.sock" status >"$E2E_DIR/fake.out" 2>&1
rc=$?
wait "$fake_job"
note "pgoffctl: $(cat "$E2E_DIR/fake.out")"
check "pgoffctl refuses a socket served by uid $(id -u "$E2E_OUTSIDER") (exit 3, saw $rc)" \
	bash -c "[ $rc = 3 ] && grep -q 'served by uid $(id -u "$E2E_OUTSIDER") ($E2E_OUTSIDER' '$E2E_DIR/fake.out'"
check "... before sending it anything (it got $(stat -c %s "$fake/got" 2>/dev/null) bytes)" \
	[ -f "$fake/got" -a ! -s "$fake/got" ]
