#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# Round trips of a status request over one connection to pgoffd: prints
# "p50 p99 max" in milliseconds. usage: status_latency.py SOCKET COUNT
import json
import socket
import sys
import time

sock_path, count = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sock_path)
f = s.makefile("rwb", buffering=0)


def ask(req):
    f.write((json.dumps(req) + "\n").encode())
    line = f.readline()
    if not line:
        sys.exit("pgoffd closed the connection")
    return json.loads(line)


if not ask({"op": "hello", "id": 0, "version": 1}).get("ok"):
    sys.exit("hello refused")
times = []
for i in range(count):
    t0 = time.monotonic()
    r = ask({"op": "status", "id": i + 1})
    times.append((time.monotonic() - t0) * 1000)
    if not r.get("ok"):
        sys.exit("status refused: %s" % r)
    time.sleep(0.01)
times.sort()
print("%.2f %.2f %.2f" % (times[len(times) // 2],
                          times[min(len(times) - 1, int(len(times) * 0.99))],
                          times[-1]))
