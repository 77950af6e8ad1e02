#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: deploy/kubernetes passes deploy/kubernetes/check/k8s-check.py (one
case per manifest and per check), and every case of negative.yaml (the same
tree broken on purpose) makes the check fail with the expected message.

  k8s-manifests.py OPENENVCTL
"""
import copy
import importlib
import os
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from k8slib import HERE, REPO, TREE, load_check  # noqa: E402

UNIT = os.path.join(REPO, "examples/echo/openenv.yaml")


def walk(doc, path):
    """The container of path[-1] and that key, creating maps on the way."""
    for p in path[:-1]:
        doc = doc[p] if isinstance(p, int) else doc.setdefault(p, {})
    return doc, path[-1]


def mutate(root, case, yaml):
    """Applies one negative case to the copy at root; returns the options file."""
    options = os.path.join(REPO, "deploy/docker/least-privilege.options")
    if "options" in case:
        copy_opts = os.path.join(root, "..", "least-privilege.options")
        with open(options) as f, open(copy_opts, "w") as out:
            out.write(f.read() + "\n".join(case["options"]) + "\n")
        return copy_opts
    path = os.path.join(root, case["file"])
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    hits = [d for d in docs if d.get("kind") == case["kind"] and
            ("object" not in case or d["metadata"]["name"] == case["object"])]
    if not hits:
        raise SystemExit("negative case %r: no %s in %s" % (case["name"], case["kind"], case["file"]))
    doc = hits[0]
    if "set" in case:
        parent, key = walk(doc, case["set"])
        parent[key] = copy.deepcopy(case["value"])
    elif "delete" in case:
        parent, key = walk(doc, case["delete"])
        del parent[key]
    elif "append" in case:
        parent, key = walk(doc, case["append"])
        parent.setdefault(key, []).append(copy.deepcopy(case["value"]))
    elif "replace" in case:
        parent, key = walk(doc, case["replace"])
        lst = parent[key]
        lst[lst.index(case["from"])] = case["to"]
    with open(path, "w") as f:
        yaml.safe_dump_all(docs, f, sort_keys=False)
    return options


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    openenvctl = os.path.abspath(argv[1])
    try:
        importlib.import_module("kubernetes")  # python3-kubernetes: the API schema
        import yaml
    except ImportError as e:
        print("1..0 # SKIP %s (scripts/install-deps.sh installs python3-kubernetes)" % e)
        return 0
    check = load_check()
    with open(os.path.join(HERE, "negative.yaml")) as f:
        negatives = yaml.safe_load(f)

    good = check.run(TREE, openenvctl, UNIT)
    print("1..%d" % (len(good) + len(negatives)))
    print("# schema: %s" % check.api_version())
    n = 0
    for name, errs in good:
        n += 1
        print("%s %d - deploy/kubernetes: %s" % ("not ok" if errs else "ok", n, name))
        for e in errs:
            print("#   " + e)
    for case in negatives:
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "kubernetes")
            shutil.copytree(TREE, root, ignore=shutil.ignore_patterns("check", "__pycache__"))
            options = mutate(root, case, yaml)
            results = check.run(root, openenvctl, UNIT, options)
        errors = [e for _name, errs in results for e in errs]
        caught = [e for e in errors if case["expect"] in e]
        print("%s %d - rejects %s" % ("ok" if caught else "not ok", n, case["name"]))
        if caught:
            print("#   " + caught[0])
        else:
            print("#   expected an error containing %r; got %s" % (case["expect"], errors or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
