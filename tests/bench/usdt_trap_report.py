#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn usdt_trap.sh's raw lines into its markdown results."""
import re
import statistics
import sys
from benchfmt import machine, spread

raw, checks, usdt_results, rounds, iterations, runs, load0, load1 = sys.argv[1:9]
med, low = {}, {}
for line in open(raw):
    r, c, mn, md = line.split()
    med.setdefault(c, {})[int(r)] = float(md)
    low.setdefault(c, {})[int(r)] = float(mn)
ran = {}
for line in open(checks):
    c, cnt, ns = line.split()
    ran[c] = (int(cnt), int(ns))


def paired(a, b):
    """a - b, ns per call, in each round that has both."""
    return [med[a][r] - med[b][r] for r in med[a] if r in med.get(b, {})]


# pg_usdt's time per run for traced backends under pgbench, from bpf_stats
traced = None
for line in open(usdt_results):
    if line.startswith("| pg_usdt BPF time per probe hit"):
        traced = line.rstrip().rstrip("|").rsplit("|", 1)[1].strip()
        break
if traced is None:
    sys.exit("usdt_trap_report: %s has no 'pg_usdt BPF time per probe hit' line" % usdt_results)
traced_ns = float(re.match(r"[0-9.]+", traced).group(0))

print("# The cost of a wait probe hit: the uprobe trap and pg_usdt\n")
print("Machine: %s. %s paired rounds, order rotated each round; in each, %s runs of "
      "%s calls of a one-byte `nop` site (a function of its own, like a USDT probe's "
      "site) per configuration, CLOCK_MONOTONIC; a round's figure is the median of its "
      "runs. Load average (1, 5, 15 min) before: %s; after: %s. Produced by `make bench` "
      "(tests/bench/usdt_trap.sh).\n" % (machine(), rounds, runs, iterations, load0, load1))
names = {
    "none": "nothing attached",
    "empty": "an empty uprobe program (the trap alone)",
    "pg_usdt": "pgoff's pg_usdt, linked as pgoffd links it (uprobe_multi, cookie); "
               "the caller is not traced",
}
print("| configuration | ns per call: median of the rounds (IQR, min, max) | fastest run |")
print("|---|---|---|")
for c in ("none", "empty", "pg_usdt"):
    if c in med:
        print("| %s | %s | %.1f |" % (names[c], spread(list(med[c].values()), "{:.1f}"),
                                      min(low[c].values())))
print()
trap = paired("empty", "none")
untraced = paired("pg_usdt", "none")
print("Differences in the same round, ns per call: median (IQR, min, max):\n")
print("| figure | ns |")
print("|---|---|")
print("| the uprobe trap (empty − nothing) | %s |" % spread(trap))
print("| a hit in a process nobody traces (pg_usdt − nothing) | %s |" % spread(untraced))
print("| pg_usdt's untraced path as the caller sees it (pg_usdt − empty) | %s |"
      % spread(paired("pg_usdt", "empty")))
print()
cnt, ns = ran["pg_usdt"]
print("Checked before the rounds, with bpf_stats on: each program ran once per call "
      "(%s runs for %s calls); pg_usdt's own time per run there, untraced (one map "
      "lookup, then return): %.0f ns; the empty program's: %.0f ns. The timed rounds "
      "run with bpf_stats off, as pgoffd does.\n"
      % ("trap_empty %d, pg_usdt %d" % (ran["empty"][0], cnt), iterations,
         ns / cnt, ran["empty"][1] / ran["empty"][0]))
t = statistics.median(trap)
print("For a traced backend pg_usdt does the episode's work: its time per run under "
      "pgbench TPC-B, from bpf_stats in [%s](%s), is %s ns. A probe hit in a traced "
      "backend therefore costs about the trap plus that: **%.0f + %.0f = %.0f ns** "
      "(medians of different runs; bpf_stats' own clock reads are in the second)."
      % (usdt_results.split("/")[-1], usdt_results.split("/")[-1], traced,
         t, traced_ns, t + traced_ns))
