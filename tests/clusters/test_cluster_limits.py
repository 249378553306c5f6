"""Limits on managed clusters: ``max_workers`` per cluster and ``max_clusters`` per server.

A request over a limit is refused with a message that names the limit and the trait to raise, and
changes nothing; configuration over a limit is logged and clamped. The clusters are real, as in
``test_clusters``: host processes that the server under test starts, with few workers each.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import replace
from typing import Any

import psutil
import pytest
from _support import Jupyter
from test_clusters import START, alive, cluster_processes, clusters, eventually, listed_with
from tornado.simple_httpclient import SimpleAsyncHTTPClient

# One thread per worker keeps clusters at the limit cheap on a small machine.
ONE_THREAD = {"threads_per_worker": 1}
# Workers in the host process: were a check ever to let a huge number through, it would cost that
# process's memory rather than fill the machine's process table.
IN_PROCESS = {**ONE_THREAD, "processes": False, "protocol": "tcp"}


def host_processes() -> list[int]:
    """The pids of the cluster host processes alive under the server under test."""
    found = []
    for process in alive(cluster_processes()):
        try:
            if "dashdock.clusters.host" in process.cmdline():
                found.append(process.pid)
        except psutil.NoSuchProcess:  # it ended between the listing and the look
            continue
    return sorted(found)


def names_the_limit(message: str, trait: str, value: int) -> bool:
    return trait in message and str(value) in message


# -- the limits as the API reports them ------------------------------------------------------------


async def test_the_default_limits_fit_one_machine_and_are_listed_with_the_clusters(jupyter: Jupyter) -> None:
    code, body = await jupyter.api("GET", "clusters")
    assert code == 200, body
    assert body["clusters"] == []
    assert body["limits"] == {"max_workers": 4 * len(os.sched_getaffinity(0)), "max_clusters": 8}


# -- workers per cluster -----------------------------------------------------------------------------


class TestMaxWorkers:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"max_workers": 2, "cluster_kwargs": IN_PROCESS}

    async def test_is_listed(self, jupyter: Jupyter) -> None:
        code, body = await jupyter.api("GET", "clusters")
        assert code == 200, body
        assert body["limits"] == {"max_workers": 2, "max_clusters": 8}

    async def test_a_new_cluster_over_it_is_refused_and_nothing_starts(self, jupyter: Jupyter) -> None:
        for payload in ({"workers": 3}, {"adapt": {"minimum": 0, "maximum": 3}}):
            code, body = await jupyter.api("POST", "clusters", payload)
            assert code == 400, (payload, body)
            assert names_the_limit(body["message"], "max_workers", 2), body
        assert await clusters(jupyter) == []
        assert alive(cluster_processes()) == []

    async def test_a_scale_or_adapt_over_it_is_refused_and_the_cluster_is_untouched(
        self, jupyter: Jupyter
    ) -> None:
        code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
        assert code == 201, cluster
        for payload in (
            {"workers": 3},
            {"workers": 100000},
            {"adapt": {"minimum": 0, "maximum": 3}},
            {"adapt": {"minimum": 3, "maximum": 3}},
        ):
            code, body = await jupyter.api("PATCH", f"clusters/{cluster['id']}", payload)
            assert code == 400, (payload, body)
            assert names_the_limit(body["message"], "max_workers", 2), body
        assert await listed_with(jupyter, cluster["id"], workers=1, adapt=None), await clusters(jupyter)

        # At the limit is allowed.
        code, body = await jupyter.api("PATCH", f"clusters/{cluster['id']}", {"workers": 2})
        assert code == 200, body
        assert await eventually(lambda: listed_with(jupyter, cluster["id"], workers=2), START)
        bounds = {"minimum": 0, "maximum": 2}
        code, body = await jupyter.api("PATCH", f"clusters/{cluster['id']}", {"adapt": bounds})
        assert code == 200, body
        assert body["adapt"] == bounds


# Each field that takes a number of workers, with values that are not one. JSON written out, since
# NaN, Infinity and numbers beyond a double are what a careless or hostile client sends as text.
NOT_A_COUNT = ["-1", "1.5", "2.0", "true", "false", '"3"', '""', "[]", "{}", "NaN", "Infinity", "-Infinity"]
HUGE = ["1e400", "100000", "1" + "0" * 30]


def bodies(value: str) -> list[str]:
    return [
        f'{{"workers": {value}}}',
        f'{{"adapt": {{"minimum": {value}, "maximum": 2}}}}',
        f'{{"adapt": {{"minimum": 0, "maximum": {value}}}}}',
    ]


class TestMalformedNumbers:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"max_workers": 2, "cluster_kwargs": IN_PROCESS}

    async def test_are_bad_requests_with_a_message_on_every_path(self, jupyter: Jupyter) -> None:
        code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
        assert code == 201, cluster
        answered_wrong = []
        for value in NOT_A_COUNT + HUGE:
            for raw in bodies(value):
                # Python reads each (NaN and Infinity too), so it reaches the checks of the number.
                assert isinstance(json.loads(raw), dict), raw
                for method, path in (("POST", "clusters"), ("PATCH", f"clusters/{cluster['id']}")):
                    code, body = await jupyter.api(method, path, raw=raw)
                    if code != 400 or not (body or {}).get("message"):
                        answered_wrong.append((method, raw, code, body))
        assert answered_wrong == []
        # Nothing was started, and the one cluster kept its size.
        assert await listed_with(jupyter, cluster["id"], workers=1, adapt=None), await clusters(jupyter)
        assert [c["id"] for c in await clusters(jupyter)] == [cluster["id"]]


class TestRestart:
    """A restart starts the cluster again at the size its scheduler has, which counts workers that
    joined from elsewhere: the new cluster is no bigger than the limit."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"max_workers": 2, "cluster_kwargs": ONE_THREAD}

    async def test_comes_back_at_its_size_within_the_limit(self, jupyter: Jupyter) -> None:
        # Started at one and scaled to two, so that the restart's answer shows the size it started at.
        code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
        assert code == 201, cluster
        code, body = await jupyter.api("PATCH", f"clusters/{cluster['id']}", {"workers": 2})
        assert code == 200, body
        assert await eventually(lambda: listed_with(jupyter, cluster["id"], workers=2), START)
        outsider = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "distributed.cli.dask_worker",
            cluster["scheduler"],
            "--nthreads",
            "1",
            "--no-nanny",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            assert await eventually(lambda: listed_with(jupyter, cluster["id"], workers=3), START)
            code, restarted = await jupyter.api("POST", f"clusters/{cluster['id']}/restart")
            assert code == 200, restarted
            # On the same address (connected clients reconnect; so may the outsider, later).
            assert restarted["scheduler"] == cluster["scheduler"]
            assert restarted["workers"] == 2, restarted
        finally:
            with contextlib.suppress(ProcessLookupError):  # it may have given up on its scheduler
                outsider.terminate()
            await outsider.wait()


# -- clusters per server -----------------------------------------------------------------------------


class TestMaxClusters:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"max_clusters": 2}

    async def test_fifty_at_once_start_exactly_that_many_host_processes(
        self, jupyter: Jupyter, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Every process the server starts goes through asyncio; its pid is kept as it starts, so a
        # host that ran only for a moment is counted too.
        started: list[int] = []
        spawn = asyncio.create_subprocess_exec

        async def counted_spawn(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
            process = await spawn(*args, **kwargs)
            if "dashdock.clusters.host" in args:
                started.append(process.pid)
            return process

        monkeypatch.setattr(asyncio, "create_subprocess_exec", counted_spawn)
        # A client of its own that sends all fifty at once (the shared one queues beyond ten).
        burst = replace(jupyter, client=SimpleAsyncHTTPClient(force_instance=True, max_clients=50))
        try:
            answers = await asyncio.gather(
                *(burst.api("POST", "clusters", {"name": f"Burst {i}", "workers": 0}) for i in range(50))
            )
        finally:
            burst.client.close()

        codes = sorted(code for code, _ in answers)
        assert codes == [201] * 2 + [409] * 48, codes
        for code, body in answers:
            if code == 409:
                assert names_the_limit(body["message"], "max_clusters", 2), body
        listed = await clusters(jupyter)
        assert len(listed) == 2 and all(c["status"] == "running" for c in listed), listed
        assert len(started) == 2, started
        assert host_processes() == sorted(started)

    async def test_a_slot_is_free_again_once_a_cluster_is_shut_down(self, jupyter: Jupyter) -> None:
        ids = []
        for _ in range(2):
            code, cluster = await jupyter.api("POST", "clusters", {"workers": 0})
            assert code == 201, cluster
            ids.append(cluster["id"])
        code, body = await jupyter.api("POST", "clusters", {"workers": 0})
        assert code == 409, body
        code, _ = await jupyter.api("DELETE", f"clusters/{ids[0]}")
        assert code == 204
        code, cluster = await jupyter.api("POST", "clusters", {"workers": 0})
        assert code == 201, cluster


# -- configuration over the limits -----------------------------------------------------------------


class TestInitialClustersOverTheLimits:
    """Clusters from the configuration: too many workers is clamped, one cluster too many is not
    started, each with a warning in the server's log."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {
            "max_workers": 1,
            "max_clusters": 2,
            "cluster_kwargs": ONE_THREAD,
            "initial_clusters": [
                {"name": "Big", "workers": 3},
                {"name": "Adaptive", "adapt": {"minimum": 0, "maximum": 5}},
                {"name": "One too many", "workers": 1},
            ],
        }

    async def test_are_clamped_or_refused_and_logged(self, jupyter: Jupyter) -> None:
        async def both_running() -> list[dict[str, Any]] | None:
            listed = await clusters(jupyter)
            return listed if sum(c["status"] == "running" for c in listed) == 2 else None

        async def refusal_logged() -> bool:
            return any(names_the_limit(m, "max_clusters", 2) for m in jupyter.dashdock_warnings)

        listed = await eventually(both_running, START)
        assert listed, await clusters(jupyter)
        assert await eventually(refusal_logged, START), jupyter.dashdock_warnings
        by_name = {c["name"]: c for c in await clusters(jupyter)}
        assert sorted(by_name) == ["Adaptive", "Big"]
        assert by_name["Big"]["workers"] == 1
        assert by_name["Adaptive"]["adapt"] == {"minimum": 0, "maximum": 1}
        clamped = [m for m in jupyter.dashdock_warnings if names_the_limit(m, "max_workers", 1)]
        assert any("Big" in m for m in clamped) and any("Adaptive" in m for m in clamped), clamped


@pytest.mark.parametrize(
    "config, expected",
    [
        pytest.param({"default_workers": 5}, {"workers": 2, "adapt": None}, id="default-workers"),
        pytest.param(
            {"default_adapt": {"minimum": 0, "maximum": 10}},
            {"adapt": {"minimum": 0, "maximum": 2}},
            id="default-adapt",
        ),
        pytest.param({"cluster_kwargs": {**ONE_THREAD, "n_workers": 5}}, {"workers": 2}, id="n-workers"),
        # A LocalCluster of one thread per worker starts one worker per core when left to itself.
        pytest.param({"max_workers": 1}, {"workers": 1}, id="one-worker-a-core"),
    ],
)
class TestDefaultSizeOverTheLimit:
    @pytest.fixture
    def dashdock_config(self, config: dict[str, Any]) -> dict[str, Any]:
        return {"max_workers": 2, "cluster_kwargs": ONE_THREAD, **config}

    async def test_a_new_cluster_without_options_is_clamped(
        self, jupyter: Jupyter, expected: dict[str, Any]
    ) -> None:
        code, cluster = await jupyter.api("POST", "clusters", {})
        assert code == 201, cluster
        assert await eventually(lambda: listed_with(jupyter, cluster["id"], **expected), START), (
            await clusters(jupyter)
        )
