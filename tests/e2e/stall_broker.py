#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# A pgoffd that never ends a replay: on a Unix socket at PATH it answers
# hello, accepts a subscription (with "replay": true) and then sends
# nothing more; any other request gets a bad_request error, at once.
# Run as root (pgoffctl and pgoff_exporter talk to a root listener
# only), for tests of what a client does while a replay goes on: the
# exporter's bound on profiles made at once, its replay deadline.
# usage: stall_broker.py PATH LOG   (stops on SIGTERM)
# LOG gets "ready" once it listens, then "subscribe" for each
# subscription.
import json
import os
import selectors
import socket
import sys

path, log = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o666)
srv.listen(64)
sel = selectors.DefaultSelector()
sel.register(srv, selectors.EVENT_READ)
bufs = {}


def say(what):
    with open(log, "a") as f:
        f.write(what + "\n")


say("ready")


def answer(conn, line):
    req = json.loads(line)
    rid = req.get("id", 0)
    op = req.get("op")
    if op == "hello":
        rep = {"id": rid, "ok": True, "version": 1, "broker": "stall_broker"}
    elif op == "subscribe":
        rep = {"id": rid, "ok": True, "subscription": 1,
               "min_duration_ns": 1000000, "query": False, "replay": True}
        say("subscribe")
    else:
        rep = {"id": rid, "ok": False,
               "error": {"code": "bad_request", "message": "stall_broker"}}
    conn.sendall((json.dumps(rep) + "\n").encode())


while True:
    for key, _ in sel.select():
        if key.fileobj is srv:
            conn, _ = srv.accept()
            bufs[conn] = b""
            sel.register(conn, selectors.EVENT_READ)
            continue
        conn = key.fileobj
        data = conn.recv(65536)
        if not data:
            sel.unregister(conn)
            conn.close()
            del bufs[conn]
            continue
        bufs[conn] += data
        while b"\n" in bufs[conn]:
            line, bufs[conn] = bufs[conn].split(b"\n", 1)
            answer(conn, line)
