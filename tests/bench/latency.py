#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Read pgoffctl --json lines; print: events, seconds, p50 and p99 latency
(ms) from the event's end ("time", wall clock) to its arrival here."""
import datetime
import json
import sys
import time

lat, first, last = [], None, None
for line in sys.stdin:
    now = time.time()
    try:
        ev = json.loads(line)
    except ValueError:
        continue
    if ev.get("type") != "offcpu":
        continue
    end = datetime.datetime.strptime(ev["time"], "%Y-%m-%dT%H:%M:%S.%fZ")
    end = end.replace(tzinfo=datetime.timezone.utc).timestamp()
    lat.append((now - end) * 1000)
    first = first or now
    last = now
lat.sort()
if not lat:
    print("0 1 0 0")
else:
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]
    print(len(lat), max(last - first, 0.001), round(pick(0.5), 2), round(pick(0.99), 2))
