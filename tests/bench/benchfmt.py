# SPDX-License-Identifier: GPL-2.0-only
"""What the bench reports share: a figure's spread, the machine's name."""
import os
import platform
import statistics


def spread(xs, fmt="{:.0f}"):
    """Median (IQR, min, max) of xs, each formatted with fmt."""
    xs = sorted(xs)
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return (fmt + " (IQR " + fmt + "–" + fmt + ", min " + fmt + ", max " + fmt + ")").format(
        statistics.median(xs), q[0], q[2], xs[0], xs[-1])


def machine():
    """'CPU model, N vCPUs, kernel RELEASE'."""
    cpu = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return "%s, %d vCPUs, kernel %s" % (cpu, os.cpu_count(), platform.release())
