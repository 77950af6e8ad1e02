# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Python benchmarks share: a percentile and a free loopback port."""
import socket


def pct(v, p):
    """The p-th quantile (0..1) of v: the nearest sample, no interpolation."""
    s = sorted(v)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
