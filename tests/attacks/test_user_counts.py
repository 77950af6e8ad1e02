#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: exhaust the kernel's per-user counts from the agent zone.

The kernel counts inotify instances, POSIX message-queue bytes and its other
per-user resources for the owner of a user namespace too, against the
limits of the namespace above. When the root daemon owned every
container's user namespace, an env that took every inotify instance it
could get (128) or 800 KiB of message queues took them from root on the
whole host, and from every other unit, for as long as its episode lived.

Here unit A's env takes all it can of each; then host root, unit B's env,
and A's own next episode each take some of their own.

Must not happen: host root, B, or A's next episode refused (EMFILE) while
A's env holds its share.
"""
import ctypes
import errno
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

LIBC = ctypes.CDLL(None, use_errno=True)
IN_CLOEXEC = 0o2000000


class MqAttr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("pad", ctypes.c_long * 4)]


LIBC.mq_open.restype = ctypes.c_int
LIBC.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(MqAttr)]


def errname():
    e = ctypes.get_errno()
    return errno.errorcode.get(e, str(e))


def host_inotify():
    fd = LIBC.inotify_init1(IN_CLOEXEC)
    if fd < 0:
        return errname()
    os.close(fd)
    return "ok"


def host_mq():
    """An 80 KiB queue as host root (the attack's own size), then gone."""
    name = ("/oe-attack-host-%d" % os.getpid()).encode()
    fd = LIBC.mq_open(name, os.O_CREAT | os.O_RDWR | IN_CLOEXEC, 0o600,
                      ctypes.byref(MqAttr(0, 10, 8192, 0)))
    if fd < 0:
        return errname()
    os.close(fd)
    LIBC.mq_unlink(name)
    return "ok"


def exhausted(run, move, host_check):
    """A's env takes all of one count; who else still gets some."""
    a = A.Daemon(run, A.agent_manifest(run, "user-counts"))
    b = A.Daemon(run, a.manifest)
    try:
        check(host_check() == "ok", "the control: host root gets its own")
        r = a.attack(move)
        check(r.get("held", 0) > 0 and r.get("error") in ("EMFILE", "ENOSPC", "ENOMEM"),
              "the env took all it could: %s" % r)
        check(host_check() == "ok", "host root refused while unit A's env holds its %s: %s"
              % (move, host_check()))
        rb = b.attack(move, max=4)
        check(rb.get("held") == 4, "unit B's env refused while A's env holds its %s: %s"
              % (move, rb))
        # A's next episode: the last one's processes are gone, and so is
        # their share.
        check(a.ok("POST", "/reset_unit")["phase"] == "ready", "A's next episode")
        rn = a.attack(move, max=4)
        check(rn.get("held") == 4, "A's next episode refused: %s" % rn)
        for d in (a, b):
            rc, _ = d.stop()
            check(rc == 0, "clean exit")
    finally:
        a.kill()
        b.kill()


def case_inotify_instances(run):
    exhausted(run, "inotify_fill", host_inotify)


def case_message_queue_bytes(run):
    exhausted(run, "mq_fill", host_mq)


if __name__ == "__main__":
    sys.exit(A.main([
        ("inotify instances: host root, another unit and the next episode keep theirs",
         case_inotify_instances),
        ("message-queue bytes: host root, another unit and the next episode keep theirs",
         case_message_queue_bytes),
    ]))
