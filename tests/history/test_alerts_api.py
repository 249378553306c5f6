"""Alerts through the REST API, from real trouble in a real managed cluster: failing tasks, a long
computation, a worker killed, a worker pausing for memory; muting a source; bad requests."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client
from test_history_api import START, eventually, run_of

from dashdock.alerts.detection import AlertLimits

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

ALERTS_SEEN = 60.0  # generous on a loaded 2-core machine; what users wait is measured in bench/


def boom(x: int) -> int:
    raise ValueError(f"boom {x}")


def nap(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def hold(megabytes: int) -> bytes:
    return b"x" * (megabytes * 2**20)


async def alerts(jupyter: Jupyter, query: str = "") -> list[dict[str, Any]]:
    code, body = await jupyter.api("GET", f"alerts{query}")
    assert code == 200, body
    return body["alerts"]


async def alert_of(jupyter: Jupyter, source: str, kind: str) -> dict[str, Any] | None:
    found = [a for a in await alerts(jupyter, f"?source={source}") if a["kind"] == kind]
    assert len(found) <= 1 or kind == "computation-done", found
    return found[0] if found else None


async def recorded_cluster(jupyter: Jupyter, workers: int) -> dict[str, Any]:
    code, cluster = await jupyter.api("POST", "clusters", {"name": "Alerting", "workers": workers})
    assert code == 201, cluster

    async def recording() -> bool:
        return await run_of(jupyter, cluster["source"]) is not None

    assert await eventually(recording, START)
    await asyncio.sleep(2)  # a tick or two: the recorder has read the workers that are there
    return cluster


async def test_failing_tasks_a_long_computation_and_a_killed_worker_are_alerts(jupyter: Jupyter) -> None:
    code, body = await jupyter.api(
        "PUT",
        "alerts/settings",
        {"kinds": ["worker-lost", "task-erred", "computation-done"], "computationSeconds": 2},
    )
    assert code == 200 and body["computationSeconds"] == 2
    cluster = await recorded_cluster(jupyter, workers=2)
    source = cluster["source"]
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        # 1,000 failing tasks of one group: one alert, counting them all, with the first exception.
        failing = client.map(boom, range(1000), key=[f"boom-{i}" for i in range(1000)])
        await client.gather(failing, errors="skip")

        async def all_counted() -> bool:
            alert = await alert_of(jupyter, source, "task-erred")
            return alert is not None and alert["count"] == 1000

        assert await eventually(all_counted, ALERTS_SEEN), await alerts(jupyter)
        erred = await alert_of(jupyter, source, "task-erred")
        assert erred is not None
        assert erred["title"] == "boom: 1,000 tasks erred"
        assert erred["detail"]["group"] == "boom" and "boom" in erred["detail"]["exception"]
        assert erred["notified"] is True

        # A computation of about 5 s, above the 2 s threshold, says it is done.
        await client.gather(client.map(nap, [1.0] * 10, pure=False))

        async def done() -> bool:
            return await alert_of(jupyter, source, "computation-done") is not None

        assert await eventually(done, ALERTS_SEEN), await alerts(jupyter)
        finished = await alert_of(jupyter, source, "computation-done")
        assert finished is not None and finished["detail"]["tasks"] >= 10
        assert finished["detail"]["duration"] >= 2
        assert finished["title"].startswith("A computation finished after ")

        # client.restart() closes every worker on purpose: no worker is lost (checked below, once
        # the kill that follows is an alert: the restart's departures were read before it).
        await client.restart()
        await asyncio.sleep(2)  # a tick or two: the recorder has read the workers that came back

        # A worker killed outright is lost, named, with the reason Dask gives.
        pids = await client.run(os.getpid)
        victim, pid = sorted(pids.items())[0]
        os.kill(pid, signal.SIGKILL)
        killed_at = time.monotonic()

        async def lost() -> bool:
            return await alert_of(jupyter, source, "worker-lost") is not None

        assert await eventually(lost, ALERTS_SEEN), await alerts(jupyter)
        print(f"worker-lost seen {time.monotonic() - killed_at:.1f} s after the kill")
        gone = await alert_of(jupyter, source, "worker-lost")
        assert gone is not None
        assert gone["detail"]["worker"] == victim
        assert victim in gone["title"] and "killed or crashed" in gone["title"]
        assert gone["count"] == 1, gone  # the restarted workers are not in it

    # Muted, the source's alerts are still listed, but say they do not notify; unmuted, they do.
    code, muted = await jupyter.api("PATCH", f"sources/{source}", {"alerts": False})
    assert code == 200 and muted["alerts"] is False
    listed = await alerts(jupyter, f"?source={source}")
    assert listed and not any(a["notified"] for a in listed)
    # Every kind's detail is an object, never a string.
    assert {a["kind"] for a in listed} >= {"task-erred", "computation-done", "worker-lost"}
    assert all(isinstance(a["detail"], dict) for a in listed), listed
    code, _ = await jupyter.api("PATCH", f"sources/{source}", {"alerts": True})
    assert code == 200
    assert all(a["notified"] for a in await alerts(jupyter, f"?source={source}"))

    # A kind left out of the settings is still recorded; it only does not notify.
    code, _ = await jupyter.api(
        "PUT", "alerts/settings", {"kinds": ["worker-lost"], "computationSeconds": 60}
    )
    assert code == 200
    kinds = {a["kind"]: a["notified"] for a in await alerts(jupyter, f"?source={source}")}
    assert kinds["task-erred"] is False and kinds["worker-lost"] is True

    # ``since`` lists only what was updated after it.
    newest = max(a["updated"] for a in await alerts(jupyter))
    assert await alerts(jupyter, f"?since={newest}") == []

    # Shutting the cluster down on purpose is no alert: its recording stops before it could be one.
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204

    async def ended() -> bool:
        run = await run_of(jupyter, source)
        return run is not None and not run["live"]

    assert await eventually(ended, 60)
    await asyncio.sleep(AlertLimits.lost_after + 2)
    assert await alert_of(jupyter, source, "scheduler-lost") is None


class TestAWorkerThatFillsItsMemory:
    @pytest.fixture
    def dashdock_config(self, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        # Workers pause at 30 % of a 1 GiB limit and never spill or get killed: holding 500 MiB
        # pauses one, whatever the process's own size.
        for name, value in {
            "PAUSE": "0.3",
            "SPILL": "False",
            "TARGET": "False",
            "TERMINATE": "False",
        }.items():
            monkeypatch.setenv(f"DASK_DISTRIBUTED__WORKER__MEMORY__{name}", value)
        return {"cluster_kwargs": {"memory_limit": "1GiB", "threads_per_worker": 1}}

    async def test_it_pauses_and_that_is_an_alert(self, jupyter: Jupyter) -> None:
        cluster = await recorded_cluster(jupyter, workers=1)
        source = cluster["source"]
        async with Client(cluster["scheduler"], asynchronous=True) as client:
            held = client.submit(hold, 500)
            await held

            async def paused() -> bool:
                return await alert_of(jupyter, source, "worker-paused") is not None

            assert await eventually(paused, ALERTS_SEEN), await alerts(jupyter)
            alert = await alert_of(jupyter, source, "worker-paused")
            assert alert is not None
            (worker,) = (await client.scheduler.identity())["workers"]
            assert alert["detail"]["worker"] == worker
            assert "paused at" in alert["title"] and "of its memory limit" in alert["title"]
            del held
        await jupyter.api("DELETE", f"clusters/{cluster['id']}")


@pytest.mark.parametrize(
    "method, path, payload, message",
    [
        ("GET", "alerts?since=later", None, "'since'"),
        ("GET", "alerts?since=inf", None, "'since'"),
        ("GET", "alerts?source=../x", None, "'source'"),
        ("PUT", "alerts/settings", {"kinds": ["fire"], "computationSeconds": 1}, "'kinds'"),
        ("PUT", "alerts/settings", {"kinds": [], "computationSeconds": -1}, "'computationSeconds'"),
        ("PUT", "alerts/settings", {"kinds": [], "computationSeconds": True}, "'computationSeconds'"),
        ("PATCH", "sources/0123456789ab", {"alerts": "off"}, '{"alerts": true}'),
        ("PATCH", "sources/0123456789ab", {"alerts": False, "name": "x"}, '{"alerts": true}'),
    ],
)
async def test_bad_alert_requests_say_what_is_wrong(
    jupyter: Jupyter, method: str, path: str, payload: Any, message: str
) -> None:
    code, body = await jupyter.api(method, path, payload)
    assert code == 400, body
    assert message in body["message"]


async def test_muting_an_unknown_source_is_not_found(jupyter: Jupyter) -> None:
    code, body = await jupyter.api("PATCH", "sources/0123456789ab", {"alerts": False})
    assert code == 404 and "no source" in body["message"]


async def test_alerts_and_their_switches_need_the_users_login(jupyter: Jupyter) -> None:
    for method, path, payload in [
        ("GET", "alerts", None),
        ("GET", "alerts/settings", None),
        ("PUT", "alerts/settings", {"kinds": [], "computationSeconds": 1}),
        ("PATCH", "sources/0123456789ab", {"alerts": False}),
    ]:
        code, _ = await jupyter.api(method, path, payload, auth=False)
        assert code == 403, (method, path)
