# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the deploy tests share: deploy/kubernetes/check/k8s-check.py as a
module (its file name is a command's, not an importable one)."""
import importlib.util
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TREE = os.path.join(REPO, "deploy/kubernetes")


def load_check():
    spec = importlib.util.spec_from_file_location(
        "k8s_check", os.path.join(TREE, "check/k8s-check.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
