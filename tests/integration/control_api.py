# SPDX-License-Identifier: LGPL-2.1-or-later
"""openenvd's control API (not OpenEnv's) from a client script that was given
only a base URL with credentials (http://openenv:TOKEN@HOST:PORT): the token
goes as Bearer, no proxy is used. Shared by openenv_client.py and
coding_client.py (each finds it beside itself)."""
import json
import urllib.parse
import urllib.request


def control(base, method, path, timeout=300):
    parts = urllib.parse.urlsplit(base)
    url = "http://%s:%d%s" % (parts.hostname, parts.port, path)
    req = urllib.request.Request(url, data=b"" if method == "POST" else None, method=method,
                                 headers={"Authorization": "Bearer " + (parts.password or "")})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=timeout) as r:
        return json.loads(r.read())
