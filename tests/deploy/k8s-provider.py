#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""TAP: what OpenEnv's KubernetesProvider makes for an openenvd image,
checked offline as deploy/kubernetes is (docs/SCALE.md, "OpenEnv's
KubernetesProvider").

The Pod and Service below are the provider's own, transcribed from
huggingface/OpenEnv src/openenv/core/containers/runtime/kubernetes_provider.py
at 456edeb5 (_pod_manifest(), _service_manifest(), _ownership_labels(); the
module is in neither OpenEnv fixture, so it cannot be imported here), in the
API's field names. The cases prove what the docs claim of them:
  1. both are valid objects of the Kubernetes API types the check uses;
  2. as made, the Pod cannot isolate: its container lacks every
     least-privilege field openenvd needs (so openenvd steps aside, or with
     --require-isolation exits 3 and the provider's wait_for_ready raises);
  3. with the openenvd container's securityContext of deploy/kubernetes added
     (what a mutating admission policy keyed on the provider's managed-by
     label must add) it passes, and the Service targets the port openenvd
     serves there.
"""
import copy
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from k8slib import REPO, TREE, load_check  # noqa: E402

OPTIONS = os.path.join(REPO, "deploy/docker/least-privilege.options")
NAME = "openenv-connect4-env-1765000000000-a1b2"

LABELS = {"app.kubernetes.io/name": "openenv", "app.kubernetes.io/instance": NAME,
          "app.kubernetes.io/managed-by": "openenv", "app.kubernetes.io/part-of": "openenv",
          "app.kubernetes.io/component": "environment"}
POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": NAME, "namespace": "openenv", "labels": LABELS},
    "spec": {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "runtimeClassName": "kata",  # runtime_class_name passes through as is
        "containers": [{
            "name": "env", "image": "registry.invalid/connect4-env:openenvd",
            "ports": [{"name": "http", "containerPort": 8000}],
            "env": [{"name": "OPENENVD_TOKEN", "value": "a-token"}],
        }],
    },
}
SERVICE = {
    "apiVersion": "v1", "kind": "Service",
    "metadata": {"name": NAME, "namespace": "openenv", "labels": LABELS},
    "spec": {"selector": {"app.kubernetes.io/instance": NAME},
             "ports": [{"name": "http", "port": 8000, "targetPort": 8000, "protocol": "TCP"}]},
}


def main():
    try:
        import yaml
        k8s = load_check()
    except ImportError as e:
        ci = os.environ.get("CI", "") in ("true", "1")
        print("1..3")
        for i in range(1, 4):
            print("%s %d%s" % ("not ok" if ci else "ok", i,
                                " - %s" % e if ci else " # SKIP %s (python3-kubernetes)" % e))
        return 0
    cases = []
    errs = [e for doc in (POD, SERVICE) for e in k8s.decode_document(doc, doc["kind"])[1]]
    cases.append(("the provider's Pod and Service are valid API objects", errs))

    container = POD["spec"]["containers"][0]
    lacks = k8s.container_least_privilege(OPTIONS, container)
    want = ("capabilities.add", "seccompProfile.type", "procMount", "runAsUser")
    missing = [w for w in want if not any(w in e for e in lacks)]
    cases.append(("as the provider makes it, the Pod lacks what isolation needs (%s)"
                  % ", ".join(want), ["not reported as missing: %s" % missing] if missing else []))

    with open(os.path.join(TREE, "units.yaml")) as f:
        sts = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "StatefulSet"][0]
    ours = k8s.openenvd_container(k8s.unit_pod(sts))
    patched = copy.deepcopy(container)
    patched["securityContext"] = copy.deepcopy(ours["securityContext"])
    errs = k8s.container_least_privilege(OPTIONS, patched)
    port = k8s.arg_value(ours, "--port")
    if str(SERVICE["spec"]["ports"][0]["targetPort"]) != port:
        errs.append("the Service targets %s, openenvd serves --port %s" %
                    (SERVICE["spec"]["ports"][0]["targetPort"], port))
    cases.append(("with deploy/kubernetes' securityContext added it isolates; the Service "
                  "targets openenvd's port", errs))

    print("1..%d" % len(cases))
    for i, (name, errs) in enumerate(cases, 1):
        print("%s %d - %s" % ("not ok" if errs else "ok", i, name))
        for e in errs:
            print("# " + e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
