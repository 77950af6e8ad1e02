#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: leave state in the env's network namespace for a later episode.

The daemon used to keep each slot's network namespace for the slot's next
episode, handing it on once no socket was left. A namespace keeps more than
sockets: an exclusive IPv6 flow label outlives its socket (its linger) and
still names the destination episode P chose, and lo's counters tell how
much traffic P made. Episode P + 2 (the same slot) listed P's labels, could
not take them (EPERM), and read P's traffic volume.

Here episode P takes a flow label and sends 200 KB over lo; the next two
episodes look.

Must not happen: the same namespace (by its cookie, SO_NETNS_COOKIE: an
inode number is reused once its namespace is freed) in a later episode; P's
flow label there; lo's counters carrying P's bytes.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

LABEL = 0x5EED1
TRAFFIC = 200 * 1024


def case_every_episode_a_new_namespace(run):
    d = A.Daemon(run, A.agent_manifest(run, "netns-reuse"))
    try:
        p = d.attack("netns_state", flowlabel=LABEL, traffic=TRAFFIC)
        # The control: the label and the traffic are there in P itself.
        check(p.get("flowlabel") == "ok", "P took its flow label: %s" % p)
        check("%05X" % LABEL in p["flowlabels"].upper(), "P lists its label: %s" % p)
        check(p["lo_rx_bytes"] >= TRAFFIC, "P's traffic shows on lo: %s" % p)
        seen = [p["netns"]]
        for later in ("P+1", "P+2", "P+3"):
            check(d.ok("POST", "/reset_unit")["phase"] == "ready", later)
            s = d.attack("netns_state")
            check(s["netns"] not in seen, "%s runs in an earlier episode's namespace %s"
                  % (later, s["netns"]))
            check("%05X" % LABEL not in s["flowlabels"].upper(),
                  "%s lists P's flow label: %s" % (later, s["flowlabels"]))
            check(s["lo_rx_bytes"] < TRAFFIC, "%s's lo counts P's bytes: %s" % (later, s))
            took = d.attack("netns_state", flowlabel=LABEL)
            check(took.get("flowlabel") == "ok", "%s cannot take the label P took: %s"
                  % (later, took.get("flowlabel")))
            seen.append(s["netns"])
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


if __name__ == "__main__":
    sys.exit(A.main([
        ("every episode's env in a new network namespace: no flow label, no counter of "
         "an earlier one", case_every_episode_a_new_namespace),
    ]))
