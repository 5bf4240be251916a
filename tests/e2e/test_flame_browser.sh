#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The flame graph's script in a real browser (Debian's Chromium, headless,
# driven by Selenium: tests/e2e/flame_browser.py), on an SVG the real
# pgoffctl wrote from a real row-lock wait beside a sleep: the page opens
# from a file and loads nothing; a click zooms a frame to the full width
# and rescales its subtree; Reset zoom and a click on "all" undo it;
# hovering shows the frame's time and share; Search and Ctrl-F highlight
# what a regular expression matches and give its share, which must be the
# share computed from flame --folded over the same stored intervals.
. "$(dirname "$0")/lib.sh"
e2e_require
why=
[ -x /usr/bin/chromium ] || why="chromium"
[ -x /usr/bin/chromedriver ] || why="${why:+$why, }chromium-driver"
/usr/bin/python3 -c 'import selenium' 2>/dev/null || why="${why:+$why, }python3-selenium"
[ -z "$why" ] || tap_skip_file "the flame graph in a browser" "not installed: $why (make deps)"
e2e_setup

pg_start deadlock_timeout=10s || { not_ok "start PostgreSQL 15"; exit 1; }
sql -c "create table t(id int primary key, v int); insert into t values (1, 0);"
e2e_start_broker || { not_ok "start pgoffd"; exit 1; }

# One recording, read twice: the flight record between since and until
# (both past once the waits are over), as folded stacks and as the SVG.
since=$(date -u +%FT%T.%NZ)
sql -c "select pg_sleep(0.6)" >/dev/null &
sleep_job=$!
row_lock_wait "update t set v = 2 where id = 1"
wait "$sleep_job"
until=$(date -u +%FT%T.%NZ)
note "B ($B_PID) waited for the row lock; the window is $since .. $until"
replay() { member flame --since "$since" --until "$until" "$@"; }
# the record is written within 50 ms: until two replays agree, with B's wait
settled() {
	replay --folded >"$E2E_DIR/f1.txt" 2>>"$E2E_DIR/replay.err" &&
		grep -q '^Lock:transactionid;' "$E2E_DIR/f1.txt" &&
		replay --folded >"$E2E_DIR/f2.txt" 2>>"$E2E_DIR/replay.err" &&
		cmp -s "$E2E_DIR/f1.txt" "$E2E_DIR/f2.txt"
}
wait_for 10 settled ||
	note "replays: $(head -c 300 "$E2E_DIR/f1.txt") $(head -c 300 "$E2E_DIR/replay.err")"
replay --title "row lock and sleep" >"$E2E_DIR/flame.svg" 2>"$E2E_DIR/flame.err"
check "flame --since --until writes the SVG (exit 0)" [ "$?" = 0 ] ||
	note "flame said: $(head -c 300 "$E2E_DIR/flame.err")"
replay --folded >"$E2E_DIR/folded.txt" 2>>"$E2E_DIR/replay.err"
check "flame --folded over the same window, before and after the SVG, is the same" \
	cmp -s "$E2E_DIR/f2.txt" "$E2E_DIR/folded.txt" ||
	note "diff: $(diff "$E2E_DIR/f2.txt" "$E2E_DIR/folded.txt" | head -c 400)"
sed 's/^/# folded: /' "$E2E_DIR/folded.txt" | cut -c1-160 | head -4
check "the SVG is well-formed XML (xmllint)" xmllint --noout "$E2E_DIR/flame.svg"
urls=$(grep -oE '[a-z]+://[^" ]*|href|@import' "$E2E_DIR/flame.svg" | sort -u | tr '\n' ' ')
check "the SVG names no URL but the SVG namespace, links and imports nothing" \
	[ "$urls" = "http://www.w3.org/2000/svg " ] || note "it has: $urls"
scripts=$(grep -c '<script' "$E2E_DIR/flame.svg")
check "one script, inline" [ "$scripts" = 1 ] || note "<script: $scripts times"
note "SVG: $(wc -c <"$E2E_DIR/flame.svg") bytes, $(grep -c '<g data-us=' "$E2E_DIR/flame.svg") frames"

# share PATTERN: the percentage of off-CPU time whose stack has a frame
# matching PATTERN (an ERE), each stack once, from the folded stacks
# (the weight is the last field; names may have spaces); with "twice",
# as if each matching frame counted on its own
share() {
	awk -v re="$1" -v twice="${2:-}" '{
		w = $NF; path = $0; sub(/ [0-9]+$/, "", path)
		n = split(path, fr, ";"); hits = 0
		for (i = 1; i <= n; i++) if (fr[i] ~ re) hits++
		if (hits && twice == "") hits = 1
		tot += w; m += w * hits
	} END { if (tot) printf "%.4f", 100 * m / tot; else print -1 }' "$E2E_DIR/folded.txt"
}
lock_s=$(awk '/^Lock:transactionid;/ { us += $NF } END { printf "%.6f", us / 1e6 }' "$E2E_DIR/folded.txt")

profile=$(mktemp -d "$E2E_DIR/chromium.XXXXXX")
timeout 120 /usr/bin/python3 "$E2E_TOP/tests/e2e/flame_browser.py" "$E2E_DIR/flame.svg" \
	Lock:transactionid transactionid '[Ll]ock' "$profile" \
	>"$E2E_DIR/seen.json" 2>"$E2E_DIR/browser.err"
rc=$?
S=$E2E_DIR/seen.json
check "Chromium opened the SVG from a file and the driver finished (exit 0)" \
	jqe '.loaded and (.error | not)' "$S" ||
	note "exit $rc: $(head -c 600 "$S") $(tail -c 600 "$E2E_DIR/browser.err")"
seen() { jq -c "$1" "$S" 2>/dev/null | head -c 600; }
check "the script ran (it shows the controls), loaded nothing, and logged no error" \
	jqe '.controls_display == null and .resources == [] and .console == []' "$S" ||
	note "controls: $(seen .controls_display), loaded: $(seen .resources), console: $(seen .console)"

# zoom
check "a click on Lock:transactionid zooms it to the full width" \
	jqe '.zoomed.x == 10 and (.zoomed.w - .full | fabs) < 0.01 and .zoomed.shown and
		.before.w < .full - 1' "$S" ||
	note "before $(seen .before), zoomed $(seen .zoomed), full $(seen .full)"
check "... its subtree rescaled: each frame as wide as its share of it" \
	jqe '.subtree >= 3 and .subtree_wrong == []' "$S" ||
	note "subtree $(seen .subtree), wrong: $(seen .subtree_wrong)"
check "... its ancestor \"all\" stays at the full width, dimmed; the rest is hidden" \
	jqe '.all_zoomed.shown and .all_zoomed.cls == "a" and (.all_zoomed.w - .full | fabs) < 0.01 and
		.shown_outside == [] and .hidden > 0' "$S" ||
	note "all $(seen .all_zoomed), shown outside: $(seen .shown_outside), hidden $(seen .hidden)"
check "... and its label has room for its whole name" \
	jqe '.zoom_label == "Lock:transactionid"' "$S" || note "label: $(seen .zoom_label)"
check "Reset zoom puts every frame back as the writer drew it (and greys out)" \
	jqe '.unchanged_after_reset and .after_reset == .before and
		(.reset_class_zoomed | test("off") | not) and (.reset_class_after | test("off"))' "$S" ||
	note "after reset $(seen .after_reset), classes $(seen .reset_class_zoomed) $(seen .reset_class_after)"
check "zoomed again, a click on the root (\"all\") does the same" \
	jqe '(.zoomed_again.w - .full | fabs) < 0.01 and .unchanged_after_root' "$S" ||
	note "zoomed again $(seen .zoomed_again), unchanged after the root: $(seen .unchanged_after_root)"

# hover: the frame's time (as folded stacks have it) and share
hover_ok() {
	jq -r '[.details, .title] | .[]' "$S" | awk -v s="$lock_s" '
		{ if (!match($0, /^Lock:transactionid \([0-9.]+ s, [0-9.]+%\)$/)) exit 1
		  sub(/^Lock:transactionid \(/, ""); split($0, a, /[ ,%]+/); sec[NR] = a[1]; pct[NR] = a[3] }
		END { d = sec[1] - s; p = pct[1] - pct[2]
		      exit !(NR == 2 && d < 0.0006 && d > -0.0006 && p < 0.011 && p > -0.011) }'
}
check "hovering Lock:transactionid shows its time (as folded: $lock_s s) and share" hover_ok ||
	note "details $(seen .details), title $(seen .title)"

# search
want1=$(share transactionid)
check "Search asks for a regular expression" jqe '.prompt | test("regular expression")' "$S" ||
	note "prompt: $(seen .prompt)"
check "Search 'transactionid' highlights the frames it matches" \
	jqe '(.highlighted1 | length) > 0 and (.highlighted1 | all(test("transactionid")))' "$S" ||
	note "highlighted: $(seen .highlighted1)"
got1=$(jq -r '.matched1' "$S" | sed -n 's/^Matched: \([0-9.]*\) %$/\1/p')
check "... and shows their share, $(jq -r .matched1 "$S"), as folded stacks do ($want1 %)" \
	between "$(awk -v a="${got1:--100}" -v b="$want1" 'BEGIN { print a - b }')" -0.0501 0.0501
want2=$(share '[Ll]ock')
twice2=$(share '[Ll]ock' twice)
check "Ctrl-F '[Ll]ock' (a regular expression) highlights Lock:transactionid and 'wait: lock' above it" \
	jqe '.highlighted2 | map(select(. == "Lock:transactionid" or . == "wait: lock")) | length == 2' "$S" ||
	note "highlighted: $(seen .highlighted2)"
got2=$(jq -r '.matched2' "$S" | sed -n 's/^Matched: \([0-9.]*\) %$/\1/p')
check "... and counts a stack once (folded: $want2 %, $twice2 % counting each frame): $(jq -r .matched2 "$S")" \
	between "$(awk -v a="${got2:--100}" -v b="$want2" 'BEGIN { print a - b }')" -0.0501 0.0501
check "Escape clears the search" jqe '.matched_escape == "" and .highlighted_escape == 0' "$S" ||
	note "after Escape: $(seen .matched_escape), $(seen .highlighted_escape) highlighted"

exit "$TAP_FAILED"
