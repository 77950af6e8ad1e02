# SPDX-License-Identifier: LGPL-2.1-or-later
"""Agent harness of the metrics test unit. Its behaviour is read from
MODE_FILE when it starts (the test changes it between episodes):

    idle      waits for the end of the episode
    oom       allocates past its memory limit (the OOM killer ends it)
    forkbomb  forks until its pids limit refuses, and keeps trying
"""
import os
import signal
import sys
import time

with open(sys.argv[1]) as f:
    mode = f.read().strip()
if mode == "oom":
    hog = []
    while True:
        hog.append(bytearray(8 << 20))
elif mode == "forkbomb":
    while True:
        try:
            if os.fork() == 0:
                while True:
                    signal.pause()
        except OSError:
            time.sleep(0.01)
while True:
    signal.pause()
