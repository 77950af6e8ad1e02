# SPDX-License-Identifier: LGPL-2.1-or-later
"""Agent harness: uses the env's MCP surface and the model proxy, and tries
what agent code must not be able to do. Writes its findings to
/workspace/harness.json so the runner (and the tests) can see them.
"""
import json
import os
import socket
import urllib.error
import urllib.request

MCP_URL = os.environ.get("MCP_URL", "http://127.0.0.1:8000/mcp")
MODEL = os.environ.get("MODEL_BASE_URL", "http://127.0.0.1:8001")
KEY = os.environ.get("ANTHROPIC_API_KEY", "")
report = {}


def post(url, obj, headers=None):
    req = urllib.request.Request(url, data=json.dumps(obj).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, None
    except Exception as e:  # noqa: BLE001 - the harness reports, never crashes
        return str(e), None


status, tools = post(MCP_URL, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
report["mcp_status"] = status
report["tools"] = [t["name"] for t in (tools or {}).get("result", {}).get("tools", [])]
status, reply = post(MODEL + "/v1/messages", {"model": "stub", "max_tokens": 8,
                                              "messages": [{"role": "user", "content": "hi"}]},
                     {"x-api-key": KEY, "anthropic-version": "2023-06-01"})
report["model_status"] = status
report["model_text"] = ((reply or {}).get("content") or [{}])[0].get("text")
report["guessed_key_status"] = post(MODEL + "/v1/messages", {}, {"x-api-key": "sk-guess"})[0]
for name, path in [("oracle", "/opt/openenv-echo/assets/oracle.json"),
                   ("state", "/var/lib/openenvd")]:
    try:
        if os.path.isdir(path):
            report[name + "_readable"] = bool(os.listdir(path))
        else:
            with open(path) as f:
                report[name + "_readable"] = bool(f.read())
    except OSError:
        report[name + "_readable"] = False
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1).close()
    report["egress"] = True
except OSError:
    report["egress"] = False
report["key_in_env"] = any("real" in v for v in os.environ.values() if "KEY" in v)
with open("/workspace/harness.json", "w") as f:
    json.dump(report, f)
print(json.dumps(report))
