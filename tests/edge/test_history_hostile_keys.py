"""Runs a hostile client built: task keys of 16 KiB and 1 MiB, groups of 200,000 characters.

Any client of a recorded scheduler chooses its keys (and so their groups). History pages were
bounded in counts only: 20,000 tasks with 16 KiB keys took the server from 113 MiB to 4.7 GB when
their task stream was opened, and stalled ``api/status`` for 7 s. Here every History page, the
report and both exports of such runs are asked of a real Jupyter server (in this process) while
``api/status`` is polled: the server's memory must grow less than 200 MiB, and what was cut says so.
How responsive the server stays meanwhile is a figure, not a test: ``bench/history_hostile_pages.py``
prints it. Runs are written through the store's own write API, as the recorder writes them; one
more test records a real LocalCluster whose tasks have 100 KB keys.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client, LocalCluster, wait

from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.history.model import (
    MAX_GROUP,
    MAX_KEY,
    MAX_WORKER,
    Alert,
    Event,
    Run,
    Span,
    TaskRecord,
    WorkerSample,
    is_clipped,
)
from dashdock.history.pages import PAGES
from dashdock.history.run_writes import Writer
from dashdock.history.store import HistoryStore
from dashdock.watcher.limits import Limits
from dashdock.watcher.run_watcher import RunWatcher

MIB = 2**20
SOURCE = "fedcba987654"
WIDE = "0123456789ab"  # 20,000 tasks, 16 KiB keys
HUGE = "ba9876543210"  # 1,000 tasks, 1 MiB keys, groups of 200,000 characters
MARKER = re.compile(r"\u2026\[\+[\d,]+ chars\]$")
RSS_GROWTH = 200 * MIB


def hostile_tasks(first: int, count: int, t0: float, key_size: int, group: str) -> list[TaskRecord]:
    """Tasks whose keys are ``key_size`` characters (Dask's group first, as ``key_split`` finds it),
    on four workers with hostile names too; every tenth erred with a long exception."""
    tasks = []
    for n in range(first, first + count):
        start = t0 + n * 0.003
        index = f"', {n})"
        key = f"('{group}" + "k" * max(0, key_size - len(group) - len(index) - 2) + index
        status = "error" if n % 10 == 0 else "OK"
        tasks.append(
            TaskRecord(
                key=key,
                group=group,
                worker=f"tcp://127.0.0.1:{40000 + n % 4}/" + "w" * 5000,
                thread=n % 2,
                start=start,
                stop=start + 0.05,
                status=status,
                spans=(Span("compute", start, start + 0.05),),
                exception=("boom " * 20_000) if status == "error" else None,
            )
        )
    return tasks


def record(store: HistoryStore, run_id: str, t0: float, tasks: int, key_size: int, group: str) -> None:
    store.begin_run(Run(run_id, SOURCE, "hostile", "tcp://127.0.0.1:1", t0, t0 + 90))
    batch = max(1, min(1000, 32 * MIB // key_size))  # what the test holds at once
    for first in range(0, tasks, batch):
        assert store.add_tasks(run_id, hostile_tasks(first, min(batch, tasks - first), t0, key_size, group))
    workers = [f"tcp://127.0.0.1:{40000 + i}/" + "w" * 5000 for i in range(4)]
    store.add_worker_samples(
        run_id, [WorkerSample(t0 + s, w, 100 * MIB, 50 * MIB, 0, 5.0) for s in range(90) for w in workers]
    )
    title = f"{group}: {tasks // 10} tasks erred"
    store.add_alerts(
        run_id, [Alert(run_id, SOURCE, "task-erred", group, t0 + 1, t0 + 2, title, {"key": group})]
    )
    store.add_events(
        run_id,
        [
            Event(t0 + 1, "exception", workers[0], {"key": "k" * key_size, "traceback": "t" * 100_000}),
            Event(t0 + 2, "metrics", None, {"m" * 10_000: {"seconds": 1.0}}),
        ],
    )


@pytest.fixture
def hostile_runs(sources_file: Path) -> float:
    """Both runs, in the store the server under test will read (recorded minutes ago: retention keeps
    them); their start is the value. Written and closed before the server starts: SQLite's POSIX
    locks are the process's, and the server runs in this process."""
    t0 = time.time() - 600
    sources_file.parent.mkdir(parents=True, exist_ok=True)
    store = HistoryStore.open(sources_file.with_name("history.db"))
    try:
        record(store, WIDE, t0, 20_000, 16 * 1024, "wide" + "g" * 2000)
        record(store, HUGE, t0, 1_000, MIB, "huge" + "g" * 200_000)
    finally:
        store.close()
    return t0


def document_of(page: str) -> Any:
    (text,) = re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', page, re.DOTALL)
    return json.loads(html.unescape(text))


def column(document: Any, name: str) -> list[Any]:
    """Every value of the data column ``name`` in the document's data sources."""
    found: list[Any] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "map" and isinstance(value.get("entries"), list):
                for key, inner in value["entries"]:
                    if key == name and isinstance(inner, list):
                        found.extend(inner)
            for inner in value.values():
                visit(inner)
        elif isinstance(value, list):
            for inner in value:
                visit(inner)

    visit(document)
    return found


def rss() -> tuple[int, int]:
    """This process's (the server's) resident memory now and at its peak, in bytes."""
    fields = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def reset_peak() -> None:
    """Start the peak (VmHWM) over from the memory in use now (Linux: clear_refs 5)."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


async def test_pages_of_runs_with_16_kib_and_1_mib_keys_keep_the_server_small_and_responsive(
    hostile_runs: float, jupyter: Jupyter
) -> None:
    paths = [
        f"dashdock/api/history/{run}/{what}"
        for run in (WIDE, HUGE)
        for what in [*(f"view/{page}" for page in PAGES), "report", "trace", "tasks.parquet"]
    ]
    # What any first page costs once (imports: Bokeh, pyarrow; BokehJS read for the report), on a
    # window of one task.
    window = f"start={hostile_runs}&end={hostile_runs + 0.001}"
    for path in paths:
        if path.startswith(f"dashdock/api/history/{WIDE}/"):
            assert (await jupyter.fetch(f"{path}?{window}")).code == 200
    baseline, _ = rss()
    reset_peak()
    latencies: list[float] = []
    peak = baseline
    done = asyncio.Event()

    async def poll() -> None:
        nonlocal peak
        while not done.is_set():
            began = time.perf_counter()
            response = await jupyter.fetch("api/status")
            latencies.append(time.perf_counter() - began)
            assert response.code == 200
            peak = max(peak, *rss())
            await asyncio.sleep(0.01)

    poller = asyncio.ensure_future(poll())
    bodies: dict[str, bytes] = {}
    try:
        for path in paths:
            response = await jupyter.fetch(path)
            assert response.code == 200, (path, response.body[:300])
            if path.endswith("/trace"):  # the largest: checked now, not kept
                trace = json.loads(response.body)
                names = [e["args"]["key"] for e in trace["traceEvents"] if e.get("ph") == "X"]
                assert names and all(len(name) <= MAX_KEY and MARKER.search(name) for name in names)
                del trace, names
            elif not path.endswith(".parquet"):
                bodies[path] = response.body
            del response
            peak = max(peak, *rss())
    finally:
        done.set()
        await poller
    peak = max(peak, *rss())
    growth = peak - baseline
    print(
        f"\nRSS {baseline / MIB:.0f} MiB -> peak {peak / MIB:.0f} MiB (+{growth / MIB:.0f} MiB) "
        f"over {len(latencies)} polls of api/status"
    )
    assert growth < RSS_GROWTH, f"the server grew {growth / MIB:.0f} MiB"

    # What was cut is marked, and the pages say so.
    for run in (WIDE, HUGE):
        page = bodies[f"dashdock/api/history/{run}/view/task-stream"].decode()
        keys = column(document_of(page), "key")
        assert keys and all(len(key) <= MAX_KEY and MARKER.search(key) for key in keys)
        assert all(
            len(group) <= MAX_GROUP and is_clipped(group) for group in column(document_of(page), "group")
        )
        assert all(len(w) <= MAX_WORKER for w in column(document_of(page), "worker"))
        assert f"task keys were longer than {MAX_KEY} characters and are cut" in page
        assert f"group names were longer than {MAX_GROUP} characters" in page
        progress = bodies[f"dashdock/api/history/{run}/view/progress"].decode()
        assert f"group names were longer than {MAX_GROUP} characters" in progress
        memory = bodies[f"dashdock/api/history/{run}/view/memory"].decode()
        assert f"worker names were longer than {MAX_WORKER} characters" in memory
        report = bodies[f"dashdock/api/history/{run}/report"].decode()
        assert f"task keys were longer than {MAX_KEY} characters and are cut" in report
        assert "exception texts were longer than" in report
    wide_page = bodies[f"dashdock/api/history/{WIDE}/view/task-stream"].decode()
    assert "this window holds more tasks" in wide_page  # the text budget stopped it: it says so


def test_a_real_clusters_100_kb_keys_are_recorded_cut_with_the_marker(
    dask_cluster: LocalCluster, tmp_path: Path
) -> None:
    store = HistoryStore.open(tmp_path / "history.db")
    run = Run("abcdefabcdef", SOURCE, "hostile", dask_cluster.scheduler_address, time.time())
    store.begin_run(run)
    long_key = "hostile" + "x" * 100_000

    def compute() -> None:
        with Client(dask_cluster) as client:
            futures = [client.submit(int, i, key=f"{long_key}-{i}", pure=False) for i in range(3)]
            futures.append(client.submit(int, 7, key="plain-1"))
            wait(futures)

    async def record_run() -> None:
        writer = Writer(store)
        recorder = RunWatcher(
            run, writer, lambda event: None, Limits(tick=0.1), AlertWatch(SOURCE, AlertLimits())
        )
        await recorder.start()
        recording = asyncio.ensure_future(recorder.record())
        await asyncio.to_thread(compute)
        await asyncio.sleep(0.3)
        recorder.stopping.set()
        await recording
        writer.close()

    asyncio.run(record_run())
    try:
        tasks = list(store.tasks(run.id))
        assert "plain-1" in {task.key for task in tasks}  # short keys are kept as they are
        cut = [task for task in tasks if task.key.startswith("hostilexxx")]
        assert len(cut) == 3
        for task in cut:
            assert len(task.key) <= MAX_KEY and MARKER.search(task.key)
            assert len(task.group) <= MAX_GROUP and is_clipped(task.group)
    finally:
        store.close()
