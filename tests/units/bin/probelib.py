# SPDX-License-Identifier: LGPL-2.1-or-later
"""Probes shared by the live-test units: each attempts something a zone must
(or must not) be able to do, from inside its container, and reports what
happened as JSON-able data. Nothing here decides pass/fail: the test does."""
import json
import os
import socket
import urllib.request


def read_file(path):
    try:
        with open(path, "rb") as f:
            return {"ok": True, "data": f.read(4096).decode("utf-8", "replace")}
    except OSError as e:
        return {"ok": False, "errno": e.errno}


def list_dir(path):
    try:
        return {"ok": True, "entries": sorted(os.listdir(path))[:50]}
    except OSError as e:
        return {"ok": False, "errno": e.errno}


def tcp_connect(host, port, timeout=2):
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "error": str(e)}


def unix_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(2)
        s.connect(path)
        return {"ok": True}
    except OSError as e:
        return {"ok": False, "errno": e.errno}
    finally:
        s.close()


def resolve(host):
    try:
        return {"ok": True, "addrs": sorted({a[4][0] for a in socket.getaddrinfo(host, 80)})}
    except OSError as e:
        return {"ok": False, "error": str(e)}


def http(method, url, body=None, headers=None, timeout=5):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return {"status": r.status, "body": r.read(4096).decode("utf-8", "replace")}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": ""}
    except Exception as e:  # noqa: BLE001 - a probe reports, never crashes
        return {"status": None, "error": str(e)}


def environ_of(pid):
    r = read_file("/proc/%s/environ" % pid)
    if r["ok"]:
        r["data"] = r["data"].replace("\0", "\n")
    return r


def probe_all(cfg):
    """cfg (from /opt/openenvd-test/run/probe.json, written by the test):
    assets (host paths), state_dir, canary_port, host_ip, service_socket,
    key_paths."""
    out = {"container": os.environ.get("OPENENVD_CONTAINER"), "uid": os.getuid()}
    out["assets"] = {p: read_file(p) for p in cfg.get("assets", [])}
    out["asset_dirs"] = {p: list_dir(p) for p in cfg.get("asset_dirs", [])}
    out["state_dir"] = list_dir(cfg["state_dir"])
    out["secrets"] = list_dir("/run/secrets")
    out["secret_file"] = read_file("/run/secrets/" + cfg.get("secret_name", "x"))
    out["canary_lo"] = tcp_connect("127.0.0.1", cfg["canary_port"])
    out["canary_host"] = tcp_connect(cfg["host_ip"], cfg["canary_port"])
    out["service_socket"] = unix_connect(cfg["service_socket"])
    out["svc_resolve"] = resolve("svc.local")
    out["svc_http"] = http("GET", "http://svc.local:80/", timeout=3)
    out["environ"] = dict(os.environ)
    out["proc1_environ"] = environ_of(1)
    out["key_files"] = {p: read_file(p) for p in cfg.get("key_paths", [])}
    return out


def load_cfg():
    with open("/opt/openenvd-test/run/probe.json") as f:
        return json.load(f)
