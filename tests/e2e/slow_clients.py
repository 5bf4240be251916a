#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# Slow HTTP clients, as a slowloris attack makes them: COUNT connections
# to HOST:PORT from the SOURCES addresses in turn (loopback: 127.0.0.2,
# ...), each sending a request line and then one byte of a header every
# EVERY seconds, never ending the header. It watches when the server
# closes each, for at most HOLD seconds (it ends when all are closed).
# usage: slow_clients.py HOST PORT COUNT SOURCES EVERY HOLD READY_FILE
# READY_FILE is written once every connection is open (or refused), so
# that a test knows they are held. At the end it prints one JSON line,
# by source address:
#   opened          connections tried
#   closed_s        when the server closed each (seconds after it was
#                   opened; 0: the connection failed), in order
#   open            still open after HOLD seconds
#   bytes_sent_max  header bytes trickled on the longest-lived one
import json
import select
import socket
import sys
import time

host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sources = sys.argv[4].split(",")
every, hold, ready_file = float(sys.argv[5]), float(sys.argv[6]), sys.argv[7]
TRICKLE = b"X-Slow: " + b"a" * 4000

conns = []  # dicts: sock, source, opened, closed (seconds, or None), sent
for i in range(count):
    src = sources[i % len(sources)]
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    c = {"sock": s, "source": src, "opened": time.monotonic(),
         "closed": None, "sent": 0}
    try:
        s.connect((host, port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: %s\r\n" % host.encode())
    except OSError:
        c["closed"] = 0.0
    s.setblocking(False)
    conns.append(c)
with open(ready_file, "w") as f:
    f.write("%d\n" % count)


def close(c):
    c["closed"] = time.monotonic() - c["opened"]
    c["sock"].close()


start = time.monotonic()
next_byte = start + every
while time.monotonic() - start < hold:
    live = [c for c in conns if c["closed"] is None]
    if not live:
        break
    wait = max(0.0, min(next_byte, start + hold) - time.monotonic())
    readable, _, _ = select.select([c["sock"] for c in live], [], [], wait)
    for c in live:
        if c["sock"] in readable:
            try:
                data = c["sock"].recv(4096)
            except OSError:
                data = b""
            if not data:  # the server ended it (or said something: 408)
                close(c)
    if time.monotonic() >= next_byte:
        next_byte += every
        for c in conns:
            if c["closed"] is not None:
                continue
            try:
                c["sock"].send(TRICKLE[c["sent"]:c["sent"] + 1])
                c["sent"] += 1
            except OSError:
                close(c)


out = {}
for src in sources:
    cs = [c for c in conns if c["source"] == src]
    out[src] = {
        "opened": len(cs),
        "closed_s": sorted(round(c["closed"], 2) for c in cs
                           if c["closed"] is not None),
        "open": sum(1 for c in cs if c["closed"] is None),
        "bytes_sent_max": max((c["sent"] for c in cs), default=0),
    }
print(json.dumps(out))
for c in conns:
    if c["closed"] is None:
        c["sock"].close()
