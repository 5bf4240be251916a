#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn bench.sh's raw lines into the markdown results table."""
import statistics
import sys
from benchfmt import machine, spread

raw, fanout, rounds, secs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
tps, progs = {}, {}
for line in open(raw):
    w, r, c, t, prog, ns, runs, cpu = line.split()
    if prog == "-":
        tps.setdefault(w, {}).setdefault(c, {})[int(r)] = float(t or 0)
    else:
        progs.setdefault((w, c, prog), []).append((float(ns), float(runs), float(cpu)))

print("# pgoff benchmark results\n")
print("Machine: %s. %s rounds of %s s per configuration and workload, "
      "order rotated each round; pgbench scale 10, -c 8 -j 2. Produced by `make bench`.\n"
      % (machine(), rounds, secs))
names = {"none": "no tracer", "empty": "empty programs on the same hooks",
         "untraced": "pgoffd, 1 watch, pgbench on an untraced cluster",
         "idle": "pgoffd, no subscriber", "one": "pgoffd, 1 watch --view intervals --min 1ms",
         "noprobes": "the same with --usdt no (no wait probes)",
         "sixteen": "pgoffd, 16 such watchers",
         "ustack_pid": "pgoffd, that watch and 1 --user-stack --pid (the postmaster)",
         "ustack": "pgoffd, 1 watch --view intervals --min 1ms --user-stack",
         "offcputime": "libbpf-tools offcputime",
         "lookups": "lookups of prev and next only, by structure",
         "floor": "floor: a lookup a side, the clock, 3 reads of the backend "
                  "(wait event pointer and value, query pointer)",
         "floor_noquery": "floor without the debug_query_string read",
         "floor_lookup": "floor without any read (lookups and clock)"}
for c in ("untraced", "idle", "one"):
    names["base_" + c] = "base pgoffd: " + names[c].split(", ", 1)[1]
# the hooks, by the names bench.sh sees (pgoffd's tp_btf, raw_tp twins,
# the empty and floor programs, offcputime's)
HOOKS = {"sched_switch": ("sched_switch_btf", "sched_switch_raw", "sched_sw_empty", "sched_sw_floor",
                          "sched_switch"),
         "sched_waking": ("sched_waking_btf", "sched_waking_raw", "sched_wk_empty", "sched_wk_floor")}
for w in tps:
    print("## pgbench %s\n" % ("select-only (-S)" if w == "select" else "TPC-B-like"))
    print("| configuration | TPS median (IQR, min, max) | TPS ratio to no tracer, same round: median (IQR, min, max) |")
    print("|---|---|---|")
    base = tps[w].get("none", {})
    for c in names:
        if c not in tps[w]:
            continue
        runs = tps[w][c]
        ratios = [runs[r] / base[r] for r in runs if base.get(r)]
        # without a no-tracer run (CONFIGS without none) there is no ratio
        print("| %s | %s | %s |" % (names[c], spread(list(runs.values())),
                                    "1" if c == "none" else
                                    spread(ratios, "{:.3f}") if ratios else "-"))
    # per round: ns per run of each hook, by configuration
    per_round = {}
    for line in open(raw):
        ww, r, c, t, prog, ns, _, _ = line.split()
        for hook, progs_of in HOOKS.items():
            if ww == w and prog in progs_of:
                per_round.setdefault((c, hook), {})[int(r)] = float(ns)
    floor = [c for c in ("empty", "untraced", "base_untraced", "floor_lookup", "floor_noquery", "floor", "idle", "base_idle", "one", "base_one",
                         "sixteen", "ustack_pid", "ustack", "offcputime") if (c, "sched_switch") in per_round]
    if floor:
        off = per_round.get(("offcputime", "sched_switch"), {})
        # pgoff beside the floor program (floor.bpf.c), round by round
        least = {hook: per_round.get(("floor", hook), {}) for hook in HOOKS}
        to_floor = any(least.values())
        print("\nThe floor, ns per run (median of the rounds, IQR):\n")
        print("| configuration | sched_switch | sched_waking | sched_switch / offcputime's, same round |"
              + (" sched_switch / floor's, same round | sched_waking / floor's |" if to_floor else ""))
        print("|---|---|---|---|" + ("---|---|" if to_floor else ""))
        for c in floor:
            sw = per_round[(c, "sched_switch")]
            wk = per_round.get((c, "sched_waking"), {})
            rel = [sw[r] / off[r] for r in sw if off.get(r)]
            cells = [names[c], spread(list(sw.values())), spread(list(wk.values())) if wk else "-",
                     spread(rel, "{:.3f}") if rel and c != "offcputime" else "-"]
            if to_floor:
                for hook, xs in (("sched_switch", sw), ("sched_waking", wk)):
                    rs = [xs[r] / least[hook][r] for r in xs if least[hook].get(r)]
                    # not for the programs below it, nor another cluster's
                    cells.append(spread(rs, "{:.3f}") if rs and c not in (
                        "floor", "empty", "untraced", "base_untraced", "offcputime") else "-")
            print("| " + " | ".join(cells) + " |")
    # PostgreSQL's wait probes: pg_usdt per hit, and TPS with / without
    usdt = progs.get((w, "one", "pg_usdt"), [])
    if usdt or ("one" in tps[w] and "noprobes" in tps[w]):
        one, nop = tps[w].get("one", {}), tps[w].get("noprobes", {})
        ratios = [one[r] / nop[r] for r in one if nop.get(r)]
        print("\nPostgreSQL's wait probes (pgoffd with one watcher, with and without "
              "`--usdt`), median (IQR, min, max) of the rounds:\n")
        print("| figure | value |")
        print("|---|---|")
        if usdt:
            print("| pg_usdt BPF time per probe hit, ns (bpf_stats; the uprobe trap not included) | %s |"
                  % spread([u[0] for u in usdt]))
            print("| probe hits per second (all four probes, traced processes or not) | %s |"
                  % spread([u[1] for u in usdt]))
        if ratios:
            print("| TPS ratio with / without the probes, same round | %s |" % spread(ratios, "{:.3f}"))
    # lookups: each program's time over the empty one's, same round
    lk = {}
    for line in open(raw):
        ww, r, c, t, prog, ns, _, _ = line.split()
        if ww == w and c == "lookups" and prog.startswith("sched_lk_"):
            lk.setdefault(prog, {})[int(r)] = float(ns)
    empty = lk.get("sched_lk_empty", {})
    what = {"sched_lk_task": "task-local storage (PostgreSQL's tasks have some, no other task has any)",
            "sched_lk_hash": "hash by pid (PostgreSQL's tasks in it)",
            "sched_lk_slot": "slot array by pid, then the hash where the slot is taken"}
    if empty and any(p in lk for p in what):
        print("\nFinding prev's and next's state on sched_switch, ns per switch over an empty "
              "program's in the same round (median, IQR, min, max); the empty program: %s ns:\n"
              % spread(list(empty.values())))
        print("| structure | ns for both lookups |")
        print("|---|---|")
        for p, d in what.items():
            xs = [lk[p][r] - empty[r] for r in lk.get(p, {}) if r in empty]
            if xs:
                print("| %s | %s |" % (d, spread(xs)))
    paired = [c for c in ("untraced", "idle", "one") if "base_" + c in tps[w]]
    if paired:
        print("\nPaired with the base build (BASE_PGOFFD), ratio this / base of the same round: "
              "median (IQR, min, max), %d rounds:\n" % len(tps[w]["base_" + paired[0]]))
        print("| configuration | sched_switch ns | sched_waking ns | TPS |")
        print("|---|---|---|---|")
        for c in paired:
            cells = []
            for hook in HOOKS:
                a, b = per_round.get((c, hook), {}), per_round.get(("base_" + c, hook), {})
                rs = [a[r] / b[r] for r in a if b.get(r)]
                cells.append(spread(rs, "{:.3f}") if rs else "-")
            a, b = tps[w][c], tps[w]["base_" + c]
            rs = [a[r] / b[r] for r in a if b.get(r)]
            cells.append(spread(rs, "{:.3f}") if rs else "-")
            print("| %s | %s |" % (names[c], " | ".join(cells)))
    print("\n| configuration | BPF program | ns per run: median (IQR, min, max) | runs/s (median) | % of one CPU (median) |")
    print("|---|---|---|---|---|")
    for (ww, c, prog), xs in sorted(progs.items()):
        if ww != w or not xs:
            continue
        print("| %s | %s | %s | %.0f | %.2f |" % (names[c], prog, spread([x[0] for x in xs]),
              statistics.median(x[1] for x in xs), statistics.median(x[2] for x in xs)))
    print()
fanout_rows = [line.split() for line in open(fanout) if line.strip()]
if fanout_rows:
    print("## Broker fan-out (pg_sleep load, `watch --view intervals --min 100us` clients)\n")
    print("Delivered = kernel events x clients - client queue drops, over 6 s after 2 s "
          "of warm-up (the clients starting). Latency: event end (kernel timestamp) to the "
          "line read by one client, over the same window.\n")
    print("| clients | events/s from the kernel | events/s delivered (all clients) | broker CPU % | clients' CPU % (all) | broker RSS (kB) | latency p50 (ms) | latency p99 (ms) | dropped for slow clients |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in fanout_rows:
        print("| " + " | ".join(row) + " |")
