#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks deploy/kubernetes offline: every field against the Kubernetes API
types of one stated version, then what openenvd needs of its pods.

The schema is the API types of Kubernetes release-1.22 as Debian packages
them: python3-kubernetes 22.6.0, whose kubernetes.client models are
generated from that release's OpenAPI document. Every object is decoded
strictly into those types: a field the type does not have, a value of the
wrong type (a number where the API wants a string: quote Quantities) or a
missing required field is an error, with its path. No cluster, no network.

Then the semantic checks (docs/SCALE.md says why each matters):
  least-privilege   the openenvd container's securityContext is
                    deploy/docker/least-privilege.options in Kubernetes' words
                    (each Docker option maps to a field, or the check fails)
  other-containers  every other container drops ALL and adds nothing
  seccomp-profile   the Localhost profile is the file the installer writes
  probes            startup and readiness GET /readyz, liveness GET /healthz,
                    on the port openenvd serves
  require-isolation --require-isolation
  token             each unit's token is a file from a Secret, only its own
  model-key         Secret -> init container -> memory emptyDir openenvd can
                    delete; the Secret is never in openenvd's container
  grace             terminationGracePeriodSeconds covers openenvd's shutdown
  resources         memory limit >= the unit manifest's zone ceilings + the
                    daemon's state tmpfs + memory emptyDirs; requests >= the
                    measured peak
  services          one Service per unit, on the right pod and port
  pod               no API token, no shared PID namespace, no host namespaces
  namespace         Pod Security Admission admits the pods (privileged)
  references        every Secret, ConfigMap, volume and $(VAR) exists

  k8s-check.py [--tap] [--openenvctl BIN --unit-manifest FILE] [--options F] [DIR]

DIR defaults to deploy/kubernetes. The Secrets are rendered with
DIR/make-secrets.sh for the StatefulSet's replica count and checked too.
Exit 0 when everything holds, 1 otherwise, 2 on usage errors.
"""
import argparse
import base64
import functools
import json
import os
import re
import subprocess
import sys
import tempfile

import kubernetes
import kubernetes.client
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(os.path.dirname(DEFAULT_DIR))
OPTIONS = os.path.join(REPO, "deploy/docker/least-privilege.options")

# openenvd facts the pods depend on (each names where it comes from).
# docs/DAEMON.md "Health": no token, < 100 ms in every phase. Startup and
# readiness ask whether an episode can serve; liveness whether the daemon
# answers (a unit whose env cannot start is not restarted for it).
PROBE_PATHS = {"startupProbe": "/readyz", "readinessProbe": "/readyz",
               "livenessProbe": "/healthz"}
# On SIGTERM openenvd kills the zones and waits at most 5 s for them to empty
# (cgroup_wait_empty() in cgroup_tree_destroy(), src/cgroup/cgroup-tree.c);
# measured 0.03-0.2 s. The grace period must cover the bound three times.
SHUTDOWN_BOUND_S = 5
MIN_GRACE_S = 3 * SHUTDOWN_BOUND_S
# The state tmpfs's base size (STATE_BASE_BYTES, src/daemon/daemon.c), charged
# to the pod's memory like every tmpfs.
STATE_TMPFS_MIB = 64
# One unit's measured peak (deploy/kubernetes/measure-footprint.py, docs/SCALE.md):
# cgroup subtree 76 MiB + 19 MiB of mapped files a fresh node's page cache
# charges to the pod.
MEASURED_PEAK_MIB = 95
SECCOMP_ROOT = "/var/lib/kubelet/seccomp"  # the kubelet's default --root-dir + seccomp/
PROFILE_NAME = "openenvd-seccomp.json"  # deploy/docker/, and in the image
STS_POD_LABEL = "statefulset.kubernetes.io/pod-name"

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
IANA_SVC_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
VAR_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
# Fields of type IntOrString: the models say 'object'.
INT_OR_STRING = {"port", "target_port", "max_unavailable", "max_surge"}


def api_version():
    report = kubernetes.client.Configuration().to_debug_report()
    m = re.search(r"Version of the API: (\S+)", report)
    return "Kubernetes %s (python3-kubernetes %s)" % (m.group(1) if m else "?",
                                                      kubernetes.__version__)


# --- strict decoding into the typed API objects ----------------------------------------


class Decoder:
    def __init__(self):
        self.errors = []

    def err(self, path, msg):
        self.errors.append("%s: %s" % (path or "<root>", msg))

    def decode(self, value, typ, path, attr=None):
        if value is None:
            return None
        if typ.startswith("list["):
            if not isinstance(value, list):
                return self.err(path, "expected a list, got %s" % type(value).__name__)
            return [self.decode(v, typ[5:-1], "%s[%d]" % (path, i)) for i, v in enumerate(value)]
        if typ.startswith("dict("):
            if not isinstance(value, dict):
                return self.err(path, "expected a map, got %s" % type(value).__name__)
            inner = typ[5:-1].split(", ", 1)[1]
            out = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    self.err(path, "map key %r is not a string" % (k,))
                out[k] = self.decode(v, inner, "%s.%s" % (path, k))
            return out
        if typ == "str":
            if not isinstance(value, str):
                return self.err(path, "expected a string, got %s %r" % (type(value).__name__, value))
            return value
        if typ == "int":
            if not isinstance(value, int) or isinstance(value, bool):
                return self.err(path, "expected an integer, got %r" % (value,))
            return value
        if typ == "float":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                return self.err(path, "expected a number, got %r" % (value,))
            return value
        if typ == "bool":
            if not isinstance(value, bool):
                return self.err(path, "expected true or false, got %r" % (value,))
            return value
        if typ in ("datetime", "date"):
            if not isinstance(value, str):
                return self.err(path, "expected a timestamp string, got %r" % (value,))
            return value
        if typ == "object":
            if attr in INT_OR_STRING and (not isinstance(value, (int, str)) or isinstance(value, bool)):
                return self.err(path, "expected an integer or a string, got %r" % (value,))
            return value
        cls = getattr(kubernetes.client, typ, None)
        if cls is None:
            return self.err(path, "no API type %s" % typ)
        if not isinstance(value, dict):
            return self.err(path, "expected a %s object, got %s" % (typ, type(value).__name__))
        json_to_attr = {j: a for a, j in cls.attribute_map.items()}
        kwargs = {}
        for key, v in value.items():
            attr_name = json_to_attr.get(key)
            sub = "%s.%s" % (path, key) if path else key
            if attr_name is None:
                self.err(sub, "unknown field '%s' (%s has: %s)" %
                         (key, typ, ", ".join(sorted(json_to_attr))))
                continue
            kwargs[attr_name] = self.decode(v, cls.openapi_types[attr_name], sub, attr_name)
        try:
            return cls(**kwargs)
        except ValueError as e:  # the models refuse a missing required field
            self.err(path, "%s: %s" % (typ, e))
            return None


def model_for(api, kind):
    """apps/v1 StatefulSet -> V1StatefulSet; v1 Service -> V1Service."""
    version = api.split("/")[-1]
    return version[0].upper() + version[1:] + kind


def decode_document(doc, where):
    d = Decoder()
    if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
        d.err(where, "not a Kubernetes object (apiVersion and kind)")
        return None, d.errors
    typ = model_for(str(doc["apiVersion"]), str(doc["kind"]))
    if getattr(kubernetes.client, typ, None) is None:
        d.err(where, "%s %s is not in the API" % (doc["apiVersion"], doc["kind"]))
        return None, d.errors
    obj = d.decode(doc, typ, "")
    meta = doc.get("metadata") or {}
    if not isinstance(meta, dict) or not DNS1123_SUBDOMAIN.match(str(meta.get("name", ""))):
        d.err("metadata.name", "must be a DNS-1123 subdomain")
    if doc["kind"] == "Secret":
        for k, v in (doc.get("data") or {}).items():
            try:
                base64.b64decode(str(v), validate=True)
            except ValueError:
                d.err("data." + k, "not base64")
    return obj, ["%s: %s" % (where, e) for e in d.errors]


# --- the set of objects ---------------------------------------------------------------------


class Tree:
    def __init__(self, root, options=OPTIONS):
        self.root = root
        self.options = options
        self.docs = []  # (source, raw dict)
        self.schema = []  # (case name, errors)

    def load(self):
        for name in sorted(os.listdir(self.root)):
            if name.endswith((".yaml", ".yml")):
                with open(os.path.join(self.root, name)) as f:
                    self.add(name, f.read())
        n = 1
        for _src, d in self.docs:
            if d.get("kind") == "StatefulSet":
                n = max(n, (d.get("spec") or {}).get("replicas") or 1)
        with tempfile.TemporaryDirectory() as tmp:
            key = os.path.join(tmp, "key")
            with open(key, "w") as f:
                f.write("sk-check-not-a-key\n")
            script = os.path.join(self.root, "make-secrets.sh")
            r = subprocess.run([script, str(n), key], capture_output=True, text=True)
            label = "make-secrets.sh %d (rendered)" % n
            if r.returncode != 0:
                self.schema.append((label, ["make-secrets.sh exited %d: %s" %
                                            (r.returncode, r.stderr.strip())]))
            else:
                self.add(label, r.stdout)

    def add(self, source, text):
        errors, kinds = [], []
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except yaml.YAMLError as e:
            self.schema.append((source, ["YAML: %s" % e]))
            return
        for i, doc in enumerate(docs):
            where = "%s#%d %s/%s" % (source, i, (doc or {}).get("kind"),
                                     ((doc or {}).get("metadata") or {}).get("name"))
            _obj, errs = decode_document(doc, where)
            errors += errs
            kinds.append("%s %s" % ((doc or {}).get("kind"), ((doc or {}).get("metadata") or {}).get("name")))
            if isinstance(doc, dict):
                self.docs.append((source, doc))
        self.schema.append(("%s (%s)" % (source, ", ".join(kinds)), errors))

    def of_kind(self, kind):
        return [d for _s, d in self.docs if d.get("kind") == kind]

    def find(self, kind, name):
        for d in self.of_kind(kind):
            if (d.get("metadata") or {}).get("name") == name:
                return d
        return None


def g(obj, *path, default=None):
    for p in path:
        if isinstance(obj, dict):
            obj = obj.get(p)
        elif isinstance(obj, list) and isinstance(p, int) and p < len(obj):
            obj = obj[p]
        else:
            return default
        if obj is None:
            return default
    return obj


def quantity_mib(q):
    """A memory Quantity in MiB (binary and decimal suffixes)."""
    m = re.match(r"^([0-9.]+)([a-zA-Z]*)$", str(q))
    if not m:
        raise ValueError("not a quantity: %r" % q)
    units = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024 ** 2,
             "Gi": 1024 ** 3, "Ti": 1024 ** 4}
    if m.group(2) not in units:
        raise ValueError("unknown suffix in %r" % q)
    return float(m.group(1)) * units[m.group(2)] / 1024 ** 2


def least_privilege_fields(options):
    """deploy/docker/least-privilege.options, each option mapped onto the
    Kubernetes securityContext field that grants the same (docs/SCALE.md)."""
    want = {"drop": set(), "add": set(), "seccomp": None, "procMount": None}
    unmapped = []
    with open(options) as f:
        for line in f:
            opt = line.strip()
            if not opt or opt.startswith("#"):
                continue
            if opt.startswith("--cap-drop="):
                want["drop"].add(opt.split("=", 1)[1])
            elif opt.startswith("--cap-add="):
                want["add"].add(opt.split("=", 1)[1])
            elif opt == "--security-opt=seccomp=SECCOMP_PROFILE":
                want["seccomp"] = {"type": "Localhost"}
            elif opt == "--security-opt=systempaths=unconfined":
                want["procMount"] = "Unmasked"
            elif opt == "--cgroupns=private":
                pass  # no field: private by default on cgroup v2 nodes (docs/SCALE.md)
            else:
                unmapped.append(opt)
    return want, unmapped


# --- semantic checks: each returns a list of errors ------------------------------------------


def unit_pod(sts):
    return g(sts, "spec", "template", "spec", default={})


def openenvd_container(pod):
    for c in pod.get("containers") or []:
        if (c.get("command") or [""])[0].endswith("/openenvd"):
            return c
    return None


def arg_value(c, flag):
    cmd = (c.get("command") or []) + (c.get("args") or [])
    for i, a in enumerate(cmd):
        if a == flag and i + 1 < len(cmd):
            return cmd[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def mount_for(c, path):
    """The volumeMount that holds `path` (longest mountPath prefix)."""
    best = None
    for m in c.get("volumeMounts") or []:
        mp = m.get("mountPath", "").rstrip("/")
        if path == mp or path.startswith(mp + "/"):
            if best is None or len(mp) > len(best["mountPath"].rstrip("/")):
                best = m
    return best


def volume(pod, name):
    for v in pod.get("volumes") or []:
        if v.get("name") == name:
            return v
    return None


def check_least_privilege(tree, sts):
    c = openenvd_container(unit_pod(sts))
    if not c:
        return ["no container runs /usr/local/bin/openenvd"]
    return container_least_privilege(tree.options, c)


def container_least_privilege(options, c):
    """What openenvd's container c lacks of the least-privilege set (or has
    beyond it); also for a container another tool makes (k8s-provider.py)."""
    errs = []
    want, unmapped = least_privilege_fields(options)
    for opt in unmapped:
        errs.append("%s: option %s has no Kubernetes mapping in this check" % (options, opt))
    sc = c.get("securityContext") or {}
    caps = sc.get("capabilities") or {}
    if set(caps.get("drop") or []) != want["drop"]:
        errs.append("capabilities.drop is %s, least-privilege.options says %s" %
                    (sorted(caps.get("drop") or []), sorted(want["drop"])))
    if set(caps.get("add") or []) != want["add"]:
        errs.append("capabilities.add is %s, least-privilege.options says %s (missing: %s, extra: %s)" %
                    (sorted(caps.get("add") or []), sorted(want["add"]),
                     sorted(want["add"] - set(caps.get("add") or [])),
                     sorted(set(caps.get("add") or []) - want["add"])))
    if want["seccomp"] and g(sc, "seccompProfile", "type") != "Localhost":
        errs.append("seccompProfile.type must be Localhost (openenvd-seccomp.json), is %r" %
                    g(sc, "seccompProfile", "type"))
    if want["procMount"] and sc.get("procMount") != want["procMount"]:
        errs.append("procMount must be %s (systempaths=unconfined), is %r" %
                    (want["procMount"], sc.get("procMount")))
    if sc.get("privileged"):
        errs.append("privileged: true is not the least-privilege set")
    if sc.get("runAsUser") != 0:
        errs.append("runAsUser must be 0: openenvd starts as root inside its pod")
    if sc.get("runAsNonRoot"):
        errs.append("runAsNonRoot: true contradicts runAsUser 0")
    if sc.get("readOnlyRootFilesystem") is not True:
        errs.append("readOnlyRootFilesystem must be true")
    # The API server's own rule (ValidateSecurityContext): no_new_privs beside
    # SYS_ADMIN is refused there when spelled CAP_SYS_ADMIN; refuse both here.
    if sc.get("allowPrivilegeEscalation") is False and \
            {"SYS_ADMIN", "CAP_SYS_ADMIN"} & set(caps.get("add") or []):
        errs.append("allowPrivilegeEscalation: false beside SYS_ADMIN (the API refuses it)")
    for cap in caps.get("add") or []:
        if cap.startswith("CAP_"):
            errs.append("capability %s: spell it without CAP_, as Kubernetes and Docker do" % cap)
    return errs


def check_other_containers(tree, sts):
    errs = []
    pods = [("StatefulSet " + sts["metadata"]["name"], unit_pod(sts))]
    pods += [("DaemonSet " + d["metadata"]["name"], g(d, "spec", "template", "spec", default={}))
             for d in tree.of_kind("DaemonSet")]
    for owner, pod in pods:
        main = openenvd_container(pod)
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            if c is main:
                continue
            where = "%s container %s" % (owner, c.get("name"))
            sc = c.get("securityContext") or {}
            if g(sc, "capabilities", "drop") != ["ALL"]:
                errs.append("%s: capabilities.drop must be [ALL]" % where)
            if g(sc, "capabilities", "add"):
                errs.append("%s: adds capabilities %s" % (where, g(sc, "capabilities", "add")))
            if sc.get("allowPrivilegeEscalation") is not False:
                errs.append("%s: allowPrivilegeEscalation must be false" % where)
            if sc.get("privileged"):
                errs.append("%s: privileged" % where)
            if sc.get("readOnlyRootFilesystem") is not True:
                errs.append("%s: readOnlyRootFilesystem must be true" % where)
            if g(sc, "seccompProfile", "type") not in ("RuntimeDefault", "Localhost"):
                errs.append("%s: seccompProfile must be RuntimeDefault or Localhost" % where)
            if sc.get("procMount") not in (None, "Default"):
                errs.append("%s: procMount %s" % (where, sc.get("procMount")))
    return errs


def check_seccomp_profile(tree, sts):
    errs = []
    c = openenvd_container(unit_pod(sts)) or {}
    want = g(c, "securityContext", "seccompProfile", "localhostProfile")
    if not want or os.path.basename(want) != PROFILE_NAME:
        return ["localhostProfile must name %s, is %r" % (PROFILE_NAME, want)]
    target = os.path.join(SECCOMP_ROOT, want)
    installed = False
    for ds in tree.of_kind("DaemonSet"):
        pod = g(ds, "spec", "template", "spec", default={})
        for c2 in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            script = " ".join(c2.get("command") or []) + " " + " ".join(c2.get("args") or [])
            for m in c2.get("volumeMounts") or []:
                v = volume(pod, m.get("name")) or {}
                host = g(v, "hostPath", "path")
                if not host:
                    continue
                dest = os.path.join(m["mountPath"], os.path.relpath(target, host)) \
                    if target.startswith(host.rstrip("/") + "/") else None
                if dest and re.search(r"\bmv\b.*\s%s(\s|$)" % re.escape(dest), script):
                    installed = True
        if installed and g(ds, "spec", "template", "spec", "nodeSelector") != g(
                sts, "spec", "template", "spec", "nodeSelector"):
            errs.append("DaemonSet %s runs on other nodes than the units (nodeSelector)" %
                        ds["metadata"]["name"])
    if not installed:
        errs.append("no DaemonSet installs %s (by mv onto it, from a hostPath volume)" % target)
    return errs


def container_port(c, port):
    """The containerPort a probe's or Service's port refers to."""
    for p in c.get("ports") or []:
        if port == p.get("name") or port == p.get("containerPort"):
            return p.get("containerPort")
    return None


def check_probes(tree, sts):
    errs = []
    c = openenvd_container(unit_pod(sts)) or {}
    served = arg_value(c, "--port")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        p = c.get(probe)
        if not p:
            errs.append("%s missing" % probe)
            continue
        get = p.get("httpGet")
        if not get:
            errs.append("%s: must be an httpGet" % probe)
            continue
        if get.get("path") != PROBE_PATHS[probe]:
            errs.append("%s: path %r, openenvd's route for it is %s"
                        % (probe, get.get("path"), PROBE_PATHS[probe]))
        if get.get("scheme", "HTTP") != "HTTP":
            errs.append("%s: scheme %s (openenvd serves plain HTTP)" % (probe, get.get("scheme")))
        port = container_port(c, get.get("port"))
        if port is None:
            errs.append("%s: port %r is not a port of the container" % (probe, get.get("port")))
        elif served is None or str(port) != served:
            errs.append("%s: port %s, openenvd serves --port %s" % (probe, port, served))
        if (p.get("timeoutSeconds") or 1) < 1:
            errs.append("%s: timeoutSeconds" % probe)
    return errs


def check_require_isolation(tree, sts):
    c = openenvd_container(unit_pod(sts)) or {}
    cmd = (c.get("command") or []) + (c.get("args") or [])
    env = {e.get("name"): e.get("value") for e in c.get("env") or []}
    if "--require-isolation" in cmd or env.get("OPENENVD_REQUIRE_ISOLATION") in ("1", "true"):
        return []
    return ["neither --require-isolation nor OPENENVD_REQUIRE_ISOLATION=1: a node that cannot "
            "isolate would run agent code unisolated"]


def check_token(tree, sts):
    errs = []
    pod = unit_pod(sts)
    c = openenvd_container(pod) or {}
    for e in c.get("env") or []:
        if e.get("name") == "OPENENVD_TOKEN" and "value" in e:
            errs.append("OPENENVD_TOKEN is a literal in the manifest, not from a Secret")
    path = arg_value(c, "--token-file")
    if not path:
        if not any(e.get("name") == "OPENENVD_TOKEN" and g(e, "valueFrom", "secretKeyRef")
                   for e in c.get("env") or []):
            errs.append("no --token-file and no OPENENVD_TOKEN from a secretKeyRef")
        return errs
    m = mount_for(c, path)
    v = volume(pod, m.get("name")) if m else None
    secret = g(v, "secret", "secretName")
    if not secret:
        return errs + ["--token-file %s is not on a Secret volume" % path]
    if m.get("mountPath") != path or m.get("subPathExpr") != "$(POD_NAME)":
        errs.append("the token mount must be one file, this unit's key: mountPath %s, "
                    "subPathExpr $(POD_NAME)" % path)
    pod_name = [e for e in c.get("env") or [] if e.get("name") == "POD_NAME"]
    if not pod_name or g(pod_name[0], "valueFrom", "fieldRef", "fieldPath") != "metadata.name":
        errs.append("POD_NAME must come from fieldRef metadata.name")
    if not m.get("readOnly"):
        errs.append("the token mount must be readOnly")
    if not path.startswith("/run/secrets/"):
        errs.append("--token-file %s: keep secrets under /run/secrets, which openenvd masks in "
                    "every zone" % path)
    s = tree.find("Secret", secret)
    if s is None:
        return errs + ["Secret %s is not rendered by make-secrets.sh" % secret]
    name, replicas = sts["metadata"]["name"], g(sts, "spec", "replicas", default=1)
    for i in range(replicas):
        if "%s-%d" % (name, i) not in (s.get("data") or {}):
            errs.append("Secret %s has no token for unit %s-%d" % (secret, name, i))
    return errs


def check_model_key(tree, sts):
    errs = []
    pod = unit_pod(sts)
    c = openenvd_container(pod) or {}
    path = arg_value(c, "--model-key-file")
    if not path:
        return [] if not arg_value(c, "--model-url") else ["--model-url without --model-key-file"]
    m = mount_for(c, path)
    v = volume(pod, m.get("name")) if m else None
    if not v or g(v, "emptyDir", "medium") != "Memory":
        return ["--model-key-file %s must be on a memory-backed emptyDir openenvd can delete it "
                "from (a Secret volume is read-only)" % path]
    if m.get("readOnly"):
        errs.append("the model key mount is readOnly: openenvd cannot delete the key")
    if not path.startswith("/run/secrets/"):
        errs.append("--model-key-file %s: keep secrets under /run/secrets" % path)
    rel = os.path.relpath(path, m["mountPath"])
    filled = False
    for ic in pod.get("initContainers") or []:
        into = [x for x in ic.get("volumeMounts") or [] if x.get("name") == m["name"]]
        src = [x for x in ic.get("volumeMounts") or []
               if g(volume(pod, x.get("name")), "secret", "secretName")]
        if into and src and os.path.join(into[0]["mountPath"], rel) in (ic.get("command") or []):
            filled = True
            secret = g(volume(pod, src[0]["name"]), "secret", "secretName")
            if tree.find("Secret", secret) is None:
                errs.append("Secret %s is not rendered by make-secrets.sh" % secret)
    if not filled:
        errs.append("no init container copies the key from a Secret volume into %s" % path)
    for mm in c.get("volumeMounts") or []:
        sec = g(volume(pod, mm.get("name")), "secret", "secretName")
        if sec and sec != g(volume(pod, (mount_for(c, arg_value(c, "--token-file") or "") or {})
                                   .get("name")), "secret", "secretName"):
            errs.append("Secret %s is mounted into openenvd's container: the key would outlive "
                        "openenvd's delete" % sec)
    return errs


def check_grace(tree, sts):
    grace = g(sts, "spec", "template", "spec", "terminationGracePeriodSeconds", default=30)
    if grace < MIN_GRACE_S:
        return ["terminationGracePeriodSeconds %d < %d: openenvd may wait %d s for its zones "
                "to empty on SIGTERM" % (grace, MIN_GRACE_S, SHUTDOWN_BOUND_S)]
    return []


@functools.lru_cache(maxsize=None)
def zone_ceilings_mib(openenvctl, manifest):
    out = subprocess.run([openenvctl, "manifest", "validate", manifest, "--json"],
                         capture_output=True, text=True, check=True).stdout
    zones = json.loads(out)["zones"]
    return sum(z["resources"]["memory_mb"] or 0 for z in zones.values()), \
        tuple((n, z["resources"]["memory_mb"]) for n, z in zones.items())


def check_resources(tree, sts, openenvctl=None, unit_manifest=None):
    errs = []
    pod = unit_pod(sts)
    c = openenvd_container(pod) or {}
    req = g(c, "resources", "requests", default={})
    lim = g(c, "resources", "limits", default={})
    for k in ("cpu", "memory"):
        if k not in req:
            errs.append("requests.%s missing" % k)
    if "memory" not in lim:
        return errs + ["limits.memory missing"]
    try:
        limit = quantity_mib(lim["memory"])
        if "memory" in req and quantity_mib(req["memory"]) < MEASURED_PEAK_MIB:
            errs.append("requests.memory %s is below the measured peak of one unit (%d MiB)" %
                        (req["memory"], MEASURED_PEAK_MIB))
        emptydirs = sum(quantity_mib(g(v, "emptyDir", "sizeLimit", default="0"))
                        for v in pod.get("volumes") or []
                        if g(v, "emptyDir", "medium") == "Memory")
    except ValueError as e:
        return errs + [str(e)]
    if openenvctl and unit_manifest:
        total, zones = zone_ceilings_mib(openenvctl, unit_manifest)
        need = total + STATE_TMPFS_MIB + emptydirs
        if limit < need:
            errs.append("limits.memory %s (%.0f MiB) < zone ceilings %s = %d MiB + state tmpfs %d "
                        "MiB + memory emptyDirs %.0f MiB = %.0f MiB: the pod's limit would bind "
                        "before openenvd's own" % (lim["memory"], limit, dict(zones), total,
                                                   STATE_TMPFS_MIB, emptydirs, need))
    return errs


def check_services(tree, sts):
    errs = []
    name = sts["metadata"]["name"]
    ns = sts["metadata"].get("namespace")
    replicas = g(sts, "spec", "replicas", default=1)
    c = openenvd_container(unit_pod(sts)) or {}
    headless = tree.find("Service", g(sts, "spec", "serviceName"))
    if not headless or g(headless, "spec", "clusterIP") != "None":
        errs.append("serviceName %r must name a headless Service" % g(sts, "spec", "serviceName"))
    per_unit = {}
    for svc in tree.of_kind("Service"):
        pod_name = g(svc, "spec", "selector", STS_POD_LABEL)
        if pod_name is None:
            continue
        if svc["metadata"].get("namespace") != ns:
            errs.append("Service %s is not in namespace %s" % (svc["metadata"]["name"], ns))
        per_unit.setdefault(pod_name, []).append(svc)
        for p in g(svc, "spec", "ports", default=[]):
            if container_port(c, p.get("targetPort", p.get("port"))) != int(arg_value(c, "--port") or 0):
                errs.append("Service %s: targetPort %r is not openenvd's port" %
                            (svc["metadata"]["name"], p.get("targetPort")))
    for i in range(replicas):
        pod_name = "%s-%d" % (name, i)
        if len(per_unit.pop(pod_name, [])) != 1:
            errs.append("unit %s needs exactly one Service (selector %s: %s)" %
                        (pod_name, STS_POD_LABEL, pod_name))
    for pod_name in per_unit:
        errs.append("a Service selects %s, which is not a unit (replicas %d)" % (pod_name, replicas))
    return errs


def check_pod(tree, sts):
    errs = []
    pod = unit_pod(sts)
    if pod.get("automountServiceAccountToken") is not False:
        errs.append("automountServiceAccountToken must be false: no API credentials in the pod")
    if pod.get("shareProcessNamespace"):
        errs.append("shareProcessNamespace: openenvd must be PID 1 of its container")
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(k):
            errs.append("%s: true" % k)
    for v in pod.get("volumes") or []:
        if "hostPath" in v:
            errs.append("volume %s is a hostPath" % v.get("name"))
    if g(pod, "securityContext", "sysctls"):
        errs.append("sysctls set")
    return errs


def check_namespace(tree, sts):
    ns = tree.find("Namespace", sts["metadata"].get("namespace"))
    if ns is None:
        return ["namespace %s is not defined here" % sts["metadata"].get("namespace")]
    level = g(ns, "metadata", "labels", "pod-security.kubernetes.io/enforce")
    if level != "privileged":
        return ["namespace %s: pod-security.kubernetes.io/enforce is %r; baseline and restricted "
                "refuse SYS_ADMIN and procMount Unmasked" % (ns["metadata"]["name"], level)]
    return []


def check_references(tree, sts):
    errs = []
    for src, d in tree.docs:
        pod = g(d, "spec", "template", "spec")
        if not pod:
            continue
        ns = d["metadata"].get("namespace")
        if tree.find("Namespace", ns) is None:
            errs.append("%s %s: namespace %s not defined" % (d["kind"], d["metadata"]["name"], ns))
        names = [v.get("name") for v in pod.get("volumes") or []]
        for v in pod.get("volumes") or []:
            s = g(v, "secret", "secretName")
            if s and tree.find("Secret", s) is None:
                errs.append("volume %s: Secret %s is neither here nor rendered" % (v["name"], s))
        for c in (pod.get("initContainers") or []) + (pod.get("containers") or []):
            if not DNS1123_LABEL.match(c.get("name", "")):
                errs.append("container name %r is not a DNS-1123 label" % c.get("name"))
            for p in c.get("ports") or []:
                if "name" in p and not IANA_SVC_NAME.match(p["name"]) or len(p.get("name", "")) > 15:
                    errs.append("port name %r is not an IANA service name" % p.get("name"))
            env = [e.get("name") for e in c.get("env") or []]
            for e in c.get("env") or []:
                ref = g(e, "valueFrom", "configMapKeyRef")
                if ref and ref.get("key") not in (g(tree.find("ConfigMap", ref.get("name")), "data") or {}):
                    errs.append("env %s: ConfigMap %s has no key %s" % (e["name"], ref.get("name"), ref.get("key")))
                ref = g(e, "valueFrom", "secretKeyRef")
                if ref and ref.get("key") not in (g(tree.find("Secret", ref.get("name")), "data") or {}):
                    errs.append("env %s: Secret %s has no key %s" % (e["name"], ref.get("name"), ref.get("key")))
            for s in (c.get("command") or []) + (c.get("args") or []):
                for var in VAR_REF.findall(s):
                    if var not in env:
                        errs.append("container %s: $(%s) is not one of its env" % (c["name"], var))
            seen = set()
            for m in c.get("volumeMounts") or []:
                if m.get("name") not in names:
                    errs.append("container %s: volumeMount %s has no volume" % (c["name"], m.get("name")))
                if m.get("mountPath") in seen:
                    errs.append("container %s: two mounts at %s" % (c["name"], m.get("mountPath")))
                seen.add(m.get("mountPath"))
                for var in VAR_REF.findall(m.get("subPathExpr", "")):
                    if var not in env:
                        errs.append("container %s: subPathExpr $(%s) is not one of its env" % (c["name"], var))
    return errs


SEMANTIC = [
    ("least-privilege", check_least_privilege),
    ("other-containers", check_other_containers),
    ("seccomp-profile", check_seccomp_profile),
    ("probes", check_probes),
    ("require-isolation", check_require_isolation),
    ("token", check_token),
    ("model-key", check_model_key),
    ("grace", check_grace),
    ("resources", check_resources),
    ("services", check_services),
    ("pod", check_pod),
    ("namespace", check_namespace),
    ("references", check_references),
]


def run(root, openenvctl=None, unit_manifest=None, options=OPTIONS):
    """[(case, [errors])] for the tree at root: schema cases, then semantic ones."""
    tree = Tree(root, options)
    tree.load()
    cases = [("schema: " + name, errs) for name, errs in tree.schema]
    units = tree.of_kind("StatefulSet")
    if not units:
        cases.append(("units", ["no StatefulSet of units"]))
    for sts in units:
        for name, fn in SEMANTIC:
            try:
                if fn is check_resources:
                    errs = fn(tree, sts, openenvctl, unit_manifest)
                else:
                    errs = fn(tree, sts)
            except (KeyError, TypeError, AttributeError, ValueError) as e:
                errs = ["check crashed on a malformed object: %r" % e]
            cases.append(("%s: StatefulSet %s" % (name, sts["metadata"]["name"]), errs))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", nargs="?", default=DEFAULT_DIR)
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--openenvctl")
    ap.add_argument("--unit-manifest")
    ap.add_argument("--options", default=OPTIONS, help="the docker run options (default: %(default)s)")
    args = ap.parse_args()
    if bool(args.openenvctl) != bool(args.unit_manifest):
        ap.error("--openenvctl and --unit-manifest go together")
    cases = run(args.dir, args.openenvctl, args.unit_manifest, args.options)
    failed = 0
    if args.tap:
        print("1..%d" % len(cases))
    print("# schema: %s" % api_version())
    for i, (name, errs) in enumerate(cases, 1):
        failed += bool(errs)
        if args.tap:
            print("%s %d - %s" % ("not ok" if errs else "ok", i, name))
        else:
            print("%-5s %s" % ("FAIL" if errs else "ok", name))
        for e in errs:
            print("#   " + e)
    if not args.tap:
        print("%d checks, %d failed" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
