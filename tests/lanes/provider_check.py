# SPDX-License-Identifier: LGPL-2.1-or-later
"""Drives python/openenvd_provider.py with the real OpenEnv package. Run by
run-lanes.sh in the network namespace of the Docker daemon, where the port
the provider publishes on 127.0.0.1 is reachable:

  provider_check.py IMAGE    prints one JSON summary; exit 0 if it ran through

IMAGE is the real echo_env's image (scripts/build-image.sh --openenv).
OpenEnv's own path starts it: EchoEnv.from_docker_image(IMAGE,
provider=OpenenvdDockerProvider()) runs the container, waits for it and
connects the stock client with the provider's base URL (credentials in it);
a full episode follows, and close() stops and removes the container.

PYTHONPATH must hold OpenEnv's envs/ and src/ and its library tree (see
../shared/openenv-real/README.md); this file adds the repository's python/.
"""
import asyncio
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from echo_env import EchoEnv  # noqa: E402
from openenv.core.containers.runtime.providers import ContainerProvider  # noqa: E402
from openenvd_provider import OpenenvdDockerProvider, least_privilege_options  # noqa: E402


def inspect(cid):
    r = subprocess.run(["docker", "inspect", cid], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)[0]


def check_container(p, image, out):
    """What the provider ran, and how Docker runs it."""
    opts = least_privilege_options()
    token = p.token
    cmd = p.command
    # docker run -d --name N -p 127.0.0.1:PORT:8000 <options> -e ... IMAGE
    at = cmd.index("-p") + 2
    port = int(cmd[at - 1].split(":")[1])
    base = "http://openenv:%s@127.0.0.1:%d" % (token, port)
    out["base_url"] = base.replace(token, "TOKEN")
    out["base_url_ok"] = bool(re.fullmatch(r"http://openenv:TOKEN@127\.0\.0\.1:\d+",
                                           out["base_url"]))
    out["options_exact"] = (cmd[:4] == ["docker", "run", "-d", "--name"]
                            and cmd[at:at + len(opts)] == opts and cmd[-1] == image)
    out["token_not_in_argv"] = all(token not in a for a in cmd)
    hc = inspect(p.container_id)["HostConfig"]
    out["host_config"] = {k: hc.get(k) for k in ("Privileged", "CapAdd", "CapDrop",
                                                 "CgroupnsMode", "MaskedPaths",
                                                 "ReadonlyPaths", "PortBindings")}
    out["seccomp_profile_sent"] = any(o.startswith("seccomp=") and "pivot_root" in o
                                      for o in hc.get("SecurityOpt") or [])
    out["info"] = p.info(base)
    try:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
            f"http://127.0.0.1:{port}/info", timeout=10)
        out["info_without_token"] = 200
    except urllib.error.HTTPError as e:
        out["info_without_token"] = e.code
    return base


async def run(image, p, out):
    env = await EchoEnv.from_docker_image(image, provider=p)
    out["ready"] = True
    try:
        base = check_container(p, image, out)
        r = await env.reset()
        tools = sorted(t.name for t in await env.list_tools())
        said = await env.call_tool("echo_message", message="through the provider")
        state = await env.state()
        out["episode"] = {"reset_done": r.done, "tools": tools, "said": said,
                          "step_count": state.step_count}
        info = p.info(base)
        out["episode"]["phase"] = info["phase"]
        out["episode"]["actions"] = info["actions"]
    finally:
        cid = p.container_id
        await env.close()  # the provider stops and removes the container
        r = subprocess.run(["docker", "ps", "-aq", "--no-trunc", "--filter", f"id={cid}"],
                           capture_output=True, text=True)
        out["removed"] = r.returncode == 0 and not r.stdout.strip()


def main(image):
    out = {}
    p = OpenenvdDockerProvider()
    out["subclass"] = isinstance(p, ContainerProvider)
    try:
        asyncio.run(run(image, p, out))
    finally:
        if p.container_id:  # from_docker_image failed after docker run
            p.stop_container()
        print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
