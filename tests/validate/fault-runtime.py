#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A fault-injecting OCI runtime for the docker suite (tests/validate/test-docker.c).

The private dockerd of the suite runs every container through this wrapper
(scripts/dockerd.sh, DOCKERD_RUNTIME). It passes every call to runc unchanged,
except the `create` of a container whose process arguments carry the marker
`openenv-runtime-fault=NAME`: then it rewrites the bundle's config.json first,
as a hostile or broken runtime would, behind Docker's back (`docker inspect`
still shows the hardened launch). The faults back a mount with host storage or
hand the subject a directory it owns:

  tmp-bind       a host directory (the disk under DIR) over /tmp, mode 1777
  shm-bind       a host directory over /dev/shm, mode 1777
  mqueue-host    an mqueue filesystem mounted on the host (in the host's IPC
                 namespace) over /dev/mqueue
  run-bind       a root-owned 0755 host directory at /run/openenv-fault
  scratch-owned  a tmpfs /scratch owned by 65532, mode 0555 (what a subject
                 that owns it and drops its write bit before the helper
                 looks leaves behind)

Host state lives under DIR/faults/<container id>, DIR being where this file
was copied (the private dockerd's directory); `delete` unmounts and removes
it, and scripts/dockerd.sh stop removes whatever is left with DIR.
"""
import json
import os
import shutil
import subprocess
import sys

MARK = "openenv-runtime-fault="
SUBJECT = 65532


def state_dir(cid):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "faults", cid)


def host_dir(state, name, mode, owner=0):
    path = os.path.join(state, name)
    os.makedirs(path, exist_ok=True)
    os.chown(path, owner, owner)
    os.chmod(path, mode)
    return path


def bind(dest, source):
    return {"destination": dest, "type": "bind", "source": source,
            "options": ["rbind", "rw", "nosuid", "nodev"]}


def replace_mount(cfg, mount):
    cfg["mounts"] = [m for m in cfg.get("mounts", [])
                     if m.get("destination") != mount["destination"]] + [mount]


def apply_fault(cfg, fault, state):
    if fault == "tmp-bind":
        replace_mount(cfg, bind("/tmp", host_dir(state, "tmp", 0o1777)))
    elif fault == "shm-bind":
        replace_mount(cfg, bind("/dev/shm", host_dir(state, "shm", 0o1777)))
    elif fault == "mqueue-host":
        mq = host_dir(state, "mq", 0o755)
        subprocess.run(["mount", "-t", "mqueue", "openenv-fault-mq", mq], check=True)
        replace_mount(cfg, bind("/dev/mqueue", mq))
    elif fault == "run-bind":
        replace_mount(cfg, bind("/run/openenv-fault", host_dir(state, "run", 0o755)))
    elif fault == "scratch-owned":
        replace_mount(cfg, {"destination": "/scratch", "type": "tmpfs", "source": "tmpfs",
                            "options": ["nosuid", "nodev", "size=1m", "mode=0555",
                                        "uid=%d" % SUBJECT, "gid=%d" % SUBJECT]})
    else:
        sys.exit("fault-runtime: unknown fault %r" % fault)


def option_value(args, name):
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def on_create(args):
    bundle = option_value(args, "--bundle") or option_value(args, "-b") or "."
    path = os.path.join(bundle, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    faults = [a[len(MARK):] for a in cfg.get("process", {}).get("args", []) if a.startswith(MARK)]
    if not faults:
        return
    state = state_dir(args[-1])
    os.makedirs(state, exist_ok=True)
    for fault in faults:
        apply_fault(cfg, fault, state)
    with open(path, "w") as f:
        json.dump(cfg, f)


def on_delete(cid):
    state = state_dir(cid)
    if not os.path.isdir(state):
        return
    mq = os.path.join(state, "mq")
    if os.path.ismount(mq):
        subprocess.run(["umount", "-l", mq], check=False)
    shutil.rmtree(state, ignore_errors=True)


def main():
    args = sys.argv[1:]
    verbs = [a for a in args if a in ("create", "delete")]
    if verbs and verbs[0] == "create":
        on_create(args)
    if verbs and verbs[0] == "delete":
        rc = subprocess.call(["runc"] + args)
        on_delete(args[-1])
        sys.exit(rc)
    os.execvp("runc", ["runc"] + args)


main()
