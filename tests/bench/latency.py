#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Read pgoffctl --json lines; print: events, seconds, p50 and p99 latency
(ms) from the event's end ("time", wall clock) to its arrival here.
argv[1]: seconds of warm-up not counted (while the other clients connect).
Lines are only stamped as they come; they are parsed at the end, so that
this reader's own work does not add to the latency it measures."""
import datetime
import json
import sys
import time

arrived = []
counted_from = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 0)
for line in sys.stdin:
    now = time.time()
    if now >= counted_from:
        arrived.append((now, line))
lat = []
for now, line in arrived:
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("type") != "offcpu":
        continue
    end = datetime.datetime.strptime(ev["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    end = end.replace(tzinfo=datetime.timezone.utc).timestamp()
    lat.append((now - end) * 1000)
if not lat:
    print("0 1 0 0")
else:
    span = arrived[-1][0] - arrived[0][0]
    lat.sort()
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print(len(lat), max(span, 0.001), round(pick(0.5), 2), round(pick(0.99), 2))
