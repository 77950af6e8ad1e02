#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the path of an unpacked Debian root for tests that attack confinement.

    scripts/ci-rootfs.py            # builds it once, prints /var/cache/openenvd-ci/rootfs-<key>

The containers' root must be an image, not this host's `/` (docs/SECURITY.md):
a host's world-readable files and world-connectable sockets would otherwise be
reachable from every zone. The root is assembled offline from the Debian
packages installed on this machine: the files `dpkg -L` lists for PACKAGES and
everything they depend on (Depends and Pre-Depends, first installed
alternative), laid out merged-/usr as bookworm is, plus /etc/passwd, /etc/group
and the empty mount points openenvd's containers use. Nothing is downloaded.

The result is cached in $OPENENVD_CI_CACHE (default /var/cache/openenvd-ci),
keyed by the package versions, built under a lock and renamed into place, so
concurrent callers share one copy; a new one replaces the roots of older
package versions. It is read-only data for the tests: each
run links it into a tree of its own (cp -al) before adding files.
"""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

# What the attack suite and the example run inside: Python with the example's
# stack, and busybox for the minimal units.
PACKAGES = ["python3-minimal", "libpython3.11-stdlib", "python3-fastapi", "python3-uvicorn",
            "python3-websockets", "uvicorn", "busybox-static"]
# Never needed at run time.
SKIP_PREFIXES = ("/usr/share/doc/", "/usr/share/man/", "/usr/share/locale/",
                 "/usr/share/lintian/", "/usr/share/info/")
# Bookworm is merged-/usr: these are symlinks in the image too.
MERGED = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64"}
MOUNT_POINTS = ["proc", "sys", "dev", "tmp", "run/openenvd", "workspace", "out", "inputs",
                "assets", "services", "var/lib/sim", "etc"]
VERSION = "2"  # bump when the layout below changes


def installed_packages():
    """{name: (version, [[alternative, ...], ...])} of every installed package (one dpkg-query)."""
    out = subprocess.run(["dpkg-query", "-W", "-f",
                          "${Package}\t${Version}\t${db:Status-Abbrev}\t${Depends}, "
                          "${Pre-Depends}\n"], check=True, capture_output=True, text=True).stdout
    pkgs = {}
    for line in out.splitlines():
        name, version, status, deps = line.split("\t")
        if not status.startswith("ii"):
            continue
        clauses = []
        for clause in deps.split(","):
            alts = [a.strip().split(" ")[0].split(":")[0] for a in clause.split("|")]
            if any(alts):
                clauses.append([a for a in alts if a])
        pkgs[name] = (version, clauses)
    return pkgs


def closure(roots):
    """Installed packages reachable through Depends/Pre-Depends: {name: version}."""
    db = installed_packages()
    seen, todo = {}, list(roots)
    while todo:
        pkg = todo.pop()
        if pkg in seen:
            continue
        if pkg not in db:
            if pkg in roots:
                sys.exit("ci-rootfs.py: %s is not installed (apt-get install %s)" % (pkg, pkg))
            continue
        seen[pkg] = db[pkg][0]
        for alts in db[pkg][1]:
            pick = next((a for a in alts if a in db), None)
            if pick:
                todo.append(pick)
    return seen


def canonical_dir(path):
    """The real directory a listed path lives in (merged-/usr resolved)."""
    return os.path.realpath(os.path.dirname(path))


def populate(root, pkgs):
    for name, target in MERGED.items():
        os.makedirs(os.path.join(root, target), exist_ok=True)
        os.symlink(target, os.path.join(root, name))
    files = set()
    for pkg in pkgs:
        out = subprocess.run(["dpkg-query", "-L", pkg], capture_output=True, text=True).stdout
        for p in out.splitlines():
            if p.startswith("/") and not p.startswith(SKIP_PREFIXES):
                files.add(p)
    for p in sorted(files):
        if not os.path.lexists(p) or (os.path.isdir(p) and not os.path.islink(p)):
            continue
        d = root + canonical_dir(p)
        os.makedirs(d, exist_ok=True)
        dst = os.path.join(d, os.path.basename(p))
        if os.path.lexists(dst):
            continue
        if os.path.islink(p):
            os.symlink(os.readlink(p), dst)
            continue
        shutil.copy2(p, dst)
        if p.endswith(".py"):
            # Debian compiles modules at install time (py3compile), outside
            # the package lists; without the bytecode every container would
            # recompile the standard library at each start (the root is
            # read-only). copy2 keeps the mtime the .pyc is checked against.
            pyc = os.path.join(os.path.dirname(p), "__pycache__", os.path.basename(p)[:-3] +
                               ".cpython-%d%d.pyc" % sys.version_info[:2])
            if os.path.isfile(pyc):
                os.makedirs(os.path.join(d, "__pycache__"), exist_ok=True)
                shutil.copy2(pyc, os.path.join(d, "__pycache__", os.path.basename(pyc)))
    for m in MOUNT_POINTS:
        os.makedirs(os.path.join(root, m), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    with open(os.path.join(root, "etc/passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")
    with open(os.path.join(root, "etc/group"), "w") as f:
        f.write("root:x:0:\nnogroup:x:65534:\n")
    # Every directory searchable and every file readable, as an image is.
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                st = os.lstat(p)
                os.chmod(p, (st.st_mode & 0o7777) | 0o444 | (0o111 if n in dirnames else 0))


def main():
    cache = os.environ.get("OPENENVD_CI_CACHE", "/var/cache/openenvd-ci")
    pkgs = closure(PACKAGES)
    key = hashlib.sha256(("%s\n" % VERSION + "".join(
        "%s=%s\n" % kv for kv in sorted(pkgs.items()))).encode()).hexdigest()[:16]
    final = os.path.join(cache, "rootfs-" + key)
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, ".rootfs.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.isdir(final):
            tmp = tempfile.mkdtemp(prefix=".rootfs.", dir=cache)
            try:
                os.chmod(tmp, 0o755)
                populate(tmp, pkgs)
                os.rename(tmp, final)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            # Roots of other package versions are stale now: one per machine.
            for n in os.listdir(cache):
                if n.startswith("rootfs-") and n != os.path.basename(final):
                    shutil.rmtree(os.path.join(cache, n), ignore_errors=True)
    print(final)


if __name__ == "__main__":
    main()
