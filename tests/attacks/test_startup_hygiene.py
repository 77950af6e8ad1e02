#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack (by misconfiguration): start the daemon wrong, and see what it leaves.

Manifest errors used to name `openenv.yaml` whatever file was given; the
model key file must survive a start that fails (so that it can be retried)
and be gone once the daemon started; a bad --model-url must stop the daemon
before anything starts.

Must not happen: an error line naming another file than the one given; a
bad or unresolvable --model-url accepted, or anything started for it (state,
cgroups, the key file consumed); the key file deleted by a start that
failed, or kept by one that succeeded; the key in the daemon's output;
anything left behind.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

BAD = """spec_version: 1
name: bad
port: 8000
openenvd:
  zonez: {}
"""


def good(run, workdir=None, host_root=None):
    """A unit of one attacker env (workdir: its start directory; host_root:
    the containers' root is the host's, as argv() says)."""
    return run.manifest(A.manifest_head("startup", kill_deadline_s=None) + """\
    agent:
      containers:
        env:
          argv: %s
""" % A.argv("env", "8000", host_root=host_root) +
        ("          workdir: %s\n" % workdir if workdir else ""))


class Result:
    def __init__(self, args, cwd, timeout):
        p = subprocess.Popen([A.OPENENVD, "--shim", A.SHIM] + args, cwd=cwd, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        self.stdout, self.stderr = p.communicate(timeout=timeout)
        self.returncode = p.returncode
        # Its cgroup subtree, had it made one (beside the test's own cgroup).
        self.subtree = "/sys/fs/cgroup/unified/openenvd-%d" % p.pid


def openenvd(args, cwd=None, timeout=60):
    return Result(args, cwd, timeout)


def case_manifest_errors_name_the_file(run):
    d = run.path("deep", "er")
    os.makedirs(d)
    path = os.path.join(d, "my-unit.yaml")
    with open(path, "w") as f:
        f.write(BAD)
    for given, cwd in ((path, None), ("deep/er/my-unit.yaml", run.dir)):
        r = openenvd(["--manifest", given, "--state", run.path("never")], cwd=cwd)
        check(r.returncode == 2, "exit 2: %s %s" % (r.returncode, r.stderr))
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        check(lines and all(line.startswith(given + ":") for line in lines),
              "every error names %s:\n%s" % (given, r.stderr))
        check(any(re.match(re.escape(given) + r":5:3: openenvd: unknown key 'zonez'", line)
                  for line in lines), "with line and column:\n%s" % r.stderr)
    check(not os.path.exists(run.path("never")), "nothing was started for a bad manifest")


def key_file(run, name="key"):
    p = run.path(name)
    with open(p, "w") as f:
        f.write("sk-startup-" + name + "\n")
    return p


def case_bad_model_url(run):
    m = good(run)
    key = key_file(run)
    for url, code, words in (("ftp://x", 2, "scheme"), ("http://", 2, "no host"),
                             ("https://a b", 2, "not a host"), ("1.2.3.4", 2, "a port is needed"),
                             ("http://x:99999", 2, "not a port"),
                             ("https://no-such-host.invalid", 1, "--model-url")):
        r = openenvd(["--manifest", m, "--state", run.path("never"), "--port",
                      str(A.free_port()), "--model-url", url, "--model-key-file", key])
        check(r.returncode == code, "--model-url %s: exit %s, not %s: %s"
              % (url, r.returncode, code, r.stderr))
        check("--model-url" in r.stderr and words in r.stderr, "--model-url %s: %s"
              % (url, r.stderr))
        check(os.path.exists(key), "--model-url %s consumed the key file" % url)
        check(not os.path.exists(r.subtree), "--model-url %s left %s" % (url, r.subtree))
    check(not os.path.exists(run.path("never")), "no state for a bad --model-url")


def case_model_key_kept_until_started(run):
    m = good(run)
    key = key_file(run)
    secret = A.read(key).strip()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    stub = socket.socket()
    stub.bind(("127.0.0.1", 0))
    stub.listen(8)
    url = "127.0.0.1:%d" % stub.getsockname()[1]
    try:
        # Fails late (its port is taken), after reading the key: kept.
        d = A.Daemon(run, m, port=port, args=["--model-url", url, "--model-key-file", key],
                     wait=False)
        d.proc.wait(60)
        check(d.proc.returncode == 1, "a taken port fails the start: %s\n%s"
              % (d.proc.returncode, d.tail()))
        check(os.path.exists(key), "a start that failed deleted the key file")
        m_uids = re.search(r"host uids (\d+)-(\d+)", A.read(d.log) or "")
        d.uids = (int(m_uids.group(1)), int(m_uids.group(2))) if m_uids else None
        d.assert_nothing_left()
        # Starts: the key file is gone once it serves.
        d = A.Daemon(run, m, args=["--model-url", url, "--model-key-file", key])
        check(not os.path.exists(key), "a started daemon kept the key file")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
        for f in (d.log, d.out):
            check(secret not in (A.read(f) or ""), "the key is in %s" % f)
    finally:
        taken.close()
        stub.close()
        shutil.rmtree(run.path("never"), ignore_errors=True)


def case_enforcement_require_never_steps_aside(run):
    # A daemon that cannot isolate (not root: no namespaces to make) steps
    # aside; a manifest listing any of RFC 009's guarantees in
    # enforcement.require must make it refuse instead (exit 3, named).
    unit = run.path("require")
    os.makedirs(unit)
    os.chmod(unit, 0o755)
    # A copy nobody can run wherever the clone is (a 0700 home, say).
    daemon = os.path.join(unit, "openenvd")
    shutil.copy(A.OPENENVD, daemon)
    os.chmod(daemon, 0o755)

    def start(require):
        m = os.path.join(unit, "%s.yaml" % ("required" if require else "plain"))
        with open(m, "w") as f:
            f.write("spec_version: 1\nname: req\nport: 8000\n" +
                    ("openenvd:\n  enforcement: {require: [asset_isolation, egress_control]}\n"
                     if require else ""))
        os.chmod(m, 0o644)
        return subprocess.run([daemon, "--manifest", m, "--", "/bin/true"], cwd=unit,
                              capture_output=True, text=True, timeout=60,
                              preexec_fn=lambda: (os.setgroups([]), os.setgid(65534),
                                                  os.setuid(65534)))
    r = start(False)
    check(r.returncode == 0 and "isolation disabled" in r.stderr,
          "without it: steps aside (exec /bin/true): %s %s" % (r.returncode, r.stderr))
    r = start(True)
    check(r.returncode == 3 and "refusing to start (the manifest's enforcement.require: "
          "asset_isolation, egress_control)" in r.stderr, "with it: exit 3, named: %s %s"
          % (r.returncode, r.stderr))


def case_env_start_directory_the_containers_do_not_see(run):
    # A clone under /tmp: the env would start in a directory that its
    # container's own /tmp hides, and every episode would fail at chdir.
    # Refused before anything starts, with the path and what to do; the
    # manifest's workdir for env makes it fine.
    hidden = tempfile.mkdtemp(prefix="openenvd-hidden.", dir="/tmp")
    try:
        os.chmod(hidden, 0o755)
        r = openenvd(["--manifest", good(run), "--state", run.path("never"), "--port",
                      str(A.free_port()), "--listen", "127.0.0.1"], cwd=hidden)
        check(r.returncode == 2, "exit 2: %s %s" % (r.returncode, r.stderr))
        check("the env server would start in %s" % hidden in r.stderr and
              "/tmp there is the container's own" in r.stderr and "workdir:" in r.stderr,
              "the path, the reason and what to do: %s" % r.stderr)
        check(not os.path.exists(r.subtree), "left %s" % r.subtree)
        check(not os.path.exists(run.path("never")), "nothing was started")
        d = A.Daemon(run, good(run, workdir="/", host_root=run), rootfs=False, cwd=hidden)
        check(d.phase() == "ready", "with workdir: / it starts: %s" % d.phase())
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        shutil.rmtree(hidden, ignore_errors=True)
        shutil.rmtree(run.path("never"), ignore_errors=True)


CASES = [
    ("manifest errors name the file as given (absolute and relative), with line and column",
     case_manifest_errors_name_the_file),
    ("a bad or unresolvable --model-url stops the daemon before anything starts",
     case_bad_model_url),
    ("the model key file survives a failed start and is gone after a successful one",
     case_model_key_kept_until_started),
    ("an env start directory below /tmp is refused before anything starts, with what to do",
     case_env_start_directory_the_containers_do_not_see),
    ("enforcement.require (RFC 009's guarantees) refuses to step aside when it cannot isolate",
     case_enforcement_require_never_steps_aside),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
