"""History through the REST API: a managed cluster's work is recorded without asking, kept after
the cluster is gone, exported, and deleted; recording can be switched off per source."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from _support import Jupyter
from distributed import Client

import dashdock
from dashdock.history.store import HistoryStore

START = 120.0


def inc(x: int) -> int:
    return x + 1


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.5)
    return False


async def runs(jupyter: Jupyter) -> list[dict[str, Any]]:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    return body["runs"]


async def run_of(jupyter: Jupyter, source: str) -> dict[str, Any] | None:
    return next((run for run in await runs(jupyter) if run["source"] == source), None)


async def test_a_managed_cluster_is_recorded_kept_exported_and_deleted(
    jupyter: Jupyter, sources_file: Path
) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"name": "Recorded", "workers": 1})
    assert code == 201, cluster
    source = cluster["source"]

    # Recording starts by itself; the live run goes by the source's id.
    assert await eventually(lambda: _has_run(jupyter, source), START), await runs(jupyter)
    run = await run_of(jupyter, source)
    assert run is not None and run["live"] and run["id"] == source and run["name"] == "Recorded"

    async with Client(cluster["scheduler"], asynchronous=True) as client:
        assert await client.gather(client.map(inc, range(150))) == list(range(1, 151))
    assert await eventually(lambda: _has_tasks(jupyter, source, 150), 30), await runs(jupyter)

    # The Chrome trace holds each task once, on its worker's process and thread.
    trace = await jupyter.fetch(f"dashdock/api/history/{source}/trace")
    assert trace.code == 200
    assert "attachment" in trace.headers["Content-Disposition"]
    events = json.loads(trace.body)["traceEvents"]
    computes = [e for e in events if e.get("ph") == "X" and e.get("cat") == "compute"]
    keys = [e["args"]["key"] for e in computes]
    assert len(keys) == len(set(keys)) == 150
    assert all(e["dur"] > 0 for e in computes)
    processes = {e["pid"] for e in events if e.get("name") == "process_name"}
    assert {e["pid"] for e in computes} <= processes

    # A kernel of this server writes the same trace itself (the server gave kernels the store's path).
    written = await asyncio.to_thread(
        dashdock.export_trace, cluster["scheduler"], sources_file.with_name("run.json")
    )
    exported = json.loads(written.read_text())["traceEvents"]
    assert sorted(e["args"]["key"] for e in exported if e.get("cat") == "compute") == sorted(keys)

    # The task table as Parquet, and a report page that runs sandboxed.
    parquet = await jupyter.fetch(f"dashdock/api/history/{source}/tasks.parquet")
    assert parquet.code == 200
    assert pq.read_table(io.BytesIO(parquet.body)).num_rows == 150
    report = await jupyter.fetch(f"dashdock/api/history/{source}/report")
    assert report.code == 200
    assert report.headers["Content-Type"].startswith("text/html")
    assert report.headers["Content-Security-Policy"].startswith("sandbox")

    # The cluster shuts down: its run ends and stays, in the store on disk.
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204
    assert await eventually(lambda: _ended(jupyter, source), 30), await runs(jupyter)
    ended = await run_of(jupyter, source)
    assert ended is not None and ended["id"] != source and ended["tasks"] >= 150
    on_disk = HistoryStore.open(sources_file.with_name("history.db"))
    assert [r.tasks for r in on_disk.runs() if r.source == source] == [ended["tasks"]]

    # A window: only the tasks inside it.
    window = await jupyter.fetch(f"dashdock/api/history/{ended['id']}/trace?start=0&end=1")
    assert window.code == 200
    assert not [e for e in json.loads(window.body)["traceEvents"] if e.get("ph") == "X"]

    # Deleted, it is gone.
    code, _ = await jupyter.api("DELETE", f"history/{ended['id']}")
    assert code == 204
    assert await run_of(jupyter, source) is None
    code, body = await jupyter.api("GET", f"history/{ended['id']}")
    assert code == 404 and "No recorded run" in body["message"]


async def test_recording_a_source_can_be_switched_off(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    source = cluster["source"]
    assert await eventually(lambda: _has_run(jupyter, source), START)

    code, body = await jupyter.api("PUT", f"history/{source}/recording", {"enabled": False})
    assert code == 200 and body == {"source": source, "recording": False}
    assert await eventually(lambda: _ended(jupyter, source), 30), await runs(jupyter)
    code, body = await jupyter.api("PUT", f"history/{source}/recording", {"enabled": "no"})
    assert code == 400 and "'enabled'" in body["message"]

    code, body = await jupyter.api("PUT", f"history/{source}/recording", {"enabled": True})
    assert code == 200
    assert await eventually(lambda: _live_runs(jupyter, source, 1), 30), await runs(jupyter)
    code, _ = await jupyter.api("DELETE", f"clusters/{cluster['id']}")
    assert code == 204


async def test_a_restarted_cluster_is_a_new_run_at_once(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    source = cluster["source"]
    assert await eventually(lambda: _has_run(jupyter, source), START)
    code, restarted = await jupyter.api("POST", f"clusters/{cluster['id']}/restart")
    assert code == 200, restarted
    # The old scheduler's run ends and the new one's (on the same address: the recorder sees its
    # task stream begin again) begins, without waiting for a timeout.
    assert await eventually(lambda: _live_runs(jupyter, source, 1), 20), await runs(jupyter)
    assert await eventually(lambda: _ended_runs(jupyter, source, 1), 20), await runs(jupyter)
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


@pytest.mark.parametrize(
    "query, message",
    [
        ("start=soon", "'start' must be a time"),
        ("start=5&end=1", "'end' must not be before"),
        ("end=nan", "'end'"),
    ],
)
async def test_a_bad_window_is_a_bad_request(jupyter: Jupyter, query: str, message: str) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201
    assert await eventually(lambda: _has_run(jupyter, cluster["source"]), START)
    response = await jupyter.fetch(f"dashdock/api/history/{cluster['source']}/trace?{query}")
    assert response.code == 400
    assert message in json.loads(response.body)["message"]
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


def test_export_trace_says_why_when_nothing_was_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DASHDOCK_HISTORY_FILE", raising=False)
    with pytest.raises(LookupError, match="not started by a Jupyter server with dashdock's history"):
        dashdock.export_trace("tcp://127.0.0.1:1", tmp_path / "t.json")
    HistoryStore.open(tmp_path / "history.db")
    with pytest.raises(LookupError, match=r"has not recorded the scheduler tcp://127\.0\.0\.1:1"):
        dashdock.export_trace("tcp://127.0.0.1:1", tmp_path / "t.json", store=tmp_path / "history.db")


async def test_an_unknown_run_is_not_found(jupyter: Jupyter) -> None:
    for path in ("history/0123456789ab", "history/0123456789ab/trace", "history/../etc"):
        response = await jupyter.fetch(f"dashdock/api/{path}")
        assert response.code == 404, path


async def _has_run(jupyter: Jupyter, source: str) -> bool:
    return await run_of(jupyter, source) is not None


async def _has_tasks(jupyter: Jupyter, source: str, count: int) -> bool:
    run = await run_of(jupyter, source)
    return run is not None and run["tasks"] >= count


async def _ended(jupyter: Jupyter, source: str) -> bool:
    return any(run["source"] == source and not run["live"] for run in await runs(jupyter)) and not any(
        run["source"] == source and run["live"] for run in await runs(jupyter)
    )


async def _live_runs(jupyter: Jupyter, source: str, count: int) -> bool:
    return sum(run["source"] == source and run["live"] for run in await runs(jupyter)) == count


class TestHistoryTurnedOff:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"history": False}

    async def test_nothing_is_recorded_and_the_api_says_why(
        self, jupyter: Jupyter, sources_file: Path
    ) -> None:
        code, body = await jupyter.api("GET", "history")
        assert code == 404
        assert "History is turned off" in body["message"]
        assert not sources_file.with_name("history.db").exists()


async def _ended_runs(jupyter: Jupyter, source: str, count: int) -> bool:
    return sum(run["source"] == source and not run["live"] for run in await runs(jupyter)) == count
