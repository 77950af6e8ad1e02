#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs every meson test of one or more build directories and counts cases.

Every test speaks TAP (Criterion with --tap=-, the fuzz replayers, the
integration scripts). Each TAP case counts once; a test without TAP counts as
one case by its exit status (77 = skipped). A test that crashes after some
cases, exits non-zero, misses its plan or times out adds a failure.

In CI (CI=true) a skipped case is counted as failed: a skipped kernel test
proves nothing. The last line is always `N passed, N failed, N skipped`.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

TAP_LINE = re.compile(r"^(not ok|ok)\b(.*)$")
TAP_PLAN = re.compile(r"^1\.\.(\d+)")


def in_ci():
    return os.environ.get("CI", "") in ("true", "1")


def run_one(test, log_dir, label, bdir):
    env = dict(os.environ)
    env.update(test.get("env") or {})
    timeout = test.get("timeout") or 300
    start = time.monotonic()
    # Like `meson test`: a test without a workdir runs in the build directory,
    # which is what relative paths of build targets in its args refer to.
    proc = subprocess.Popen(test["cmd"], cwd=test.get("workdir") or bdir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    elapsed = time.monotonic() - start
    text = out.decode("utf-8", "replace")
    with open(os.path.join(log_dir, label.replace("/", "_") + ".log"), "w") as f:
        f.write(text)

    passed = failed = skipped = 0
    failures = []
    plan = None
    seen = 0
    for line in text.splitlines():
        m = TAP_PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TAP_LINE.match(line)
        if not m:
            continue
        seen += 1
        rest = m.group(2)
        if "# SKIP" in rest or "# skip" in rest:
            if in_ci():
                failed += 1
                failures.append("skipped in CI:" + rest)
            else:
                skipped += 1
        elif m.group(1) == "ok":
            passed += 1
        else:
            failed += 1
            failures.append(rest.strip())
    rc = proc.returncode
    if seen == 0:
        if timed_out:
            failed += 1
            failures.append("timed out after %ss" % timeout)
        elif rc == 0:
            passed += 1
        elif rc == 77:
            if in_ci():
                failed += 1
                failures.append("skipped in CI")
            else:
                skipped += 1
        else:
            failed += 1
            failures.append("exit status %d" % rc)
    else:
        if timed_out:
            failed += 1
            failures.append("timed out after %ss" % timeout)
        elif rc != 0 and not failed:
            failed += 1
            failures.append("exit status %d although every case passed" % rc)
        if plan is not None and seen < plan and not timed_out:
            failed += 1
            failures.append("ran %d of %d planned cases (crash?)" % (seen, plan))
    return passed, failed, skipped, failures, elapsed, text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builddirs", nargs="+",
                    help="BUILDDIR or BUILDDIR:-suite,-suite to leave suites out of that build")
    ap.add_argument("--suite", action="append", default=[],
                    help="only these suites (repeatable)")
    ap.add_argument("--no-suite", action="append", default=[],
                    help="skip these suites (repeatable)")
    args = ap.parse_args()

    total = [0, 0, 0]
    for spec in args.builddirs:
        bdir, _, extra = spec.partition(":")
        left_out = {x[1:] for x in extra.split(",") if x.startswith("-")}
        tests = json.loads(subprocess.check_output(["meson", "introspect", "--tests", bdir]))
        log_dir = os.path.join(bdir, "test-logs")
        os.makedirs(log_dir, exist_ok=True)
        flavour = os.path.basename(os.path.normpath(bdir))
        for t in tests:
            suites = [s.split(":")[-1] for s in t.get("suite", [])]
            if args.suite and not set(suites) & set(args.suite):
                continue
            if set(suites) & (set(args.no_suite) | left_out):
                continue
            label = "%s/%s" % (flavour, t["name"])
            p, f, s, failures, elapsed, text = run_one(t, log_dir, label, bdir)
            total[0] += p
            total[1] += f
            total[2] += s
            status = "FAIL" if f else "ok"
            print("%-4s %-48s %4d passed %3d failed %3d skipped  %6.1fs"
                  % (status, label, p, f, s, elapsed), flush=True)
            if f:
                for line in failures[:20]:
                    print("     - " + line)
                tail = text.strip().splitlines()[-25:]
                print("     --- last lines of %s/%s.log ---" % (log_dir, label.replace("/", "_")))
                for line in tail:
                    print("     | " + line)
    print("%d passed, %d failed, %d skipped" % tuple(total))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
