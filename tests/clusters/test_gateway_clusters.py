"""The user's dask-gateway clusters through {base_url}dashdock/api/clusters, next to the local ones.

The gateway is real: a ``dask-gateway-server`` process for this module, without JupyterHub (its
``SimpleAuthenticator`` takes any user name with basic auth, as dashdock sends it), its local
backend starting real ``dask scheduler`` and ``dask worker`` processes, its Go proxy serving the
dashboards. The Jupyter server under test talks to it as configured with ``c.DashdockApp.gateway_*``.
Waits are bounded polls for a condition (a gateway cluster takes seconds to start or resize), never
timing assertions.
"""

from __future__ import annotations

import base64
import contextlib
import getpass
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dask.config
import psutil
import pytest
from _ports import free_ports
from _support import Jupyter, closed_loopback_port
from test_clusters import START, clusters, eventually, listed_with, source_ids

from dashdock.notebook.environment import offer_gateway_settings

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

_GATEWAY_CONFIG = """
from dask_gateway_server.options import Integer, Options, Select

c = get_config()  # noqa: F821
c.DaskGateway.address = "127.0.0.1:{api}"
c.Proxy.address = "127.0.0.1:{proxy}"
c.Proxy.tcp_address = "127.0.0.1:{tcp}"
c.DaskGateway.backend_class = "dask_gateway_server.backends.local.UnsafeLocalBackend"
c.DaskGateway.authenticator_class = "dask_gateway_server.auth.SimpleAuthenticator"
c.LocalBackend.clusters_directory = {clusters!r}
c.ClusterConfig.cluster_max_workers = 2
c.ClusterConfig.worker_memory = "512 M"
c.ClusterConfig.scheduler_cmd = [{dask!r}, "scheduler"]
# Workers without a nanny: a process less each, on a small machine.
c.ClusterConfig.worker_cmd = [{dask!r}, "worker", "--no-nanny"]
# A stopped cluster's processes are asked to stop (SIGINT), then told (SIGTERM) sooner than by default.
c.LocalBackend.sigint_timeout = 3


def _options(options):
    environment = {{"DASHDOCK_TEST_ENV": options.environment}}
    return {{"worker_cores": options.worker_cores, "environment": environment}}


c.Backend.cluster_options = Options(
    Integer("worker_cores", 1, min=1, max=2, label="Worker cores"),
    Select("environment", ["basic", "extra"], default="basic", label="Environment"),
    handler=_options,
)
"""


@dataclass
class GatewayServer:
    """A running dask-gateway-server: its private API, its HTTP proxy (dashboards) and TCP proxy."""

    api: str  # http://127.0.0.1:PORT, the API server
    proxy: str  # http://127.0.0.1:PORT, where dashboards (and the API again) are served
    tcp: str  # gateway://127.0.0.1:PORT, the scheduler proxy
    process: subprocess.Popen[bytes]
    log: Path

    def request(self, method: str, path: str, payload: Any = None) -> Any:
        """Ask the gateway's API as the user dashdock authenticates as."""
        credentials = base64.b64encode(f"{getpass.getuser()}:".encode()).decode()
        request = urllib.request.Request(
            f"{self.api}/api/v1/{path}",
            method=method,
            data=None if payload is None else json.dumps(payload).encode(),
            headers={"Authorization": f"Basic {credentials}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        return json.loads(body) if body else None

    def submit(self) -> str:
        """A cluster made by someone else than dashdock (a notebook, say), with default options."""
        name: str = self.request("POST", "clusters/", {"cluster_options": {}})["name"]
        return name

    def active_clusters(self) -> list[str]:
        return list(self.request("GET", "clusters/?status=pending,running"))

    def stop_all(self) -> None:
        for name in self.active_clusters():
            with contextlib.suppress(urllib.error.HTTPError):
                self.request("DELETE", f"clusters/{name}")


def _wait_for_health(gateway: GatewayServer, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if gateway.process.poll() is not None:
            raise RuntimeError(f"dask-gateway-server exited:\n{gateway.log.read_text()}")
        try:
            with urllib.request.urlopen(f"{gateway.proxy}/api/health", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _end(processes: list[psutil.Process]) -> None:
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(processes, timeout=10)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayServer]:
    tmp = tmp_path_factory.mktemp("gateway")
    ports = dict(zip(("api", "proxy", "tcp"), free_ports(3), strict=True))
    dask_script = str(Path(sys.executable).parent / "dask")
    config = tmp / "dask_gateway_config.py"
    config.write_text(_GATEWAY_CONFIG.format(**ports, dask=dask_script, clusters=str(tmp / "clusters")))
    log = tmp / "gateway.log"
    env = {key: value for key, value in os.environ.items() if not key.startswith("DASK_GATEWAY__")}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "dask_gateway_server", "-f", str(config)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp,
            env=env,
            start_new_session=True,  # its own process group, ended as one
        )
    server = GatewayServer(
        api=f"http://127.0.0.1:{ports['api']}",
        proxy=f"http://127.0.0.1:{ports['proxy']}",
        tcp=f"gateway://127.0.0.1:{ports['tcp']}",
        process=process,
        log=log,
    )
    try:
        _wait_for_health(server)
        yield server
    finally:
        # The local backend starts each scheduler and worker in a session of its own: note them all
        # before the gateway goes, which stops its clusters as it shuts down; end any it leaves.
        descendants: list[psutil.Process] = []
        with contextlib.suppress(psutil.NoSuchProcess):
            descendants = psutil.Process(process.pid).children(recursive=True)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        _end([p for p in descendants if p.is_running()])


@pytest.fixture(autouse=True)
def _no_clusters_left(gateway: GatewayServer) -> Iterator[None]:
    """Each test starts from a gateway without clusters and leaves none behind."""
    gateway.stop_all()
    yield
    gateway.stop_all()


def gateway_traits(gateway: GatewayServer) -> dict[str, Any]:
    """dashdock's traits for this gateway, with basic auth as the user running the tests."""
    return {
        "gateway_address": gateway.api,
        # Dashboards are served by the gateway's HTTP proxy, not by its API server.
        "gateway_public_address": gateway.proxy,
        "gateway_proxy_address": gateway.tcp,
        "gateway_auth": "basic",
    }


@pytest.fixture
def dashdock_config(gateway: GatewayServer) -> dict[str, Any]:
    return gateway_traits(gateway)


# -- helpers ------------------------------------------------------------------------------------------


async def listing(jupyter: Jupyter) -> dict[str, Any]:
    code, body = await jupyter.api("GET", "clusters")
    assert code == 200, body
    return body


async def gateway_clusters(jupyter: Jupyter) -> list[dict[str, Any]]:
    return [c for c in await clusters(jupyter) if c["provider"] == "gateway"]


# -- the form -----------------------------------------------------------------------------------------


async def test_the_gateway_form_lists_the_gateways_cluster_options(jupyter: Jupyter) -> None:
    code, form = await jupyter.api("GET", "clusters/forms/gateway")
    assert code == 200, form
    assert form["provider"] == "gateway"
    assert form["fields"] == [
        {"name": "worker_cores", "label": "Worker cores", "type": "int", "default": 1, "min": 1, "max": 2},
        {
            "name": "environment",
            "label": "Environment",
            "type": "select",
            "default": "basic",
            "options": ["basic", "extra"],
        },
    ]


# -- the life of one gateway cluster -----------------------------------------------------------------


async def test_a_gateway_cluster_created_shown_scaled_adapted_and_stopped(
    jupyter: Jupyter, gateway: GatewayServer
) -> None:
    body = await listing(jupyter)
    assert body["gateway"] == {"address": gateway.api, "error": ""}
    assert body["clusters"] == []

    # A user fills in the form: two cores a worker, the "extra" environment, one worker.
    code, created = await jupyter.api(
        "POST",
        "clusters",
        {"provider": "gateway", "options": {"worker_cores": 2, "environment": "extra"}, "workers": 1},
    )
    assert code == 201, created
    assert created["provider"] == "gateway"
    assert created["status"] in ("starting", "running")
    cluster_id = created["id"]
    assert gateway.active_clusters() == [created["name"]]

    # The listing shows it running with its one worker (of two threads), and its dashboard as a source.
    cluster = await eventually(lambda: listed_with(jupyter, cluster_id, status="running", workers=1), START)
    assert cluster, await listing(jupyter)
    assert cluster["provider"] == "gateway"
    assert cluster["name"] == created["name"]
    assert cluster["threads"] == 2
    assert cluster["scheduler"].startswith(gateway.tcp)
    assert cluster["dashboard"] == f"{gateway.proxy}/clusters/{created['name']}/status"
    assert cluster["source"] == cluster_id
    assert cluster_id in await source_ids(jupyter)

    code, source = await jupyter.api("GET", f"sources/{cluster_id}")
    assert code == 200, source
    assert source["kind"] == "cluster"
    code, plots = await jupyter.api("GET", f"sources/{cluster_id}/plots")
    assert code == 200, plots
    assert "/individual-task-stream" in [plot["path"] for plot in plots["plots"]]
    for page in ("status", "individual-task-stream"):  # through dashdock's proxy and the gateway's
        response = await jupyter.proxied(f"dashdock/proxy/{cluster_id}/{page}")
        assert response.code == 200, (page, response.body[:500])
        assert b"bokeh" in response.body.lower(), page

    # Scaled to two workers, the listing shows two.
    code, scaled = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"workers": 2})
    assert code == 200, scaled
    assert await eventually(lambda: listed_with(jupyter, cluster_id, workers=2, adapt=None), START), (
        await listing(jupyter)
    )

    # Three is more than the gateway allows a cluster (its cluster_max_workers, under dashdock's
    # max_workers): the gateway keeps it at two, and the user is told why.
    code, limited = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"workers": 3})
    assert code == 200, limited
    assert "limit of 2 workers" in limited.get("warning", ""), limited
    assert await listed_with(jupyter, cluster_id, workers=2), await listing(jupyter)

    # Adaptive between none and two workers: the listing says so.
    bounds = {"minimum": 0, "maximum": 2}
    code, adapted = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"adapt": bounds})
    assert code == 200, adapted
    assert await listed_with(jupyter, cluster_id, adapt=bounds), await listing(jupyter)

    # Stopped: it leaves the listing, the gateway and the sources.
    code, body = await jupyter.api("DELETE", f"clusters/{cluster_id}")
    assert code == 204, body

    async def gone() -> bool:
        return cluster_id not in [c["id"] for c in await clusters(jupyter)]

    assert await eventually(gone, START), await listing(jupyter)
    assert cluster_id not in await source_ids(jupyter)
    code, _ = await jupyter.api("GET", f"sources/{cluster_id}/plots")
    assert code == 404
    assert await eventually(_async(lambda: not gateway.active_clusters()), START), gateway.active_clusters()


def _async(check: Any) -> Any:
    async def call() -> Any:
        return check()

    return call


async def test_a_gateway_cluster_created_adaptive_adapts_once_it_runs(
    jupyter: Jupyter, gateway: GatewayServer
) -> None:
    # The gateway starts a cluster without workers and resizes only running ones: dashdock gives
    # the new cluster its adaptive bounds as soon as it runs.
    bounds = {"minimum": 1, "maximum": 2}
    code, created = await jupyter.api("POST", "clusters", {"provider": "gateway", "adapt": bounds})
    assert code == 201, created
    cluster = await eventually(
        lambda: listed_with(jupyter, created["id"], status="running", adapt=bounds, workers=1), START
    )
    assert cluster, await listing(jupyter)
    assert cluster["threads"] == 1  # the form's default worker_cores
    code, _ = await jupyter.api("DELETE", f"clusters/{created['id']}")
    assert code == 204


async def test_a_gateway_cluster_made_elsewhere_is_listed_shown_by_the_users_source_and_stoppable(
    jupyter: Jupyter, gateway: GatewayServer
) -> None:
    # A notebook made a cluster on the gateway; the user added its dashboard as a source.
    name = gateway.submit()

    async def running() -> dict[str, Any] | None:
        found = [c for c in await gateway_clusters(jupyter) if c["name"] == name and c["dashboard"]]
        return found[0] if found else None

    cluster = await eventually(running, START)
    assert cluster, await listing(jupyter)
    assert cluster["status"] == "running"
    if cluster["source"] is None:  # no dashboard asked yet: its size is unknown, not 0
        assert (cluster["workers"], cluster["threads"], cluster["memory"]) == (None, None, None)
    added = await jupyter.add_source(cluster["dashboard"])

    # The listing points at the user's source: no second source of the same dashboard.
    async def shown_by_the_users_source() -> dict[str, Any] | None:
        return await listed_with(jupyter, cluster["id"], source=added["id"])

    assert await eventually(shown_by_the_users_source, START), await listing(jupyter)
    assert cluster["id"] not in await source_ids(jupyter)

    # Stopped from the sidebar, it stops on the gateway; the user's own source stays theirs.
    code, body = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204, body
    assert await eventually(_async(lambda: name not in gateway.active_clusters()), START)
    assert added["id"] in await source_ids(jupyter)


# -- what the API refuses -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, says",
    [
        ({"worker_memory": 4}, "worker_memory"),
        ({"worker_cores": "two"}, "Worker cores"),
        ({"worker_cores": 1.5}, "Worker cores"),
        ({"worker_cores": 3}, "Worker cores"),
        ({"environment": "gpu"}, "Environment"),
        ({"environment": 1}, "Environment"),
    ],
    ids=["unknown-option", "text-for-a-number", "fraction", "over-the-maximum", "not-an-option", "not-text"],
)
async def test_a_gateway_cluster_with_options_the_form_does_not_allow_is_a_bad_request(
    jupyter: Jupyter, gateway: GatewayServer, options: dict[str, Any], says: str
) -> None:
    code, body = await jupyter.api(
        "POST", "clusters", {"provider": "gateway", "options": options, "workers": 1}
    )
    assert code == 400, body
    assert says in body["message"]
    assert await clusters(jupyter) == []
    assert gateway.active_clusters() == []


async def test_an_unknown_provider_is_a_bad_request(jupyter: Jupyter, gateway: GatewayServer) -> None:
    code, body = await jupyter.api("POST", "clusters", {"provider": "nope", "workers": 1})
    assert code == 400, body
    assert "provider" in body["message"]
    assert await clusters(jupyter) == []
    assert gateway.active_clusters() == []


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
async def test_a_cluster_id_neither_provider_knows_is_not_found(jupyter: Jupyter, method: str) -> None:
    await listing(jupyter)  # as the sidebar does: the gateway's clusters are known from the listing
    payload = {"workers": 1} if method == "PATCH" else None
    code, body = await jupyter.api(method, "clusters/0000000000ab", payload)
    assert code == 404, body
    assert "cluster" in body["message"]


class TestDashdocksOwnWorkerLimit:
    """dashdock's max_workers holds for gateway clusters too, before the gateway is asked."""

    @pytest.fixture
    def dashdock_config(self, gateway: GatewayServer) -> dict[str, Any]:
        return {**gateway_traits(gateway), "max_workers": 1}

    async def test_a_gateway_cluster_over_it_is_refused_and_nothing_is_made(
        self, jupyter: Jupyter, gateway: GatewayServer
    ) -> None:
        for size in ({"workers": 2}, {"adapt": {"minimum": 0, "maximum": 2}}):
            code, body = await jupyter.api("POST", "clusters", {"provider": "gateway", **size})
            assert code == 400, (size, body)
            assert "max_workers" in body["message"], body
        assert await clusters(jupyter) == []
        assert gateway.active_clusters() == []


# -- a gateway that is down, or none --------------------------------------------------------------


class TestAGatewayThatIsDown:
    @pytest.fixture
    def dashdock_config(self) -> Iterator[dict[str, Any]]:
        with closed_loopback_port() as nothing_listens:
            port = nothing_listens.getsockname()[1]
            yield {
                # A password in the address (some put one there) must never reach the browser.
                "gateway_address": f"http://someone:hunter2@127.0.0.1:{port}",
                "gateway_auth": "basic",
                "gateway_timeout": 10.0,
                "cluster_kwargs": {"threads_per_worker": 1, "processes": False, "protocol": "tcp"},
            }

    async def test_leaves_the_local_clusters_listed_and_says_why(self, jupyter: Jupyter) -> None:
        code, local = await jupyter.api("POST", "clusters", {"workers": 1})
        assert code == 201, local
        body = await listing(jupyter)
        assert [c["id"] for c in body["clusters"]] == [local["id"]]
        assert body["clusters"][0]["provider"] == "local"
        assert body["gateway"]["address"].startswith("http://127.0.0.1:")
        assert "not reachable" in body["gateway"]["error"], body["gateway"]

        code, form = await jupyter.api("GET", "clusters/forms/gateway")
        assert 500 <= code < 600, form
        assert "Dask Gateway is not reachable" in form["message"]

        code, refused = await jupyter.api("POST", "clusters", {"provider": "gateway", "workers": 1})
        assert 500 <= code < 600, refused
        assert "Dask Gateway is not reachable" in refused["message"]
        for answer in (body, form, refused):
            assert "hunter2" not in json.dumps(answer), answer
        code, _ = await jupyter.api("DELETE", f"clusters/{local['id']}")
        assert code == 204


class TestAGatewayThatDoesNotAnswer:
    """A gateway whose host takes the connection and never answers (a hung proxy, say)."""

    @pytest.fixture
    def dashdock_config(self) -> Iterator[dict[str, Any]]:
        with closed_loopback_port() as silent:
            silent.listen(8)  # connections wait in the backlog: accepted by the kernel, never answered
            yield {
                "gateway_address": f"http://127.0.0.1:{silent.getsockname()[1]}",
                "gateway_auth": "basic",
                "gateway_timeout": 120.0,
                "cluster_kwargs": {"threads_per_worker": 1, "processes": False, "protocol": "tcp"},
            }

    async def test_does_not_hold_up_the_listing_of_the_servers_clusters(self, jupyter: Jupyter) -> None:
        code, local = await jupyter.api("POST", "clusters", {"workers": 1})
        assert code == 201, local
        # Two listings while the gateway is still being asked: both list the local cluster now and
        # say the gateway is slow, rather than waiting for its 120 s.
        for _ in range(2):
            body = await listing(jupyter)
            assert [c["id"] for c in body["clusters"]] == [local["id"]]
            assert "slow to answer" in body["gateway"]["error"], body["gateway"]
        code, _ = await jupyter.api("DELETE", f"clusters/{local['id']}")
        assert code == 204


class TestNoGatewayConfigured:
    @pytest.fixture
    def dashdock_config(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
        monkeypatch.delenv("DASK_GATEWAY__ADDRESS", raising=False)
        with dask.config.set({"gateway.address": None}):
            yield {}

    async def test_there_is_no_gateway_in_the_listing_and_no_gateway_cluster_to_make(
        self, jupyter: Jupyter
    ) -> None:
        body = await listing(jupyter)
        assert body["gateway"] is None
        assert body["clusters"] == []

        code, refused = await jupyter.api("POST", "clusters", {"provider": "gateway", "workers": 1})
        assert code == 400, refused
        assert refused["message"].startswith("No Dask Gateway is configured")
        code, form = await jupyter.api("GET", "clusters/forms/gateway")
        assert code == 400, form
        assert form["message"].startswith("No Dask Gateway is configured")


# -- the local form -----------------------------------------------------------------------------------


async def test_the_local_form_describes_local_cluster_and_its_values_reach_the_cluster(
    jupyter: Jupyter,
) -> None:
    code, form = await jupyter.api("GET", "clusters/forms/local")
    assert code == 200, form
    assert form["provider"] == "local"
    fields = {field["name"]: field for field in form["fields"]}
    assert fields["threads_per_worker"]["type"] == "int"
    assert fields["processes"]["type"] == "bool"
    assert fields["memory_limit"]["type"] == "string"

    code, refused = await jupyter.api(
        "POST", "clusters", {"provider": "local", "options": {"threads_per_workers": 2}, "workers": 1}
    )
    assert code == 400, refused
    assert "threads_per_workers" in refused["message"]
    assert await clusters(jupyter) == []

    code, cluster = await jupyter.api(
        "POST", "clusters", {"provider": "local", "options": {"threads_per_worker": 2}, "workers": 1}
    )
    assert code == 201, cluster
    assert cluster["provider"] == "local"
    assert await listed_with(jupyter, cluster["id"], workers=1, threads=2), await listing(jupyter)
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204


class TestALocalClusterClassThatCannotBeImported:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"cluster_class": "no_such_module.Cluster"}

    async def test_the_local_form_is_an_error_naming_the_class(self, jupyter: Jupyter) -> None:
        code, form = await jupyter.api("GET", "clusters/forms/local")
        assert 500 <= code < 600, form
        assert "no_such_module.Cluster" in form["message"]


# -- kernels --------------------------------------------------------------------------------------


def test_kernels_get_the_gateway_of_the_traits_where_dasks_config_names_none() -> None:
    # The sidebar's "insert code" runs Gateway() in a kernel: it must find the gateway the sidebar
    # uses. A setting of the user's own (Dask config, or DASK_GATEWAY__* already set) stays theirs.
    for key in [key for key in os.environ if key.startswith("DASK_GATEWAY__")]:
        del os.environ[key]
    with dask.config.set(
        {"gateway.address": None, "gateway.proxy-address": None, "gateway.auth.type": "kerberos"}
    ):
        offer_gateway_settings(
            {
                "address": "http://gateway.example:8000",
                "proxy-address": "gateway://gateway.example:8786",
                "public-address": None,
                "auth.type": "jupyterhub",
            }
        )
    assert os.environ["DASK_GATEWAY__ADDRESS"] == "http://gateway.example:8000"
    assert os.environ["DASK_GATEWAY__PROXY_ADDRESS"] == "gateway://gateway.example:8786"
    assert "DASK_GATEWAY__PUBLIC_ADDRESS" not in os.environ
    assert "DASK_GATEWAY__AUTH__TYPE" not in os.environ  # the user's kerberos stays


# -- a gateway address with a user and password --------------------------------------------------------

GATEWAY_PASSWORD = "s3cret-pw"


class TestAGatewayAddressWithUserinfo:
    """``http://user:pw@host:port`` as the gateway's address: dask-gateway authenticates with it and
    builds every dashboard link from it (no public address is given); the browser never sees it."""

    @pytest.fixture
    def dashdock_config(self, gateway: GatewayServer) -> dict[str, Any]:
        userinfo = f"{getpass.getuser()}:{GATEWAY_PASSWORD}@"
        return {
            # The gateway's HTTP proxy serves its API and the dashboards: one address for both.
            "gateway_address": gateway.proxy.replace("http://", f"http://{userinfo}"),
            "gateway_proxy_address": gateway.tcp,
            "gateway_auth": "basic",
        }

    async def test_never_leaves_the_server_and_the_cluster_still_gets_a_source_with_plots(
        self, jupyter: Jupyter, gateway: GatewayServer
    ) -> None:
        secrets = (GATEWAY_PASSWORD, f"{getpass.getuser()}:{GATEWAY_PASSWORD}", f":{GATEWAY_PASSWORD}@")
        code, created = await jupyter.api("POST", "clusters", {"provider": "gateway", "workers": 1})
        assert code == 201, created
        cluster_id = created["id"]

        cluster = await eventually(lambda: listed_with(jupyter, cluster_id, status="running"), START)
        assert cluster, await listing(jupyter)
        cluster = await eventually(lambda: listed_with(jupyter, cluster_id, source=cluster_id), START)
        assert cluster, await listing(jupyter)
        assert cluster["dashboard"] == f"{gateway.proxy}/clusters/{created['name']}/status"

        answers: list[Any] = [created, await listing(jupyter)]
        code, sources = await jupyter.api("GET", "sources")
        assert code == 200, sources
        answers.append(sources)
        assert cluster_id in [source["id"] for source in sources["sources"]]
        code, source = await jupyter.api("GET", f"sources/{cluster_id}")
        assert code == 200, source
        answers.append(source)
        assert source["url"] == f"{gateway.proxy}/clusters/{created['name']}"
        code, plots = await jupyter.api("GET", f"sources/{cluster_id}/plots")
        assert code == 200, plots
        answers.append(plots)
        assert plots["plots"], plots
        response = await jupyter.proxied(f"dashdock/proxy/{cluster_id}/individual-task-stream")
        assert response.code == 200, response.body[:500]
        answers.append(response.body.decode("latin-1"))
        answers.append(list(response.headers.get_all()))
        for answer in answers:
            for secret in secrets:
                assert secret not in json.dumps(answer), answer
        for message in jupyter.dashdock_warnings:
            assert GATEWAY_PASSWORD not in message, message

        code, _ = await jupyter.api("DELETE", f"clusters/{cluster_id}")
        assert code == 204
