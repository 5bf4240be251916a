#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
# A FUSE file system that never answers: mounted (as root, allow_other,
# as a user may where /etc/fuse.conf has user_allow_other) at MOUNTPOINT,
# it never reads its device, so the kernel's first request (INIT) is
# never answered and every lookup, open or read below it waits, killably,
# until this process ends (its device closes: they fail with ENOTCONN).
# usage: fuse_stall.py MOUNTPOINT; prints "mounted" once it is.
import ctypes
import os
import signal
import sys

mnt = sys.argv[1]
fd = os.open("/dev/fuse", os.O_RDWR)
libc = ctypes.CDLL(None, use_errno=True)
opts = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % fd
if libc.mount(b"pgoffstall", mnt.encode(), b"fuse", 0, opts.encode()) != 0:
    sys.exit("mount fuse at %s: %s" % (mnt, os.strerror(ctypes.get_errno())))
print("mounted", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    signal.pause()
