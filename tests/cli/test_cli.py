#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""openenvctl's command line as a user and a machine meet it: usage errors,
exit codes (docs/CLI.md), the text and --json forms of `manifest validate`.
TAP on stdout. argv[1] is the openenvctl binary."""
import json
import os
import re
import subprocess
import sys
import tempfile

CTL = sys.argv[1]
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VALID = os.path.join(TESTS, "manifests", "valid", "full.yaml")
INVALID = os.path.join(TESTS, "manifests", "invalid", "after-cycle.yaml")

cases = []


def case(fn):
    cases.append(fn)
    return fn


def run(*args):
    return subprocess.run([CTL, *args], capture_output=True, text=True, timeout=60)


@case
def no_arguments_is_usage_exit_2():
    r = run()
    assert r.returncode == 2, r
    assert "Usage:" in r.stderr + r.stdout and "docs/CLI.md" in r.stderr + r.stdout


@case
def unknown_command_is_usage_exit_2():
    r = run("frobnicate")
    assert r.returncode == 2, r


@case
def help_exits_0_on_stdout():
    r = run("--help")
    assert r.returncode == 0 and "manifest validate" in r.stdout, r


@case
def group_help_exits_0_on_stdout():
    for group in ("manifest", "check"):
        r = run(group, "--help")
        assert r.returncode == 0 and "openenvctl %s " % group in r.stdout and not r.stderr, r


@case
def version_exits_0_on_stdout():
    r = run("--version")
    assert r.returncode == 0 and not r.stderr, r
    assert re.fullmatch(r"openenvctl \d+\.\d+\.\d+( \(git [0-9a-f]{12}(-dirty)?\))?\n",
                        r.stdout), r


@case
def unknown_option_names_it_exit_2():
    r = run("manifest", "validate", VALID, "--frob")
    assert r.returncode == 2 and "'--frob'" in r.stderr, r


@case
def valid_manifest_text_and_json():
    r = run("manifest", "validate", VALID)
    assert r.returncode == 0 and ": valid" in r.stdout, r
    r = run("manifest", "validate", "--json", VALID)
    assert r.returncode == 0, r
    doc = json.loads(r.stdout)
    assert "zones" in doc and "port" in doc, doc


@case
def invalid_manifest_names_file_line_key():
    r = run("manifest", "validate", INVALID)
    assert r.returncode == 2, r
    first = r.stderr.splitlines()[0]
    file, line, col, rest = first.split(":", 3)
    assert file == INVALID and int(line) > 0 and int(col) > 0 and rest.strip(), first
    assert r.stderr.rstrip().endswith("error)") or r.stderr.rstrip().endswith("errors)")


@case
def invalid_manifest_json_lists_every_error():
    text = run("manifest", "validate", INVALID).stderr.splitlines()[:-1]
    r = run("manifest", "validate", INVALID, "--json")
    assert r.returncode == 2, r
    doc = json.loads(r.stdout)
    assert doc["file"] == INVALID and doc["valid"] is False and doc["truncated"] is False
    assert len(doc["errors"]) == len(text) >= 1, (doc, text)
    for e, line in zip(doc["errors"], text):
        assert line == f'{INVALID}:{e["line"]}:{e["column"]}: {e["path"]}: {e["message"]}', (e, line)


@case
def unreadable_manifest_exit_1():
    with tempfile.TemporaryDirectory() as d:
        r = run("manifest", "validate", os.path.join(d, "missing.yaml"))
        assert r.returncode == 1 and "cannot read" in r.stderr, r
        r = run("manifest", "validate", d)
        assert r.returncode == 1, r


@case
def validate_without_image_is_usage_exit_2():
    r = run("validate")
    assert r.returncode == 2, r


@case
def check_enforcement_takes_the_env_command_after_dash_dash():
    # A manifest with no app and no argv is valid only with "-- CMD", for
    # check enforcement as for manifest validate and openenvd.
    with tempfile.TemporaryDirectory() as d:
        m = os.path.join(d, "openenv.yaml")
        with open(m, "w") as f:
            f.write("spec_version: 1\nname: cmdonly\nport: 8000\n")
        args = ("check", "enforcement", "--manifest", m, "--state-parent", "/tmp")
        r = run(*args)
        assert r.returncode == 2 and "no argv and the manifest sets no app" in r.stderr, r
        assert run("manifest", "validate", m, "--", "/bin/true").returncode == 0
        # Past the manifest: as root the state parent under /tmp is refused
        # (exit 3), as another user isolation is unavailable (exit 3).
        r = run(*args, "--", "/bin/true")
        assert r.returncode == 3 and "no argv" not in r.stderr, r


def validate_json(*args):
    """validate --json with argv as bytes; (exit code, report)."""
    r = subprocess.run([os.fsencode(CTL), b"validate", b"--json", *args],
                       capture_output=True, timeout=60)
    return r.returncode, json.loads(r.stdout.decode("utf-8")), r


@case
def validate_report_keeps_a_target_that_is_not_utf8():
    # An image reference with byte 0xff: refused (not a reference), and its
    # report still has every key, the target escaped, distinct from U+FFFD.
    code, doc, r = validate_json(b"img\xff")
    assert code == 2 and doc["verdict"] == "unusable", r
    assert doc["target"] == "img\\xff", doc
    code, doc, r = validate_json("img\ufffd".encode())
    assert doc["target"] == "img\ufffd", doc
    code, doc, r = validate_json(b"img\\xff")
    assert doc["target"] == "img\\\\xff", doc


@case
def validate_usage_error_with_bytes_names_the_argument():
    code, doc, r = validate_json(b"--fr\xffob", b"img")
    assert code == 2 and doc["verdict"] == "unusable", r
    evidence = doc["results"][0]["evidence"]
    assert evidence == ["unusable input: usage: unknown option '--fr\\xffob'"], evidence
    code, doc, r = validate_json(b"--pids=\x01\xfe", b"img")
    evidence = doc["results"][0]["evidence"]
    assert evidence == ["unusable input: usage: invalid value for --pids=\\x01\\xfe: "
                        "'\\x01\\xfe'"], evidence
    assert b"try 'openenvctl validate --help'" in r.stderr, r


def main():
    print(f"1..{len(cases)}")
    failed = 0
    for i, fn in enumerate(cases, 1):
        try:
            fn()
            print(f"ok {i} - {fn.__name__}")
        except Exception as e:  # noqa: BLE001 - any failure is the case's
            failed += 1
            print(f"not ok {i} - {fn.__name__}")
            for line in repr(e).splitlines():
                print(f"# {line}")
    return 1 if failed else 0


sys.exit(main())
