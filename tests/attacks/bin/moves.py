# SPDX-License-Identifier: LGPL-2.1-or-later
"""What agent code (or a hostile observer or service) tries from inside a zone.

Each move is a function of keyword arguments returning a JSON-able report of
what happened: the attacker's own account. The tests on the host compare it
with what the daemon and the kernel say. Nothing here is trusted by openenvd.
Standard library only: it runs in the attack suite's image.
"""
import errno
import os
import socket
import stat
import threading
import time
import urllib.error
import urllib.request

FLOOD = {}  # fd -> {"written": n, "error": e, "done": bool}


def _err(e):
    return errno.errorcode.get(e.errno, str(e.errno)) if isinstance(e, OSError) else str(e)


def sleep(s):
    time.sleep(s)
    return {"slept": s}


def ident():
    """Who am I, as the kernel says it inside and as the uid map says outside."""
    def first(path):
        try:
            with open(path) as f:
                return f.read().split()
        except OSError:
            return None
    return {"uid": os.getuid(), "gid": os.getgid(), "uid_map": first("/proc/self/uid_map"),
            "pid": os.getpid()}


# --- fds -----------------------------------------------------------------------

def _fd_report(base, markers, probe_read):
    out = {}
    try:
        names = os.listdir(base)
    except OSError as e:
        return {"error": _err(e)}
    for name in names:
        p = os.path.join(base, name)
        r = {}
        try:
            r["target"] = os.readlink(p)
        except OSError as e:
            r["target_error"] = _err(e)
            out[name] = r
            continue
        try:
            with open(os.path.join(base.replace("/fd", "/fdinfo"), name)) as f:
                r["flags"] = int(f.read().split("flags:")[1].split()[0], 8)
        except (OSError, IndexError, ValueError):
            pass
        if probe_read and not r["target"].startswith(("socket:", "anon_inode:")):
            # Re-opening /proc/PID/fd/N opens the object anew: a pipe's read
            # side, a file from its start. Whatever comes back is what this
            # fd leaks.
            try:
                fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
                try:
                    data = os.read(fd, 1 << 16)
                except OSError as e:
                    data = b""
                    r["read_error"] = _err(e)
                finally:
                    os.close(fd)
                r["read_bytes"] = len(data)
                r["markers"] = [m for m in markers if m.encode() in data]
            except OSError as e:
                r["open_error"] = _err(e)
        out[name] = r
    return out


def fds(markers=()):
    """Every fd this process and the container's PID 1 hold, and what reading them gives."""
    report = {"self": _fd_report("/proc/self/fd", markers, True),
              "pid1": _fd_report("/proc/1/fd", markers, True)}
    # Rewriting the log: a pipe refuses truncation and seeking.
    for what, fn in (("ftruncate", lambda: os.ftruncate(1, 0)),
                     ("lseek", lambda: os.lseek(1, 0, os.SEEK_SET))):
        try:
            fn()
            report[what] = "ok"
        except OSError as e:
            report[what] = _err(e)
    return report


def emit(text, fd=1):
    """Writes text (e.g. a forged daemon log line) to stdout or stderr."""
    os.write(fd, text.encode())
    return {"written": len(text)}


def emit_latin1(text, fd=1):
    """Writes text with each character as one byte (U+00FF: the byte 0xff):
    output that is not UTF-8."""
    os.write(fd, text.encode("latin-1"))
    return {"written": len(text)}


def _flood(fd, total, chunk):
    buf = b"F" * (chunk - 1) + b"\n"
    st = FLOOD[fd]
    try:
        while st["written"] < total:
            st["written"] += os.write(fd, buf)
    except OSError as e:
        st["error"] = _err(e)
    st["done"] = True


def flood(fd=1, total=1 << 30, chunk=1 << 16, wait=False):
    """Writes total bytes to fd from a thread (the caller goes on serving)."""
    FLOOD[fd] = {"written": 0, "error": None, "done": False}
    t = threading.Thread(target=_flood, args=(fd, total, chunk), daemon=True)
    t.start()
    if wait:
        t.join()
    return dict(FLOOD[fd])


def flood_progress(fd=1):
    return dict(FLOOD.get(fd) or {})


# --- sockets and links -----------------------------------------------------------

def connect_unix(path):
    """Connects to a unix socket (ok: connected) and says hello over HTTP/1.0."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(path)
    except OSError as e:
        s.close()
        return {"ok": False, "errno": _err(e)}
    try:
        s.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        data = s.recv(256)
    except OSError:
        data = b""
    finally:
        s.close()
    return {"ok": True, "reply": data.decode("latin-1")}


def connect_abstract(name):
    return connect_unix("\0" + name)


def swap_socket_dir(target, dir="/run/openenvd", extra=("env.sock", "mcp.sock", "model.sock")):
    """Replaces every entry of the socket dir with a symlink to target (a
    root-only host socket) and plants more symlinks under the names the
    daemon has used for its own sockets."""
    report = {"before": {}, "swapped": [], "planted": [], "errors": {}}
    try:
        names = os.listdir(dir)
    except OSError as e:
        return {"error": _err(e)}
    for n in names:
        p = os.path.join(dir, n)
        try:
            report["before"][n] = stat.filemode(os.lstat(p).st_mode)
            os.unlink(p)
            os.symlink(target, p)
            report["swapped"].append(n)
        except OSError as e:
            report["errors"][n] = _err(e)
    for n in extra:
        p = os.path.join(dir, n)
        if os.path.lexists(p):
            continue
        try:
            os.symlink(target, p)
            report["planted"].append(n)
        except OSError as e:
            report["errors"][n] = _err(e)
    # The dir itself: a mount point cannot be renamed or removed from inside.
    for what, fn in (("rename_dir", lambda: os.rename(dir, dir + ".old")),
                     ("rmdir_dir", lambda: os.rmdir(dir))):
        try:
            fn()
            report[what] = "ok"
        except OSError as e:
            report[what] = _err(e)
    return report


def replace_with(path, kind, target=None):
    """Replaces path by a symlink, FIFO, regular file or directory."""
    try:
        if os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        if kind == "symlink":
            os.symlink(target, path)
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "file":
            with open(path, "w") as f:
                f.write("not a socket\n")
        elif kind == "dir":
            os.mkdir(path)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def http(url, method="GET", body=None, headers=None, timeout=5):
    req = urllib.request.Request(url, data=body.encode() if body is not None else None,
                                 method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return {"status": r.status, "body": r.read(4096).decode("utf-8", "replace")}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": e.read(4096).decode("utf-8", "replace")}
    except Exception as e:  # noqa: BLE001 - the attacker reports every outcome
        return {"status": None, "error": str(e)}


# --- files -------------------------------------------------------------------------

def deep_tree(dir, depth, name="d"):
    """depth nested directories below dir, made fd-relative (no path limit)."""
    made = 0
    fd = os.open(dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir(name, dir_fd=fd)
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
            made += 1
    except OSError as e:
        return {"made": made, "errno": _err(e)}
    finally:
        os.close(fd)
    return {"made": made}


def many_files(dir, n, size=0):
    os.makedirs(dir, exist_ok=True)
    made = 0
    try:
        for i in range(n):
            with open(os.path.join(dir, "f%06d" % i), "wb") as f:
                if size:
                    f.write(b"x" * size)
            made += 1
    except OSError as e:
        return {"made": made, "errno": _err(e)}
    return {"made": made}


def mkfifo(path):
    try:
        os.mkfifo(path)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def sparse(path, size):
    """A file of size bytes that stores almost none of them (holes)."""
    try:
        with open(path, "wb") as f:
            f.write(b"head")
            f.truncate(size)
        st = os.stat(path)
        return {"ok": True, "size": st.st_size, "blocks": st.st_blocks}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


DEVICES = {"chr-null": (stat.S_IFCHR, 1, 3), "chr-mem": (stat.S_IFCHR, 1, 1),
           "blk-vda": (stat.S_IFBLK, 254, 0), "whiteout": (stat.S_IFCHR, 0, 0)}


def mknod(dir):
    """Tries every kind of device node; each outcome is reported."""
    out = {}
    for name, (kind, major, minor) in DEVICES.items():
        p = os.path.join(dir, "dev-" + name)
        try:
            os.mknod(p, kind | 0o666, os.makedev(major, minor))
            out[name] = {"ok": True, "visible": os.path.lexists(p)}
        except OSError as e:
            out[name] = {"ok": False, "errno": _err(e)}
    return out


def unix_socket(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(path)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}
    finally:
        s.close()


def symlink(target, path):
    try:
        os.symlink(target, path)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def write(path, data, append=False):
    try:
        with open(path, "a" if append else "w") as f:
            f.write(data)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def _make(dfd, name, kind, data=b""):
    """An entry of kind (file, fifo, socket, dir) named name (bytes) in dir fd dfd."""
    if kind == "fifo":
        os.mkfifo(name, dir_fd=dfd)
    elif kind == "dir":
        os.mkdir(name, dir_fd=dfd)
    elif kind == "socket":
        # bind() takes a path of at most 108 bytes: relative to the dir.
        here = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.fchdir(dfd)
            s.bind(name)
        finally:
            os.fchdir(here)
            os.close(here)
            s.close()
    else:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
        os.write(fd, data)
        os.close(fd)


def plant(dir, name_hex, kind="file", data=""):
    """An entry whose name is any bytes but "/" and NUL (hex: JSON carries
    text only): a newline, an escape sequence, bytes that are not UTF-8."""
    dfd = os.open(dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _make(dfd, bytes.fromhex(name_hex), kind, data.encode())
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}
    finally:
        os.close(dfd)


def nested(dir, component, depth, leaf, kind="fifo"):
    """depth directories named component below dir, made fd-relative (the
    path may exceed PATH_MAX), and at the bottom leaf of kind."""
    fd = os.open(dir, os.O_RDONLY | os.O_DIRECTORY)
    made = 0
    try:
        for _ in range(depth):
            os.mkdir(component, dir_fd=fd)
            sub = os.open(component, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
            made += 1
        _make(fd, leaf.encode(), kind)
        return {"ok": True, "made": made,
                "path_bytes": len(dir) + made * (len(component) + 1) + 1 + len(leaf)}
    except OSError as e:
        return {"ok": False, "made": made, "errno": _err(e)}
    finally:
        os.close(fd)


def hardlinks(dir, n, size=1):
    """One file of size bytes and n - 1 more names for it: the tree holds
    n entries and n * size bytes in the space of one file."""
    os.makedirs(dir, exist_ok=True)
    first = os.path.join(dir, "l000000")
    try:
        with open(first, "wb") as f:
            f.write(b"x" * size)
        for i in range(1, n):
            os.link(first, os.path.join(dir, "l%06d" % i))
        return {"ok": True, "nlink": os.stat(first).st_nlink}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def fill(dir, chunk=1 << 20):
    """Writes into dir until the file system refuses (ENOSPC)."""
    written = 0
    try:
        with open(os.path.join(dir, "fill.bin"), "wb") as f:
            buf = b"x" * chunk
            while True:
                written += f.write(buf)
                f.flush()
    except OSError as e:
        return {"written": written, "errno": _err(e)}


def listdir(path):
    try:
        return {"ok": True, "entries": sorted(os.listdir(path))}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def read(path, n=4096):
    try:
        with open(path, "rb") as f:
            return {"ok": True, "data": f.read(n).decode("utf-8", "replace")}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def exists(path):
    return {"exists": os.path.lexists(path)}


def procs():
    """Every process this container can see, with its real uid."""
    out = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/status" % p) as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            out[p] = int(line.split()[1])
            except OSError:
                pass
    return out


def signal_pid(pid, sig=9):
    try:
        os.kill(pid, sig)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": _err(e)}


def kill_self(sig=9):
    os.kill(os.getpid(), sig)
    return {"alive": True}


def balloon(total_mb=512, chunk_mb=16):
    """Allocates and touches memory until total_mb or the OOM killer."""
    for _ in range(total_mb // chunk_mb):
        HELD.append(bytearray(b"x" * (chunk_mb << 20)))
    return {"held_mb": len(HELD) * chunk_mb}


def fork_child():
    """A child process, waited for: whether this container can still fork."""
    try:
        pid = os.fork()
    except OSError as e:
        return {"ok": False, "errno": _err(e)}
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return {"ok": True}


def fork_bomb(hold_s=600):
    """Forks until the kernel refuses (the pids limit); the children sleep."""
    n = 0
    while True:
        try:
            pid = os.fork()
        except OSError as e:
            return {"forked": n, "errno": _err(e)}
        if pid == 0:
            time.sleep(hold_s)
            os._exit(0)
        n += 1


def exit_now(status=0):
    os._exit(status)


# --- the kernel's per-user counts and per-namespace state ----------------------

HELD = []  # fds and objects kept for the container's life


def _libc():
    import ctypes
    return ctypes, ctypes.CDLL(None, use_errno=True)


def inotify_fill(max=100000):
    """Takes every inotify instance the kernel gives, and keeps them."""
    ctypes, libc = _libc()
    n, err = 0, None
    while n < max:
        fd = libc.inotify_init1(0o2000000)  # IN_CLOEXEC
        if fd < 0:
            err = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
            break
        HELD.append(fd)
        n += 1
    return {"held": n, "error": err}


def mq_fill(max=10000, maxmsg=10, msgsize=8192):
    """Creates POSIX message queues of maxmsg x msgsize bytes until refused,
    and keeps them open."""
    ctypes, libc = _libc()

    class Attr(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                    ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                    ("pad", ctypes.c_long * 4)]
    libc.mq_open.restype = ctypes.c_int
    libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                             ctypes.POINTER(Attr)]
    attr = Attr(0, maxmsg, msgsize, 0)
    n, err = 0, None
    while n < max:
        name = ("/oe-attack-%d-%d" % (os.getpid(), n)).encode()
        fd = libc.mq_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR | 0o2000000, 0o600,
                          ctypes.byref(attr))
        if fd < 0:
            err = errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
            break
        HELD.append(fd)
        n += 1
    return {"held": n, "bytes": n * maxmsg * msgsize, "error": err}


def _lo_bytes():
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                return int(rest.split()[0])
    return None


def netns_state(flowlabel=None, traffic=0):
    """This container's network namespace as it sees it: its cookie, its
    IPv6 flow labels, lo's received bytes. With flowlabel, first takes that
    label exclusively for ::1 (it outlives the socket by its linger); with
    traffic, first sends that many bytes over lo."""
    import struct
    out = {}
    if flowlabel is not None:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        # struct in6_flowlabel_req: dst, label (network order), action GET,
        # share EXCL, flags CREATE, expires, linger (s), pad.
        req = struct.pack("=16sIBBHHHI", socket.inet_pton(socket.AF_INET6, "::1"),
                          socket.htonl(flowlabel & 0xFFFFF), 0, 1, 1, 120, 120, 0)
        try:
            s.setsockopt(41, 32, req)  # SOL_IPV6, IPV6_FLOWLABEL_MGR
            out["flowlabel"] = "ok"
        except OSError as e:
            out["flowlabel"] = _err(e)
        HELD.append(s)
    if traffic:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        r.bind(("127.0.0.1", 0))
        for _ in range(traffic // 1024 + 1):
            u.sendto(b"x" * 1024, r.getsockname())
        u.close()
        r.close()
    # The namespace's cookie, never reused (its inode number is, once it is
    # freed).
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
        out["netns"] = struct.unpack("=Q", c.getsockopt(socket.SOL_SOCKET, 71, 8))[0]
    try:
        with open("/proc/net/ip6_flowlabel") as f:
            out["flowlabels"] = f.read()
    except OSError as e:
        out["flowlabels"] = _err(e)
    out["lo_rx_bytes"] = _lo_bytes()
    return out


MOVES = {n: f for n, f in globals().items() if callable(f) and not n.startswith("_")
         and f.__module__ == __name__}
