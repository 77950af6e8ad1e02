#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: swap the sockets the daemon uses for symlinks to a root-only host socket.

Every container can write its own socket dir (/run/openenvd). The attacker
replaces each entry there (the relays' sockets, and names the daemon once used
for its own: env.sock, mcp.sock, model.sock) with a symlink to a unix socket
only root may connect to, or to a root-only file, or with a FIFO, a plain file
or a directory; then it uses every relay. A daemon that connects, chmods,
chowns or unlinks by path in such a dir would follow the link as root.

Must not happen: the root-only socket is ever connected to; the root-only
file changes (mode, owner, content); a relay, a reset or the teardown
stalls; anything is left behind. Run on the attack image (--rootfs) and on
this host's own root (where the link targets exist for the containers too).
"""
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402


def manifest(run, target, secret, host_root):
    swap = {"target": target}
    swap_file = {"target": secret}

    def a(*parts):
        return A.argv(*parts, host_root=run if host_root else None)
    return run.manifest(A.manifest_head("socket-swap") + A.zones(
        a("env", "8000"),
        a("harness", "swap_socket_dir", swap, "http", {"url": "http://127.0.0.1:7000/mcp",
                                                         "method": "POST", "body": "{}"}),
        a("service", "8080", "swap_socket_dir", swap_file),
        [("runner", {"argv": a("observer", "swap_socket_dir", swap, "connect_unix",
                               {"path": "/run/openenvd/env.sock"}),
                     "reads": "[workspace]", "phases": "[grading]"})]))


def secret_file(run):
    d = run.path("root-only")
    os.makedirs(d, exist_ok=True)
    os.chmod(d, 0o700)
    p = os.path.join(d, "secret")
    with open(p, "w") as f:
        f.write("root only\n")
    os.chmod(p, 0o600)
    return p


def identity(path):
    st = os.lstat(path)
    return (st.st_mode, st.st_uid, st.st_gid, st.st_ino, A.read(path))


def swap_everything(run, host_root):
    canary = A.UnixCanary(run.path("root-only", "root.sock"))
    secret = secret_file(run)
    before = identity(secret)
    d = A.Daemon(run, manifest(run, canary.path, secret, host_root), rootfs=not host_root,
                 args=A.UNFILTERED if host_root else ())
    try:
        eid = d.info()["episode_id"]
        # The env server's own socket dir: the service relay's socket.
        r = d.attack("swap_socket_dir", target=canary.path)
        check("svc-svc.sock" in r["swapped"], "env swapped the relay socket: %s" % r)
        check(r["rename_dir"] != "ok" and r["rmdir_dir"] != "ok",
              "the socket dir itself cannot be moved: %s" % r)
        # Control: root resolving that entry in the daemon's own mount
        # namespace does reach the canary (the one hit allowed below).
        check(A.connect_through(d.inside("episodes/%s/sock/env" % eid), "svc-svc.sock"),
              "the planted link leads to the canary")
        A.poll(lambda: canary.hits == 1, "the control to reach the canary", 5)
        svc = d.attack("http", url="http://svc.local:80/results")
        check(svc.get("status") != 200 or "canary" not in svc.get("body", ""),
              "the service relay reached the canary: %s" % svc)
        # The daemon's own connection to the env server still works: it
        # never goes through the container's dir.
        check(d.ok("POST", "/step", {"action": {"message": "a"}})["done"] is False, "step")
        # Replaced by a FIFO, a file and a dir: nothing stalls.
        for kind in ("fifo", "file", "dir"):
            check(d.attack("replace_with", path="/run/openenvd/svc-svc.sock", kind=kind)["ok"],
                  "env replaced its socket by a %s" % kind)
            d.ok("POST", "/step", {"action": {"message": kind}})
        harness = d.wait_workspace_json("harness.0.swap_socket_dir.json", episode=eid)
        check("mcp.sock" in harness["swapped"], "harness swapped mcp.sock: %s" % harness)
        mcp = d.wait_workspace_json("harness.1.http.json", episode=eid)
        check(mcp.get("status") != 200, "harness's MCP went somewhere: %s" % mcp)
        v = d.ok("POST", "/end_episode")
        check(v["verdict"] in ("graded", "agent_misbehavior"), "episode ends: %s" % v)
        runner = v["observers"]["runner"]["results"]
        check(not runner[1]["ok"], "the runner reached something at env.sock: %s" % runner)
        # Every episode gets fresh socket dirs: the next works as if nothing happened.
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "next reset")
        check(d.ok("POST", "/step", {"action": {"message": "b"}})["done"] is False,
              "step in the next episode")
        rc, _ = d.stop()
        check(rc == 0, "clean exit (%s)" % rc)
    finally:
        d.kill()
        canary.close()
    check(canary.hits == 1, "the root-only socket was connected to %d times besides the "
          "control" % (canary.hits - 1))
    check(identity(secret) == before, "the root-only file changed: %s -> %s"
          % (before, identity(secret)))
    check(stat.S_ISREG(before[0]), "the secret is a file")


def case_image_root(run):
    swap_everything(run, host_root=False)


def case_host_root(run):
    swap_everything(run, host_root=True)


CASES = [
    ("socket dir entries swapped for links to a root-only socket/file, FIFOs, files, dirs "
     "(image root): never followed, nothing stalls or stays", case_image_root),
    ("the same on this host's whole / as the containers' root (--host-root-unfiltered)",
     case_host_root),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
