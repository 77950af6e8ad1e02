# SPDX-License-Identifier: LGPL-2.1-or-later
"""An OpenEnv container provider that starts an openenvd image isolated.

OpenEnv's ``LocalDockerProvider`` runs ``docker run -d --name N -p PORT:8000
[-e K=V] IMAGE`` and takes no other option. Under that command openenvd steps
aside: it runs the environment's own server, with no isolation. This provider
runs the same kind of image with the least-privilege options of
``deploy/docker/least-privilege.options`` (docs/LANES.md gives the reason for
each). It also generates an orchestrator token, passes it to the container as
``OPENENVD_TOKEN``, and hands the client::

    http://openenv:<TOKEN>@127.0.0.1:<PORT>

The token is the password of HTTP Basic credentials, as openenvd's control
API accepts it. The port is published on 127.0.0.1 only.

    from openenvd_provider import OpenenvdDockerProvider
    env = EchoEnv.from_docker_image("my-env:latest", provider=OpenenvdDockerProvider())

``ContainerProvider`` comes from the installed OpenEnv package (openenv-core)
at import time; nothing of OpenEnv is copied here. The module needs only the
standard library beyond that.
"""
from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

from openenv.core.containers.runtime.providers import ContainerProvider

__all__ = ["OpenenvdDockerProvider", "least_privilege_options"]

# deploy/docker next to this file's directory (the repository layout), else
# where the Debian package puts it (scripts/build-deb.sh), unless
# OPENENVD_DOCKER_DIR names another copy.
_REPO_DEPLOY = Path(__file__).resolve().parent.parent / "deploy" / "docker"
_DEPLOY = Path(os.environ.get("OPENENVD_DOCKER_DIR") or
               (_REPO_DEPLOY if _REPO_DEPLOY.is_dir() else "/usr/share/openenvd"))
_USER = "openenv"
_PORT_IN_IMAGE = 8000


def least_privilege_options(options_file: Optional[Path] = None,
                            seccomp_profile: Optional[Path] = None) -> List[str]:
    """The `docker run` options of least-privilege.options, with the
    SECCOMP_PROFILE placeholder replaced by the profile's absolute path."""
    options_file = Path(options_file or _DEPLOY / "least-privilege.options")
    profile = Path(seccomp_profile or options_file.parent / "openenvd-seccomp.json").resolve()
    if not profile.is_file():
        raise FileNotFoundError(f"seccomp profile {profile} not found")
    opts = []
    for line in options_file.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            opts.append(line.replace("SECCOMP_PROFILE", str(profile)))
    return opts


class OpenenvdDockerProvider(ContainerProvider):
    """Runs one openenvd image per provider with the least-privilege options.

    ``require_isolation`` (default True) sets OPENENVD_REQUIRE_ISOLATION=1:
    where Docker cannot grant what openenvd needs, the container exits 3 and
    ``wait_for_ready`` raises with openenvd's reasons. It never falls back
    silently to an env server without isolation.
    """

    def __init__(self, *, docker: str = "docker", options_file: Optional[Path] = None,
                 seccomp_profile: Optional[Path] = None, require_isolation: bool = True):
        self._docker = docker
        self._options = least_privilege_options(options_file, seccomp_profile)
        self._require_isolation = require_isolation
        self._container_id: Optional[str] = None
        self._token: Optional[str] = None
        self.command: Optional[List[str]] = None  # the last `docker run`, for logs and tests

    @property
    def token(self) -> Optional[str]:
        """The orchestrator token of the running container (also in base_url)."""
        return self._token

    @property
    def container_id(self) -> Optional[str]:
        return self._container_id

    def start_container(self, image: str, port: Optional[int] = None,
                        env_vars: Optional[Dict[str, str]] = None, **kwargs: Any) -> str:
        # OpenEnv's from_env() passes `workers` to every provider; a uvicorn
        # setting the image's entrypoint owns. Anything else is refused
        # rather than ignored: the options are fixed on purpose.
        kwargs.pop("workers", None)
        if kwargs:
            raise ValueError(f"unsupported options for OpenenvdDockerProvider: {sorted(kwargs)}")
        if self._container_id:
            raise RuntimeError("this provider already runs a container; stop it first")
        port = port or _free_port()
        token = secrets.token_urlsafe(32)
        name = "openenvd-%s-%d" % (image.split("/")[-1].split(":")[0], time.time_ns() // 1000)
        cmd = [self._docker, "run", "-d", "--name", name,
               "-p", f"127.0.0.1:{port}:{_PORT_IN_IMAGE}", *self._options,
               # The value comes from our environment, not argv: `ps` on this
               # machine does not show the token.
               "-e", "OPENENVD_TOKEN"]
        if self._require_isolation:
            cmd += ["-e", "OPENENVD_REQUIRE_ISOLATION=1"]
        for key, value in (env_vars or {}).items():
            if key == "OPENENVD_TOKEN":
                raise ValueError("OPENENVD_TOKEN is the provider's own")
            cmd += ["-e", f"{key}={value}"]
        cmd.append(image)
        self.command = cmd
        r = subprocess.run(cmd, capture_output=True, text=True,
                           env={**os.environ, "OPENENVD_TOKEN": token})
        if r.returncode != 0:
            raise RuntimeError(f"docker run failed (exit {r.returncode}): {r.stderr.strip()}")
        self._container_id = r.stdout.strip()
        self._token = token
        return f"http://{_USER}:{token}@127.0.0.1:{port}"

    def wait_for_ready(self, base_url: str, timeout_s: float = 30.0) -> None:
        """Polls /health (unauthenticated) until it answers 200, as OpenEnv's
        own providers do: openenvd answers it 503 until an episode can serve
        (and the env's own server answers it when openenvd steps aside).
        Raises RuntimeError with openenvd's log if the container exits (e.g.
        3: isolation unavailable), TimeoutError after timeout_s."""
        url = _strip_credentials(base_url) + "/health"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                with _open(url, timeout=2.0) as resp:
                    if resp.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            state = self._state()
            if state and not state.get("Running", False):
                raise RuntimeError(
                    "openenvd container exited %s:\n%s" % (state.get("ExitCode"), self._logs()))
            time.sleep(0.2)
        raise TimeoutError(f"openenvd at {url} not ready within {timeout_s}s")

    def info(self, base_url: str) -> Dict[str, Any]:
        """GET /info with the token: {"isolation": "on", ...}."""
        parts = urllib.parse.urlsplit(base_url)
        req = urllib.request.Request(_strip_credentials(base_url) + "/info",
                                     headers={"Authorization": f"Bearer {parts.password}"})
        with _open(req, timeout=10.0) as resp:
            return json.loads(resp.read())

    def stop_container(self) -> None:
        """docker stop (SIGTERM to openenvd, which ends the unit cleanly),
        then remove the container and its anonymous volumes."""
        if not self._container_id:
            return
        cid, self._container_id, self._token = self._container_id, None, None
        subprocess.run([self._docker, "stop", "-t", "30", cid], capture_output=True, timeout=60)
        subprocess.run([self._docker, "rm", "-f", "-v", cid], capture_output=True, timeout=60)

    def _state(self) -> Optional[Dict[str, Any]]:
        r = subprocess.run([self._docker, "inspect", "-f", "{{json .State}}", self._container_id],
                           capture_output=True, text=True)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def _logs(self) -> str:
        r = subprocess.run([self._docker, "logs", "--tail", "20", self._container_id],
                           capture_output=True, text=True)
        return (r.stdout + r.stderr).strip()


def _strip_credentials(base_url: str) -> str:
    parts = urllib.parse.urlsplit(base_url.rstrip("/"))
    netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _open(req, timeout: float):
    # Loopback only: never through a proxy from the environment.
    return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=timeout)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

