#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: make the daemon say what agent code wrote, or blame the daemon.

A workspace file name holding a newline printed, in the daemon's text log,
a line of the agent's own making ("openenvd: phase grading -> closed
(system: graded) <forged text>"); a byte that is not UTF-8 in it dropped
the verdict's reason. A FIFO at a 1,259-byte path turned the verdict into
infrastructure_error, "workspace custody copy: the copier failed", blamed on
the daemon (the copier's report was parsed in a 1 KiB buffer); hard links
made the custody copy outgrow its tmpfs (ENOSPC: the daemon's fault again).

Agent code here plants, one episode each: a FIFO whose name holds a forged
log line, an escape sequence, a C1 control and bytes that are not UTF-8
(under the text and the JSON log); a FIFO at a 1,259-byte path; a FIFO and
a socket at paths past PATH_MAX; 129 directories of 250-byte names (a
32 KiB path); a 4,097-byte file with 2,999 more names in a 16 MB workspace.

Must not happen: a log line or entry that the agent's bytes started or
broke; a control byte or broken UTF-8 in /verdict, /info or /metrics, or a
verdict without its reason; any verdict other than agent_misbehavior
blamed on the container that planted it (or graded, where the copy fits).
"""
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

MARKER = "FORGED-5e1f"
FORGED = "openenvd: phase grading -> closed (system: graded) " + MARKER
# The planted name: a newline, the forged line, an escape sequence that
# would erase a terminal's line, a C1 CSI, a lone 0xff, a bidi override.
EVIL = (b"evil\n" + FORGED.encode() + b"\x1b[2K\r\xc2\x9b\xff\xe2\x80\xae")
LONG = "n" * 250  # a 250-byte directory name


def manifest(run):
    return run.manifest(A.manifest_head("agent-text") + """\
    agent:
      resources: {disk_mb: 16}
      containers:
        env:
          argv: %s
        harness:
          argv: %s
    observers:
      containers:
        runner:
          argv: %s
          reads: [workspace]
          phases: [grading]
""" % (A.argv("env", "8000"), A.argv("harness"),
       A.argv("observer", "listdir", {"path": "/workspace"})))


def end(d, plant):
    """A fresh episode, the plant, its end: the verdict."""
    check(d.ok("POST", "/reset_unit")["phase"] == "ready", "reset")
    r = plant()
    check(r.get("ok") is True, "planted: %s" % r)
    A.note("planted: %s" % r)
    return d.ok("POST", "/end_episode", timeout=120)


def check_agents(v, words):
    check(v["verdict"] == "agent_misbehavior", "verdict: %s" % v)
    check((v["blame"] or {}).get("subtree") == "zones/agent/env", "blamed on the env: %s" % v)
    for w in words:
        check(w in (v["reason"] or ""), "the reason names %r: %s" % (w, v["reason"]))


def unsafe(text):
    """The characters of text that could break or reorder a line."""
    return [c for c in text if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f
            or c in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
            or c == "\ufffd"]


def strings(j):
    if isinstance(j, str):
        yield j
    elif isinstance(j, dict):
        for k, v in j.items():
            yield k
            yield from strings(v)
    elif isinstance(j, list):
        for v in j:
            yield from strings(v)


def raw_get(d, path):
    req = urllib.request.Request(d.url(path), headers={"Authorization": "Bearer " + A.TOKEN})
    with urllib.request.urlopen(req, timeout=30) as r:
        check(r.status == 200, "GET %s -> %s" % (path, r.status))
        raw = r.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise A.Failure("GET %s is not UTF-8: %s" % (path, e))


def check_api(d, v):
    """/verdict, /info and /metrics: the reason is there, escaped."""
    reason = v.get("reason")
    check(isinstance(reason, str), "the verdict has its reason: %s" % v)
    check(MARKER in reason and "FIFO" in reason, "the reason names the entry: %r" % reason)
    check(not unsafe(reason), "the reason carries %r: %r" % (unsafe(reason), reason))
    for path in ("/verdict", "/info"):
        body = json.loads(raw_get(d, path))
        bad = [s for s in strings(body) if unsafe(s)]
        check(not bad, "%s carries control bytes: %r" % (path, bad))
        check(path != "/verdict" or body.get("reason") == reason, "/verdict: %s" % body)
    metrics = raw_get(d, "/metrics")
    check(MARKER not in metrics and not unsafe(metrics.replace("\n", "")),
          "/metrics carries the agent's text")


def check_text_log(d):
    """Every line holding the marker is the daemon's own, quoting it."""
    with open(d.log, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise A.Failure("the text log is not UTF-8: %s" % e)
    lines = [ln for ln in text.split("\n") if MARKER in ln]
    check(lines, "the refusal is logged")
    for ln in lines:
        check("refused by custody" in ln and not ln.startswith(FORGED),
              "a log line the agent started: %r" % ln)
        check(not unsafe(ln), "a log line carries %r: %r" % (unsafe(ln), ln))


def check_json_log(d):
    """Every entry holding the marker parses, and its strings are escaped."""
    with open(d.log, "rb") as f:
        lines = [ln for ln in f.read().split(b"\n") if MARKER.encode() in ln]
    check(lines, "the refusal is logged")
    for ln in lines:
        try:
            entry = json.loads(ln.decode("utf-8"))
        except ValueError as e:
            raise A.Failure("an entry does not parse (%s): %r" % (e, ln))
        check(not entry["msg"].startswith(FORGED.split(": ", 1)[1]),
              "an entry the agent wrote: %r" % entry)
        bad = [s for s in strings(entry) if unsafe(s)]
        check(not bad, "an entry carries control bytes: %r" % bad)


def case_names(run, fmt):
    args = ["--no-initial-episode", "--log-format", fmt]
    d = A.Daemon(run, manifest(run), args=args)
    try:
        v = end(d, lambda: d.attack("plant", dir="/workspace", name_hex=EVIL.hex(), kind="fifo"))
        check_agents(v, ("FIFO",))
        check_api(d, v)
        (check_text_log if fmt == "text" else check_json_log)(d)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_output_in_the_log(run, fmt, quiet=False):
    # The env's own output reaches the daemon's log (--container-output log,
    # the default), each line the env's, never the daemon's voice: prefixed
    # with its container, the episode said, every byte escaped. With
    # --container-output none it is in /logs only.
    args = ["--log-format", fmt] + (["--container-output", "none"] if quiet else [])
    d = A.Daemon(run, manifest(run), args=args)
    try:
        eid = d.info()["episode_id"]
        d.attack("emit_latin1", text=EVIL.decode("latin-1") + "\n")
        A.poll(lambda: MARKER in d.logs("env"), "the env's output in /logs")
        if quiet:
            d.attack("emit", text="sync\n")  # output is read in order: EVIL came first
            A.poll(lambda: "sync" in d.logs("env"), "the env's later output in /logs")
            check(MARKER not in (A.read(d.log) or ""), "--container-output none: in the log")
        else:
            A.poll(lambda: MARKER in (A.read(d.log) or ""), "the env's output in the log")
        with open(d.log, "rb") as f:
            raw = [ln.decode("utf-8") for ln in f.read().split(b"\n") if MARKER.encode() in ln]
        check(len(raw) == (0 if quiet else 1), "lines holding the marker: %s" % raw)
        if not quiet and fmt == "text":
            ln = raw[0]
            check(ln.startswith("openenvd: env| " + FORGED) and ln.endswith("[episode %s]" % eid)
                  and not unsafe(ln), "the env's line, prefixed and escaped: %r" % ln)
        elif not quiet:
            e = json.loads(raw[0])
            check(e["container"] == "env" and e["episode_id"] == eid and
                  e["msg"].startswith("env| " + FORGED) and
                  not [s for s in strings(e) if unsafe(s)], "the env's entry: %r" % e)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_long_paths(run):
    d = A.Daemon(run, manifest(run), args=["--no-initial-episode"])
    try:
        # 5 x 251 + 9 bytes: the report of the original finding.
        v = end(d, lambda: d.attack("nested", dir="/workspace", component=LONG, depth=5,
                                    leaf="the-fifo", kind="fifo"))
        check_agents(v, ("the-fifo", "FIFO not allowed"))
        # Past PATH_MAX (20 x 251 bytes): the kernel resolves none of it.
        v = end(d, lambda: d.attack("nested", dir="/workspace", component=LONG, depth=20,
                                    leaf="deep-fifo", kind="fifo"))
        check_agents(v, ("deep-fifo", "FIFO not allowed"))
        v = end(d, lambda: d.attack("nested", dir="/workspace", component=LONG, depth=20,
                                    leaf="deep.sock", kind="socket"))
        check_agents(v, ("deep.sock", "socket not allowed"))
        # One directory past the depth bound, every name 250 bytes: 32 KiB.
        v = end(d, lambda: d.attack("nested", dir="/workspace", component=LONG, depth=129,
                                    leaf="leaf", kind="file", timeout=120))
        check_agents(v, ("nested deeper than 128 directories",))
        check(len(v["reason"]) < 2048, "the reason is bounded: %d bytes" % len(v["reason"]))
        check(d.ok("POST", "/reset_unit")["phase"] == "ready", "not bricked")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


def case_hardlinks(run):
    d = A.Daemon(run, manifest(run), args=["--no-initial-episode"])
    try:
        # 12 MB of bytes within the 16 MB bound, 24 MB of pages in a copy.
        v = end(d, lambda: d.attack("hardlinks", dir="/workspace/links", n=3000, size=4097,
                                    timeout=120))
        check(v["verdict"] == "graded", "a copy within the bounds is graded: %s" % v)
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("a workspace name with a forged line, ESC, C1 and non-UTF-8 bytes: escaped in the text "
     "log, /verdict, /info, /metrics", lambda run: case_names(run, "text")),
    ("the same name under --log-format json: every entry parses, every string escaped",
     lambda run: case_names(run, "json")),
    ("a FIFO at 1,259 bytes, a FIFO and a socket past PATH_MAX, 129 levels of 250-byte names: "
     "agent_misbehavior blamed on the env, never the daemon", case_long_paths),
    ("3,000 names of one 4,097-byte file in a 16 MB workspace: the custody copy fits, graded",
     case_hardlinks),
    ("the env's output in the daemon's text log: its own lines, prefixed, episode said, "
     "escaped", lambda run: case_output_in_the_log(run, "text")),
    ("the same in the JSON log: container and episode_id fields, every string escaped",
     lambda run: case_output_in_the_log(run, "json")),
    ("--container-output none: the env's output in /logs only",
     lambda run: case_output_in_the_log(run, "text", quiet=True)),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
