#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attack: spell a request target so that the token check and the env server disagree.

`POST /step#x` used to pass the token check and be relayed: the env ran a
step with no token and the unit's step hooks never saw it. Here raw requests
go to a real daemon's port, without a token, with the agent's and with the
orchestrator's: fragments and raw '#', escapes of '#', '/', NUL and
unreserved characters, dot and empty segments, absolute-form and
asterisk-form targets, bytes outside RFC 3986, tokens in the query.

Must not happen: a refused target answered other than 400, or its
connection left open; any request relayed without the right token; the env
server receiving a target other than the normalised one the daemon
authorised (no '#', no token parameter, no absolute URI, no dot segment);
a step the env ran that the unit did not count, or the reverse.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacklib as A  # noqa: E402
from attacklib import check  # noqa: E402

BODY = b'{"action": {"message": "x"}}'


def manifest(run):
    return run.manifest(A.manifest_head("request-targets") + """\
    agent:
      containers:
        env:
          argv: %s
""" % A.argv("env", "8000"))


def send(d, method, target, token=None, body=BODY, wait_close=True):
    """One raw request on a fresh connection: (status, connection closed after it)."""
    head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" \
           "Content-Length: %d\r\n" % (method, target, len(body))
    if token:
        head += "Authorization: Bearer %s\r\n" % token
    raw = head.encode("latin-1") + b"\r\n" + body
    s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
    try:
        s.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/1.1 ") else None
        length = 0
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v)
        while len(rest) < length:
            chunk = s.recv(4096)
            if not chunk:
                break
            rest += chunk
        if not wait_close:
            return status, None
        s.settimeout(3)
        try:
            closed = s.recv(1) == b""
        except socket.timeout:
            closed = False
        return status, closed
    finally:
        s.close()


REFUSED = [  # (method, target): 400 whatever the credentials, and closed
    ("POST", "/step#x"),
    ("POST", "/step#"),
    ("POST", "#/step"),
    ("POST", "/step?x=1#frag"),
    ("GET", "/info#x"),
    ("POST", "http://127.0.0.1/step"),
    ("POST", "http://127.0.0.1:8000/step"),
    ("OPTIONS", "*"),
    ("POST", "*"),
    ("POST", "//step"),
    ("POST", "/./step"),
    ("POST", "/x/../step"),
    ("POST", "/%2e%2e/step"),
    ("POST", "/st%00ep"),
    ("POST", "/step%2Fx"),
    ("POST", "/step\\x"),
    ("POST", "/st\"ep"),
    ("POST", "/st<ep>"),
    ("POST", "/st\x7fep"),
    ("POST", "/st\xe9p"),
    ("POST", "/step%"),
    ("POST", "/step%zz"),
    ("GET", "step"),
]


def case_refused_targets(run):
    d = A.Daemon(run, manifest(run), agent_token=True)
    try:
        before = d.info()["actions"]
        for method, target in REFUSED:
            for token in (None, A.AGENT_TOKEN, A.TOKEN):
                status, closed = send(d, method, target, token)
                check(status == 400, "%s %r (token %s) -> %s, not 400" % (method, target, token,
                                                                         status))
                check(closed, "%s %r (token %s): the connection stayed open after the 400"
                      % (method, target, token))
        # Refused for want of credentials: closed just the same (no body
        # is read on for a client that has no business here).
        for target, token, want in (("/step", None, 401), ("/st%65p", None, 401),
                                    ("/step", A.AGENT_TOKEN, 403), ("/info", None, 401)):
            status, closed = send(d, "POST", target, token)
            check(status == want and closed, "POST %s (token %s) -> %s, closed %s"
                  % (target, token, status, closed))
        seen = d.ok("GET", "/seen")
        check(seen["steps"] == 0, "the env ran %d steps from refused targets: %s"
              % (seen["steps"], seen["requests"]))
        check(d.info()["actions"] == before, "the unit counted actions from refused targets")
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


# (method, target, token, expected status, forwarded as, counted as an action)
AUTHORISED = [
    ("POST", "/st%65p", None, 401, None, False),
    ("POST", "/st%65p", "agent", 403, None, False),
    ("POST", "/step", "agent", 403, None, False),
    ("POST", "/st%65p", "orchestrator", 200, "POST /step HTTP/1.1", True),
    ("POST", "/%73tep/", "orchestrator", 200, "POST /step/ HTTP/1.1", True),
    ("POST", "/step?token=" + A.TOKEN, None, 401, None, False),
    ("POST", "/step?a=1&token=x", "orchestrator", 200, "POST /step?a=1 HTTP/1.1", True),
    ("POST", "/step%23x", None, 401, None, False),
    ("POST", "/step%23x", "orchestrator", 200, "POST /step%23x HTTP/1.1", False),
    ("GET", "/in%66o", None, 401, None, False),
    ("GET", "/in%66o", "orchestrator", 200, None, False),
    ("POST", "/%6Dcp", None, 401, None, False),
    ("POST", "/%6Dcp", "agent", 200, "POST /mcp HTTP/1.1", False),
    ("GET", "/health%7E", "agent", 403, None, False),
]


def case_normalised_is_what_is_authorised_and_forwarded(run):
    d = A.Daemon(run, manifest(run), agent_token=True)
    try:
        tokens = {None: None, "agent": A.AGENT_TOKEN, "orchestrator": A.TOKEN}
        counted = 0
        for method, target, who, want, forwarded, action in AUTHORISED:
            before = d.ok("GET", "/seen")["requests"]
            status, _ = send(d, method, target, tokens[who], wait_close=False)
            check(status == want, "%s %s (%s) -> %s, not %s" % (method, target, who, status, want))
            after = d.ok("GET", "/seen")["requests"][len(before):-1]
            if forwarded:
                check(after == [forwarded], "%s %s (%s) forwarded as %s, not %r"
                      % (method, target, who, after, forwarded))
            else:
                check(not after or target.startswith("/in"),
                      "%s %s (%s) reached the env as %s" % (method, target, who, after))
            counted += action
        seen = d.ok("GET", "/seen")
        for line in seen["requests"]:
            check("#" not in line and "token" not in line and "http:" not in line,
                  "the env received %r" % line)
        check(d.info()["actions"] == seen["steps"] == counted,
              "steps run %d, counted by the unit %d, expected %d"
              % (seen["steps"], d.info()["actions"], counted))
        rc, _ = d.stop()
        check(rc == 0, "clean exit")
    finally:
        d.kill()


CASES = [
    ("fragments, raw '#', absolute and '*' targets, dot/empty segments, escapes of NUL and '/', "
     "bytes outside RFC 3986: 400 and closed, never relayed, with any token", case_refused_targets),
    ("percent-escapes and query tokens: what is authorised is the normalised target, what is "
     "forwarded is exactly it, and every step the env runs is counted",
     case_normalised_is_what_is_authorised_and_forwarded),
]

if __name__ == "__main__":
    sys.exit(A.main(CASES))
