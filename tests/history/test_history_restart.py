"""What was recorded outlives the cluster and the server: a real ``jupyter server`` records a managed
cluster's work and alerts, the cluster is shut down, the server stops, and a new server on the same
data directory still lists, exports and alerts it."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import operator
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pyarrow.parquet as pq
import pytest
from _server_process import HOST, TOKEN, Server
from distributed import Client, wait
from test_history_store import a_run

from dashdock.history.service import HistoryService
from dashdock.history.settings import HistorySettings
from dashdock.history.store import HistoryStore
from dashdock.sources.registry import SourceRegistry

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

OK, FAILING = 60, 25


def until(condition: Callable[[], Any], seconds: float = 120) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.5)
    raise AssertionError("timed out")


def fetch(server: Server, path: str) -> bytes:
    request = urllib.request.Request(
        f"http://{HOST}:{server.port}/{path}", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return bytes(response.read())


def runs_of(server: Server, source: str) -> list[dict[str, Any]]:
    code, body = server.call("GET", "dashdock/api/history")
    assert code == 200, body
    return [run for run in body["runs"] if run["source"] == source]


def erred_alert(server: Server, source: str) -> dict[str, Any] | None:
    code, body = server.call("GET", f"dashdock/api/alerts?source={source}")
    assert code == 200, body
    return next((a for a in body["alerts"] if a["kind"] == "task-erred"), None)


def test_a_run_and_its_alerts_are_listed_and_exported_after_the_server_restarts(tmp_path: Path) -> None:
    first = Server(tmp_path)
    try:
        first.wait_ready()
        code, cluster = first.call("POST", "dashdock/api/clusters", {"workers": 1})
        assert code == 201, cluster

        def running() -> dict[str, Any] | None:
            _, listing = first.call("GET", "dashdock/api/clusters")
            found = next(c for c in listing["clusters"] if c["id"] == cluster["id"])
            return found if found["status"] == "running" else None

        ready = until(running)
        source = ready["source"]
        until(lambda: runs_of(first, source))
        with Client(ready["scheduler"], timeout=30) as client:
            client.gather(client.map(operator.neg, range(OK)))
            wait(
                client.map(
                    operator.truediv, [1] * FAILING, [0] * FAILING, key=[f"boom-{i}" for i in range(FAILING)]
                )
            )
        until(lambda: (a := erred_alert(first, source)) and a["count"] == FAILING)
        until(lambda: runs_of(first, source)[0]["tasks"] >= OK + FAILING)

        code, _ = first.call("DELETE", f"dashdock/api/clusters/{cluster['id']}")
        assert code == 204
        (ended,) = until(lambda: [r for r in runs_of(first, source) if not r["live"]])
    finally:
        first.proc.terminate()
        first.proc.wait(60)
        first.close()

    second = Server(tmp_path)
    try:
        second.wait_ready()
        (kept,) = runs_of(second, source)
        assert kept == ended  # the same run: id, times, task count, not live
        events = json.loads(fetch(second, f"dashdock/api/history/{kept['id']}/trace"))["traceEvents"]
        computes = [e for e in events if e.get("ph") == "X" and e.get("cat") == "compute"]
        assert len(computes) == len({e["args"]["key"] for e in computes}) == OK + FAILING
        table = pq.read_table(io.BytesIO(fetch(second, f"dashdock/api/history/{kept['id']}/tasks.parquet")))
        assert table.num_rows == OK + FAILING
        assert b"boom" in fetch(second, f"dashdock/api/history/{kept['id']}/report")
        alert = erred_alert(second, source)
        assert (
            alert is not None
            and alert["count"] == FAILING
            and alert["title"] == f"boom: {FAILING} tasks erred"
        )
    finally:
        second.close()


async def test_a_request_while_the_server_opens_the_store_waits_for_it(tmp_path: Path) -> None:
    # A restarted server answers HTTP before its extension has opened the store: the History list
    # asked then must show what was recorded, not "History is turned off".
    path = tmp_path / "history.sqlite"
    store = HistoryStore.open(path)
    store.begin_run(a_run())
    store.close()
    settings = HistorySettings(
        enabled=True, store=path, max_bytes=10**9, max_age=1e9, max_runs=4, max_alerts=100
    )
    service = HistoryService(settings, cast(SourceRegistry, None), dict, logging.getLogger("test"))
    starting = asyncio.ensure_future(service.start())
    try:
        runs = await service.runs()  # asked before the store is open
        assert [run.id for run in runs] == [a_run().id]
    finally:
        await starting
        await service.stop()
