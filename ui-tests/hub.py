"""A real JupyterHub for the browser tests: configurable-http-proxy from npm, a local spawner, a
dummy authenticator, two users, and a dask-gateway server registered as a hub service and
authenticated by the hub (as DaskHub sets them up), all on loopback. Each user's server is a real
JupyterLab with dashdock, under ``/user/<name>/``."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from lab import ROOT, _terminate, _wait_for_http, free_ports, write_jupyter_config

PASSWORD = "hub-test-password"
ADMIN_TOKEN = "hub-test-admin-token-0d9c"
GATEWAY_TOKEN = "hub-test-gateway-token-51ae"
USERS = ("alice", "bob")

_CONFIG = """
import sys
c = get_config()  # noqa: F821
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{api_port}"
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.JupyterHub.db_url = "sqlite:///{tmp}/hub.sqlite"
c.JupyterHub.cookie_secret_file = "{tmp}/cookie_secret"
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.Authenticator.allowed_users = set({users!r})
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = "{tmp}/home/{{username}}"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.args = ["--allow-root", "--LabApp.expose_app_in_browser=True"]
c.Spawner.environment = {{
    "JUPYTER_DATA_DIR": lambda spawner: "{tmp}/home/" + spawner.user.name + "/data",
    "JUPYTER_CONFIG_DIR": lambda spawner: "{tmp}/home/" + spawner.user.name + "/config",
    # What DaskHub gives notebooks: the gateway through the hub, authenticated by the hub.
    "DASK_GATEWAY__ADDRESS": "http://127.0.0.1:{port}/services/dask-gateway",
    "DASK_GATEWAY__PROXY_ADDRESS": "gateway://127.0.0.1:{gateway_tcp}",
    "DASK_GATEWAY__AUTH__TYPE": "jupyterhub",
}}
c.JupyterHub.services = [
    {{"name": "tests", "api_token": {admin_token!r}}},
    # dask-gateway as DaskHub runs it: a hub service, its proxy under /services/dask-gateway/.
    {{"name": "dask-gateway", "api_token": {gateway_token!r}, "url": "http://127.0.0.1:{gateway_proxy}"}},
]
c.JupyterHub.load_roles = [{{"name": "tests", "scopes": ["admin:users", "tokens"], "services": ["tests"]}}]
"""


_GATEWAY_CONFIG = """
from dask_gateway_server.options import Integer, Options
c = get_config()  # noqa: F821
# An option users choose per cluster, so the sidebar's form has a field the gateway acts on.
c.Backend.cluster_options = Options(
    Integer("worker_cores", default=1, min=1, max=2, label="Worker cores"),
    handler=lambda options: {{"worker_cores": options.worker_cores}},
)
c.DaskGateway.address = "127.0.0.1:{gateway_api}"
c.Proxy.address = "127.0.0.1:{gateway_proxy}"
c.Proxy.tcp_address = "127.0.0.1:{gateway_tcp}"
c.Proxy.prefix = "/services/dask-gateway"
c.DaskGateway.db_url = "sqlite:///{tmp}/gateway.sqlite"
c.DaskGateway.backend_class = "dask_gateway_server.backends.local.UnsafeLocalBackend"
c.ClusterConfig.cluster_max_workers = 2
# Dask ships `dask scheduler` / `dask worker` (no dask-scheduler script any more).
c.ClusterConfig.scheduler_cmd = [{dask!r}, "scheduler"]
c.ClusterConfig.worker_cmd = [{dask!r}, "worker"]
c.DaskGateway.authenticator_class = "dask_gateway_server.auth.JupyterHubAuthenticator"
c.JupyterHubAuthenticator.jupyterhub_api_token = {gateway_token!r}
c.JupyterHubAuthenticator.jupyterhub_api_url = "http://127.0.0.1:{hub_port}/hub/api"
"""


@dataclass
class Hub:
    url: str  # http://127.0.0.1:PORT/
    process: subprocess.Popen[bytes]
    log: Path
    gateway: subprocess.Popen[bytes]

    def token_for(self, user: str) -> str:
        """A new API token of ``user``, made by the hub."""
        request = urllib.request.Request(
            f"{self.url}hub/api/users/{user}/tokens",
            method="POST",
            data=json.dumps({"note": "tests"}).encode(),
            headers={"Authorization": f"token {ADMIN_TOKEN}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["token"]


def start_hub(tmp: Path) -> Hub:
    proxy = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
    assert proxy.exists(), "configurable-http-proxy comes from npm with `jlpm install` (make build)"
    names = ("port", "hub_port", "api_port", "gateway_api", "gateway_proxy", "gateway_tcp")
    ports = dict(zip(names, free_ports(len(names)), strict=True))
    port = ports["port"]
    dask = str(Path(sys.executable).parent / "dask")
    values = {**ports, "tmp": tmp, "gateway_token": GATEWAY_TOKEN, "dask": dask}
    config = tmp / "jupyterhub_config.py"
    config.write_text(
        _CONFIG.format(**values, proxy=str(proxy), password=PASSWORD, users=USERS, admin_token=ADMIN_TOKEN)
    )
    gateway_config = tmp / "dask_gateway_config.py"
    gateway_config.write_text(_GATEWAY_CONFIG.format(**values))
    for user in USERS:
        (tmp / "home" / user).mkdir(parents=True)
        write_jupyter_config(tmp / "home" / user / "config")
    log = tmp / "hub.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    with (tmp / "gateway.log").open("wb") as out:
        gateway = subprocess.Popen(
            [sys.executable, "-m", "dask_gateway_server", "-f", str(gateway_config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    url = f"http://127.0.0.1:{port}/"
    _wait_for_http(url + "hub/api/", timeout=120)
    return Hub(url, process, log, gateway)


def stop_hub(hub: Hub) -> None:
    _terminate(hub.gateway)
    _terminate(hub.process)
