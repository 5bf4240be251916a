#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# test_exporter_docs.sh - pgoff_exporter's man page, alert rules and
# dashboard, without a server:
# - pgoff_exporter.1 renders with groff -man -ww and no warning, and has
#   every option that pgoff_exporter --help prints;
# - exporter/alerts.yml passes promtool check rules, and its unit tests
#   (exporter/alerts_test.yml) pass promtool test rules;
# - exporter/dashboard.json is JSON with a PromQL expression in every
#   panel (tests/e2e/test_exporter.sh runs them against Prometheus).
# With CI=true a missing tool is a failure, never a skip.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build_rel=${PGOFF_BUILD:-build}
case $build_rel in
/*) build=$build_rel ;;
*) build=$top/$build_rel ;;
esac
exporter=$build/pgoff_exporter
page=$top/man/pgoff_exporter.1
. "$top/tests/tap.sh"

if [ ! -x "$exporter" ]; then
	not_ok "$exporter is built (run make first)"
	exit 1
fi

if ! missing groff "pgoff_exporter.1 renders with groff -man -ww"; then
	out=$(groff -man -ww -z "$page" 2>&1)
	if [ -z "$out" ]; then
		ok "pgoff_exporter.1 renders with groff -man -ww, no warnings"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "pgoff_exporter.1 renders with groff -man -ww, no warnings"
	fi
fi

opts=$("$exporter" --help | grep -oE -- '--[a-z][a-z.-]*[a-z]' | sort -u)
# the page spells - as \- and = after an option name
plain=$(sed -e 's/\\-/-/g' -e 's/\\c$//' "$page")
undocumented=
for o in $opts; do
	grep -qF -- "$o" <<<"$plain" || undocumented+=" $o"
done
if [ -n "$opts" ] && [ -z "$undocumented" ]; then
	ok "every option of pgoff_exporter --help is in pgoff_exporter.1 ($(wc -w <<<"$opts"))"
else
	not_ok "every option of pgoff_exporter --help is in pgoff_exporter.1 (missing:${undocumented:- no options found})"
fi

if ! missing promtool "alert rules checked by promtool"; then
	out=$(cd "$top/exporter" && promtool check rules alerts.yml 2>&1)
	if [ $? = 0 ]; then
		ok "promtool check rules exporter/alerts.yml ($(grep -o '[0-9]* rules found' <<<"$out"))"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "promtool check rules exporter/alerts.yml"
	fi
	out=$(cd "$top/exporter" && promtool test rules alerts_test.yml 2>&1)
	rc=$?
	tested=$(grep -c 'alertname:' "$top/exporter/alerts_test.yml")
	if [ $rc = 0 ]; then
		ok "promtool test rules exporter/alerts_test.yml ($tested alert evaluations)"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "promtool test rules exporter/alerts_test.yml"
	fi
	# every alert of the file is tested
	untested=
	for a in $(sed -n 's/^ *- alert: *//p' "$top/exporter/alerts.yml"); do
		grep -q "alertname: $a\$" "$top/exporter/alerts_test.yml" || untested+=" $a"
	done
	if [ -z "$untested" ]; then
		ok "every alert in alerts.yml has a unit test"
	else
		not_ok "every alert in alerts.yml has a unit test (untested:$untested)"
	fi
fi

if ! missing jq "the dashboard is JSON with an expression in every panel"; then
	empty=$(jq -r '.panels[] | select(([.targets[]?.expr | select(. != null and . != "")] | length) == 0) | .title' \
		"$top/exporter/dashboard.json" 2>&1)
	if [ $? = 0 ] && [ -z "$empty" ] && jq -e '.panels | length > 0' "$top/exporter/dashboard.json" >/dev/null; then
		ok "exporter/dashboard.json is JSON, every panel has a PromQL expression"
	else
		not_ok "exporter/dashboard.json is JSON, every panel has a PromQL expression (${empty:-no panels})"
	fi
fi
exit "$TAP_FAILED"
