#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""stretch_store.py DIR EXT SECONDS: make the store of EXT (".seg" or
".agg") in DIR span SECONDS, ending now, by repeating the records it holds
(a short recording) with new seqs and wall-clock times, so that a query
over an hour can be timed from a minute of real load. The records' layout
is store.h's: a 32-byte header (magic, len, crc, reserved, seq, wall_ns,
little-endian) whose CRC-32 covers seq, wall_ns, len, flags when set, and
the payload (compressed when flags say so: kept as it is)."""
import os
import struct
import sys
import time
import zlib

HDR = struct.Struct("<IIIIQq")
MAGIC = 0x52464F50
SEG_MAX = 16 << 20


def read_records(path):
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos + HDR.size <= len(data):
        magic, ln, crc, flags, seq, wall = HDR.unpack_from(data, pos)
        if magic != MAGIC or pos + HDR.size + ln > len(data):
            break
        yield seq, wall, flags, data[pos + HDR.size:pos + HDR.size + ln]
        pos += HDR.size + ln


def frame(seq, wall, flags, payload):
    crc = zlib.crc32(struct.pack("<Qq", seq, wall))
    crc = zlib.crc32(struct.pack("<I", len(payload)), crc)
    if flags:   # (compressed) the CRC covers the flags when they are set
        crc = zlib.crc32(struct.pack("<I", flags), crc)
    crc = zlib.crc32(payload, crc)
    return HDR.pack(MAGIC, len(payload), crc, flags, seq, wall) + payload


def main():
    d, ext, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
    names = sorted(n for n in os.listdir(d) if n.endswith(ext))
    recs = [r for n in names for r in read_records(os.path.join(d, n))]
    if not recs:
        sys.exit("stretch_store: no records in %s/*%s" % (d, ext))
    span = max(recs[-1][1] - recs[0][1], 1)
    copies = max(1, int(secs * 1e9 / span + 0.999))
    for n in names:
        os.unlink(os.path.join(d, n))
    end = time.time_ns()
    start = end - copies * span
    seq, out, size, total = 0, None, 0, 0
    for k in range(copies):
        for _, wall, flags, payload in recs:
            seq += 1
            w = start + k * span + (wall - recs[0][1])
            if out is None or size > SEG_MAX:
                if out:
                    out.close()
                out = open(os.path.join(d, "%016x%s" % (seq, ext)), "wb")
                size = 0
            b = frame(seq, w, flags, payload)
            out.write(b)
            size += len(b)
            total += len(b)
    out.close()
    print("%d records, %d bytes, %.0f s" % (seq, total, copies * span / 1e9))


main()
