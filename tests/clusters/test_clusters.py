"""Managed Dask clusters through {base_url}dashdock/api/clusters: start, see, scale, adapt, stop.

Every cluster here is real: a ``distributed.LocalCluster`` in a host process that the Jupyter server
under test starts (``python -m dashdock.clusters.host``), with one worker to keep the suite quick.
Waits are bounded polls for a condition (a cluster takes a few seconds to start or resize), never
timing assertions.
"""

from __future__ import annotations

import asyncio
import operator
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import dask.config
import psutil
import pytest
from _support import Jupyter
from distributed import Client

# Starting a cluster (a host process, a scheduler and a worker process) takes seconds on a busy machine.
START = 90.0


async def eventually(check: Callable[[], Awaitable[Any]], seconds: float = 60.0, every: float = 0.25) -> Any:
    """Call ``check`` until it returns something truthy (returned) or ``seconds`` pass (the last value)."""
    deadline = time.monotonic() + seconds
    while True:
        value = await check()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(every)


async def clusters(jupyter: Jupyter) -> list[dict[str, Any]]:
    code, body = await jupyter.api("GET", "clusters")
    assert code == 200, body
    return body["clusters"]


async def source_ids(jupyter: Jupyter) -> list[str]:
    code, body = await jupyter.api("GET", "sources")
    assert code == 200, body
    return [source["id"] for source in body["sources"]]


async def listed_with(jupyter: Jupyter, cluster_id: str, **expected: Any) -> dict[str, Any] | None:
    """The cluster as GET clusters lists it, if it has all the ``expected`` values."""
    for cluster in await clusters(jupyter):
        if cluster["id"] == cluster_id and all(cluster[key] == value for key, value in expected.items()):
            return cluster
    return None


async def accepts_connections(address: str) -> bool:
    """Whether something listens at a Dask address such as ``tcp://127.0.0.1:40123``."""
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    try:
        _, writer = await asyncio.open_connection(host, int(port))
    except OSError:
        return False
    writer.close()
    return True


def cluster_processes() -> list[psutil.Process]:
    """Cluster hosts started by the server under test (it runs in this process), and all under them."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "dashdock.clusters.host" in child.cmdline():
                found += [child, *child.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
    return found


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    running = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                running.append(process)
        except psutil.NoSuchProcess:
            continue
    return running


# -- the life of one cluster ------------------------------------------------------------------


async def test_a_cluster_started_scaled_adapted_and_stopped_through_the_api(jupyter: Jupyter) -> None:
    # A user presses "New cluster" with one worker.
    code, cluster = await jupyter.api("POST", "clusters", {"name": "Analysis", "workers": 1})
    assert code == 201, cluster
    assert cluster["name"] == "Analysis"
    assert cluster["status"] == "running"
    assert cluster["workers"] == 1
    assert cluster["threads"] >= 1
    assert cluster["memory"] > 0
    assert cluster["adapt"] is None
    assert cluster["scheduler"].startswith("tcp://127.0.0.1:")
    assert cluster["source"] == cluster["id"]
    cluster_id = cluster["id"]
    processes = cluster_processes()
    assert len(alive(processes)) >= 2, "a host and at least one worker process"

    # It is listed, and it is a source whose plots open through the proxy.
    assert [c["id"] for c in await clusters(jupyter)] == [cluster_id]
    assert cluster_id in await source_ids(jupyter)
    code, body = await jupyter.api("GET", f"sources/{cluster_id}/plots")
    assert code == 200, body
    paths = [plot["path"] for plot in body["plots"]]
    assert "/individual-task-stream" in paths
    response = await jupyter.proxied(f"dashdock/proxy/{cluster_id}/individual-task-stream")
    assert response.code == 200
    assert b"bokeh" in response.body.lower()

    # Scaled up to two workers, the listing shows two soon after; then back down to one. The
    # answer says at once what was asked for, which the sidebar shows until the worker joins.
    assert cluster["requested"] == 1
    code, scaled = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"workers": 2})
    assert code == 200, scaled
    assert scaled["adapt"] is None
    assert scaled["requested"] == 2
    assert await eventually(lambda: listed_with(jupyter, cluster_id, workers=2), START), await clusters(
        jupyter
    )
    code, scaled = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"workers": 1})
    assert code == 200, scaled
    assert await eventually(lambda: listed_with(jupyter, cluster_id, workers=1), START), await clusters(
        jupyter
    )

    # A resize that makes no sense is refused and changes nothing.
    for nonsense in ({"workers": -1}, {"workers": 1, "adapt": {"minimum": 0, "maximum": 1}}, {}):
        code, body = await jupyter.api("PATCH", f"clusters/{cluster_id}", nonsense)
        assert code == 400, (nonsense, body)
        assert body["message"], nonsense
    assert await listed_with(jupyter, cluster_id, workers=1, adapt=None)

    # Adaptive between one and two workers: the cluster says so, in the listing and on its own.
    bounds = {"minimum": 1, "maximum": 2}
    code, adapted = await jupyter.api("PATCH", f"clusters/{cluster_id}", {"adapt": bounds})
    assert code == 200, adapted
    assert adapted["adapt"] == bounds
    assert await listed_with(jupyter, cluster_id, adapt=bounds)
    code, detail = await jupyter.api("GET", f"clusters/{cluster_id}")
    assert code == 200
    assert detail["adapt"] == bounds
    assert detail["status"] == "running"

    # Stopped: gone from the clusters and the sources, its scheduler closed, its processes ended.
    code, body = await jupyter.api("DELETE", f"clusters/{cluster_id}")
    assert code == 204, body
    assert await clusters(jupyter) == []
    assert cluster_id not in await source_ids(jupyter)
    code, _ = await jupyter.api("GET", f"sources/{cluster_id}/plots")
    assert code == 404
    code, _ = await jupyter.api("GET", f"clusters/{cluster_id}")
    assert code == 404

    async def scheduler_closed() -> bool:
        return not await accepts_connections(cluster["scheduler"])

    assert await eventually(scheduler_closed, 30), f"{cluster['scheduler']} still accepts connections"

    async def processes_ended() -> bool:
        return not alive(processes)

    assert await eventually(processes_ended, 30), alive(processes)


async def test_a_cluster_lists_the_tasks_its_scheduler_has_not_finished(jupyter: Jupyter) -> None:
    # What the sidebar asks about before shutting a cluster down: a fresh cluster has no work.
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    cluster_id = cluster["id"]
    assert cluster["tasks"] == 0

    # A notebook submits work that takes a while: the listing counts it (running and waiting).
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        futures = client.map(time.sleep, [30] * 3, pure=False)
        busy = await eventually(lambda: listed_with(jupyter, cluster_id, tasks=3), START)
        assert busy, await clusters(jupyter)
        code, detail = await jupyter.api("GET", f"clusters/{cluster_id}")
        assert detail["tasks"] == 3

        # Cancelled, the work is gone from the scheduler, and from the listing.
        await client.cancel(futures)
        assert await eventually(lambda: listed_with(jupyter, cluster_id, tasks=0), START), await clusters(
            jupyter
        )

        # Results the notebook keeps are held by the workers: counted too, as shutting down loses them.
        assert cluster["held"] == 0
        results = client.map(operator.neg, range(5), pure=False)
        await client.gather(results)
        assert await eventually(lambda: listed_with(jupyter, cluster_id, held=5), START), await clusters(
            jupyter
        )
        await client.cancel(results)
        assert await eventually(lambda: listed_with(jupyter, cluster_id, held=0), START), await clusters(
            jupyter
        )
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster_id}")
    assert code == 204


# -- what the API refuses ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"workers": -1}, "workers"),
        ({"workers": "2"}, "workers"),
        ({"workers": True}, "workers"),
        ({"workers": 1.5}, "workers"),
        ({"adapt": {"minimum": 3, "maximum": 1}}, "adapt"),
        ({"adapt": 2}, "adapt"),
        ({"adapt": [1, 2]}, "adapt"),
        ({"adapt": {"minimum": 1}}, "adapt.maximum"),
        ({"workers": 1, "adapt": {"minimum": 1, "maximum": 2}}, "workers"),
        ({"name": 42}, "name"),
        ({"name": ""}, "name"),
        ({"name": "x" * 201}, "name"),
    ],
    ids=[
        "negative-workers",
        "workers-as-string",
        "workers-as-boolean",
        "fractional-workers",
        "adapt-minimum-above-maximum",
        "adapt-a-number",
        "adapt-a-list",
        "adapt-without-maximum",
        "workers-and-adapt",
        "name-a-number",
        "empty-name",
        "name-too-long",
    ],
)
async def test_a_new_cluster_request_that_makes_no_sense_is_a_bad_request_and_starts_nothing(
    jupyter: Jupyter, payload: dict[str, Any], field: str
) -> None:
    code, body = await jupyter.api("POST", "clusters", payload)
    assert code == 400, body
    assert field in body["message"]
    assert await clusters(jupyter) == []
    assert alive(cluster_processes()) == []


@pytest.mark.parametrize("raw", ["{", "[1, 2]", '"workers"'], ids=["broken-json", "a-list", "a-string"])
async def test_a_body_that_is_not_a_json_object_is_a_bad_request(jupyter: Jupyter, raw: str) -> None:
    code, body = await jupyter.api("POST", "clusters", raw=raw)
    assert code == 400, body
    assert "JSON" in body["message"]
    assert await clusters(jupyter) == []


@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
async def test_a_cluster_that_does_not_exist_is_not_found(jupyter: Jupyter, method: str) -> None:
    payload = {"workers": 1} if method == "PATCH" else None
    code, body = await jupyter.api(method, "clusters/000000000000", payload)
    assert code == 404, body
    assert "cluster" in body["message"]


# -- clusters that cannot start ---------------------------------------------------------------


class TestAClusterClassThatCannotBeImported:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"cluster_class": "no_such_module.Cluster"}

    async def test_is_a_server_error_naming_the_module_and_the_server_keeps_working(
        self, jupyter: Jupyter
    ) -> None:
        code, body = await jupyter.api("POST", "clusters", {"workers": 1})
        assert 500 <= code < 600, body
        assert "no_such_module" in body["message"]
        assert await clusters(jupyter) == []

        code, _ = await jupyter.api("GET", "sources")
        assert code == 200
        response = await jupyter.fetch("api/status")
        assert response.code == 200
        # Asking again gives the same clear answer, not a hang or a stale cluster.
        code, again = await jupyter.api("POST", "clusters", {})
        assert 500 <= code < 600, again
        assert "no_such_module" in again["message"]
        assert await clusters(jupyter) == []

        async def hosts_ended() -> bool:
            return not alive(cluster_processes())

        assert await eventually(hosts_ended, 30), alive(cluster_processes())


@pytest.mark.parametrize(
    "cluster_kwargs, body, says",
    [
        pytest.param(
            {"memory_limit": "lots"}, {"name": "Doomed", "workers": 1}, "lots", id="bad-memory-limit"
        ),
        pytest.param(
            {"n_workers": "not-a-number"},
            {"name": "Doomed"},
            "TypeError",
            id="bad-n-workers",
        ),
    ],
)
class TestAClusterThatRaisesWhileStarting:
    @pytest.fixture
    def dashdock_config(self, cluster_kwargs: dict[str, Any]) -> dict[str, Any]:
        return {"cluster_class": "distributed.LocalCluster", "cluster_kwargs": cluster_kwargs}

    async def test_is_a_clear_error_and_leaves_no_cluster_behind(
        self, jupyter: Jupyter, body: dict[str, Any], says: str
    ) -> None:
        code, answer = await jupyter.api("POST", "clusters", body)
        assert 500 <= code < 600, answer
        assert "could not start" in answer["message"]
        assert says in answer["message"]
        assert await clusters(jupyter) == []
        assert await source_ids(jupyter) == []

        async def hosts_ended() -> bool:
            return not alive(cluster_processes())

        assert await eventually(hosts_ended, 30), alive(cluster_processes())


class TestNewClusterWithoutOptions:
    """The sidebar's "New cluster" sends ``{}``: the server's configuration decides the size."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"cluster_kwargs": {"n_workers": 1, "threads_per_worker": 1}}

    async def test_starts_the_configured_cluster(self, jupyter: Jupyter) -> None:
        code, cluster = await jupyter.api("POST", "clusters", {})
        assert code == 201, cluster
        assert cluster["workers"] == 1
        assert cluster["threads"] == 1
        assert cluster["adapt"] is None
        assert [c["id"] for c in await clusters(jupyter)] == [cluster["id"]]


# -- configuration ----------------------------------------------------------------------------


class TestDaskLabextensionConfiguration:
    """dask-labextension users keep their ``labextension`` section of Dask's config."""

    @pytest.fixture
    def labextension_config(self) -> Iterator[None]:
        with dask.config.set(
            {
                "labextension.factory": {
                    "module": "distributed",
                    "class": "LocalCluster",
                    "args": [],
                    "kwargs": {"threads_per_worker": 1},
                },
                "labextension.default": {"workers": 1, "adapt": None},
            }
        ):
            yield

    @pytest.fixture
    def dashdock_config(self, labextension_config: None) -> dict[str, Any]:
        return {}  # nothing of dashdock's own: the server reads Dask's section as it starts

    async def test_a_new_cluster_without_options_follows_it(self, jupyter: Jupyter) -> None:
        code, cluster = await jupyter.api("POST", "clusters")
        assert code == 201, cluster
        assert cluster["workers"] == 1
        assert cluster["threads"] == 1
        assert cluster["adapt"] is None
        code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
        assert code == 204


class TestInitialClusters:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"initial_clusters": [{"name": "Startup", "workers": 1}]}

    async def test_a_cluster_configured_to_start_with_the_server_appears(self, jupyter: Jupyter) -> None:
        async def startup() -> dict[str, Any] | None:
            running = [
                c for c in await clusters(jupyter) if c["name"] == "Startup" and c["status"] == "running"
            ]
            return running[0] if running else None

        cluster = await eventually(startup, START)
        assert cluster, await clusters(jupyter)
        assert cluster["workers"] == 1
        assert cluster["id"] in await source_ids(jupyter)


async def test_a_cluster_stopped_while_it_starts_is_gone_for_good(jupyter: Jupyter) -> None:
    # A user presses "New cluster", then changes their mind while it is still starting.
    starting = asyncio.ensure_future(
        jupyter.api("POST", "clusters", {"name": "Changed my mind", "workers": 1})
    )

    async def listed_as_starting() -> dict[str, Any] | None:
        found = [c for c in await clusters(jupyter) if c["name"] == "Changed my mind"]
        return found[0] if found and found[0]["status"] == "starting" else None

    cluster = await eventually(listed_as_starting, 30, every=0.05)
    assert cluster, "the new cluster is listed while it starts"
    assert cluster["source"] is None
    code, body = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204, body
    code, answer = await starting
    assert 400 <= code < 600, answer  # the start is told it did not happen, not "201 running"
    assert answer["message"]

    assert await clusters(jupyter) == [], answer
    assert cluster["id"] not in await source_ids(jupyter), answer

    async def hosts_ended() -> bool:
        return not alive(cluster_processes())

    assert await eventually(hosts_ended, 30), alive(cluster_processes())


async def test_a_restarted_cluster_keeps_its_address_and_a_connected_client_goes_on(jupyter: Jupyter) -> None:
    """Users read Restart as Dask's client.restart(): a notebook connected to the cluster must not
    break. The new scheduler takes the old one's address, which Dask clients reconnect to; the
    source keeps its id and its `lost` count tells open panes to reload."""
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    _, before = await jupyter.api("GET", f"sources/{cluster['id']}")
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        assert await client.submit(sum, [1, 2]) == 3
        code, restarted = await jupyter.api("POST", f"clusters/{cluster['id']}/restart")
        assert code == 200, restarted
        assert restarted["id"] == cluster["id"] and restarted["status"] == "running"
        assert restarted["scheduler"] == cluster["scheduler"] and restarted["workers"] == 1
        # The notebook's client reconnects by itself and computes on the new scheduler.
        assert await asyncio.wait_for(client.submit(sum, [3, 4], pure=False), 60) == 7

    _, after = await jupyter.api("GET", f"sources/{cluster['id']}")
    assert after["url"] == restarted["dashboard"].removesuffix("/status") == before["url"]
    assert after["lost"] > before["lost"]
    response = await jupyter.proxied(f"dashdock/proxy/{cluster['id']}/individual-task-stream")
    assert response.code == 200 and b"bokeh" in response.body.lower()

    code, body = await jupyter.api("POST", "clusters/0000000000ff/restart")
    assert code == 404, body
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def test_a_cluster_with_worker_processes_unticked_starts_and_is_a_source(jupyter: Jupyter) -> None:
    # The form's "Worker processes" unticked: threads in the cluster's own process. It answered 500
    # "Scheduler failed to start" (an inproc:// scheduler on a loopback host).
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1, "options": {"processes": False}})
    assert code == 201, cluster
    assert cluster["status"] == "running" and cluster["workers"] == 1
    assert cluster["scheduler"].startswith("tcp://127.0.0.1:")
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        assert await client.submit(sum, [1, 2, 3]) == 6
    response = await jupyter.proxied(f"dashdock/proxy/{cluster['id']}/individual-task-stream")
    assert response.code == 200
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code in (200, 204)
