#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# While one connection's stats over the past (SECONDS back) is summed,
# another asks status every 5 ms: prints the stats request's time and the
# status replies' median and longest wait, in ms. A past window summed in
# one go would hold the status replies for its whole time.
# usage: past_latency.py SOCKET SECONDS
import json, socket, statistics, sys, time


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile("rb")
    s.sendall(b'{"op":"hello","version":1}\n')
    f.readline()
    return s, f


path, back = sys.argv[1], int(sys.argv[2])
ps, pf = connect(path)
ss, sf = connect(path)
since = time.time_ns() - back * 10**9
t0 = time.monotonic()
ps.sendall(b'{"op":"stats","by":"labels","id":1,"since_ns":%d}\n' % since)
ps.setblocking(False)
lat, buf = [], b""
while True:
    try:
        buf += ps.recv(1 << 20)
    except BlockingIOError:
        pass
    if buf.endswith(b"\n"):
        break
    t = time.monotonic()
    ss.sendall(b'{"op":"status","id":2}\n')
    sf.readline()
    lat.append((time.monotonic() - t) * 1000)
    time.sleep(0.005)
took = (time.monotonic() - t0) * 1000
reply = json.loads(buf)
print("%.1f %.2f %.2f %d %s" % (took, statistics.median(lat) if lat else 0,
                                max(lat) if lat else 0, len(lat), reply.get("seconds")))
