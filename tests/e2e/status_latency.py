#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# Round trips of a status request over one connection to pgoffd, one after
# the other, for at least SECONDS and at least MIN_SAMPLES of them (1000:
# fewer would make the 99th percentile one of the slowest few).
# usage: status_latency.py SOCKET SECONDS [MIN_SAMPLES]
# Prints "samples p50 p99 max hello" in milliseconds (hello: from connect
# to the hello reply), then a line with the distribution and the slowest
# round trips, for a test to show when it fails.
#
# One request at a time: while pgoffd's loop is busy (its once-a-second
# scan) the probe waits in one round trip, so each such stall is one
# sample, and a p99 over 1000 samples shows what most requests see.
# A round trip that takes 10 s (pgoffctl's own limit) ends the probe.
import json
import socket
import sys
import time

sock_path, secs = sys.argv[1], float(sys.argv[2])
min_samples = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
t0 = time.monotonic()
s.connect(sock_path)
f = s.makefile("rwb", buffering=0)


def ask(req):
    f.write((json.dumps(req) + "\n").encode())
    try:
        line = f.readline()
    except socket.timeout:
        sys.exit("no reply to %s within 10 s" % req["op"])
    if not line:
        sys.exit("pgoffd closed the connection")
    return json.loads(line)


if not ask({"op": "hello", "id": 0, "version": 1}).get("ok"):
    sys.exit("hello refused")
hello = (time.monotonic() - t0) * 1000
start = time.monotonic()
samples = []	# (ms, seconds since start)
while len(samples) < min_samples or time.monotonic() - start < secs:
    t = time.monotonic()
    r = ask({"op": "status", "id": len(samples) + 1})
    samples.append(((time.monotonic() - t) * 1000, t - start))
    if not r.get("ok"):
        sys.exit("status refused: %s" % r)
    time.sleep(0.002)
ms = sorted(m for m, _ in samples)
print("%d %.2f %.2f %.2f %.2f" % (len(ms), ms[len(ms) // 2],
                                  ms[int(len(ms) * 0.99)], ms[-1], hello))
bounds = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
counts = [sum(1 for m in ms if lo <= m < hi)
          for lo, hi in zip([0] + bounds, bounds + [float("inf")])]
print("%d round trips in %.1f s; ms: %s; slowest (ms at s): %s" % (
    len(ms), time.monotonic() - start,
    ", ".join("<%d: %d" % (b, c) for b, c in zip(bounds, counts)) +
    ", more: %d" % counts[-1],
    " ".join("%.0f@%.1f" % x for x in sorted(samples, reverse=True)[:10])))
