#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn usdt.sh's raw lines into its markdown results."""
import sys
from benchfmt import machine, spread

raw, rounds, secs, load0, load1 = sys.argv[1:6]
tps, hits, locks, side = {}, [], [], {}
for line in open(raw):
    f = line.split()
    if f[0] == "tps":
        tps.setdefault(f[2], {})[int(f[1])] = float(f[3])
        if f[2] == "probes":
            hits.append(float(f[4]))
    elif f[0] == "lock":
        locks.append(f[1:])
    elif f[0] == "side":
        # side RUN EVENT PG_WAIT_SAMPLING_S PGOFF_S [PGOFF_ON_CPU_S]
        side.setdefault(f[2], []).append(
            (float(f[3]), float(f[4]), float(f[5]) if len(f) > 5 else 0.0))


def ratios(a, b):
    return [tps[a][r] / tps[b][r] for r in tps[a] if r in tps.get(b, {}) and tps[b][r]]


print("# PostgreSQL's wait probes and pg_wait_sampling\n")
print("Machine: %s. %s paired rounds of %s s per configuration, "
      "order rotated each round; pgbench TPC-B scale 10, -c 8 -j 2; the cluster restarted "
      "before every run. Load average (1, 5, 15 min) before: %s; after: %s. "
      "Produced by `make bench` (tests/bench/usdt.sh).\n"
      % (machine(), rounds, secs, load0, load1))
names = {
    "none": "no tracer",
    "pws": "pg_wait_sampling loaded (10 ms sampling)",
    "probes": "pgoffd with the wait probes, 1 watch --view intervals --min 1ms",
    "noprobes": "the same with --usdt no",
}
print("| configuration | TPS median (IQR, min, max) | TPS ratio to no tracer, same round |")
print("|---|---|---|")
for c in ("none", "pws", "probes", "noprobes"):
    if c not in tps:
        continue
    r = ratios(c, "none")
    print("| %s | %s | %s |" % (names[c], spread(list(tps[c].values())),
                                "1" if c == "none" else spread(r, "{:.3f}")))
print()
r = ratios("probes", "noprobes")
if r:
    print("TPS ratio with / without the probes, same round: %s; probe hits per second "
          "in traced processes: %s.\n" % (spread(r, "{:.3f}"), spread(hits)))
if locks:
    print("A row-lock wait whose holder sleeps, then commits; pg_wait_sampling and pgoffd "
          "watch the same backend at the same time:\n")
    print("| run | the waiter's own clock, ms | pgoff episode | pg_wait_sampling: Lock samples x period = ms |")
    print("|---|---|---|---|")
    for run, span, boundary, ep_ms, n, period in locks:
        est = "%d x %s ms = %d" % (int(n), period, int(n) * int(period)) if period.isdigit() else n
        print("| %s | %s | %s, %s ms | %s |" % (run, span, boundary,
                                               "%.1f" % float(ep_ms) if ep_ms != "-" else "-", est))
if side:
    print("\nSide by side: %d runs of TPC-B, 4 clients; pg_wait_sampling's profile "
          "(samples x 10 ms) and pgoff's episodes of the same 4 backends, summed by wait "
          "event. pgoff counts a wait's time off the CPU and between its off-CPU "
          "intervals; a wait partly spent on the CPU inside its system call (ClientRead's "
          "epoll_wait, WALSync's fdatasync) is less in pgoff by that part.\n"
          % len(next(iter(side.values()))))
    print("| wait event | pg_wait_sampling s | pgoff s | pgoff / pg_wait_sampling | "
          "of pgoff's, on a CPU between intervals, s |")
    print("|---|---|---|---|---|")
    for ev in sorted(side):
        runs = side[ev]
        print("| %s | %s | %s | %s | %s |" % (
            ev, spread([r[0] for r in runs], "{:.2f}"), spread([r[1] for r in runs], "{:.2f}"),
            spread([r[1] / r[0] for r in runs if r[0]] or [0], "{:.2f}"),
            spread([r[2] for r in runs], "{:.2f}")))
