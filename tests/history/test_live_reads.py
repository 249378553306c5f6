"""While a drawn page is open, the watcher reads its scheduler for the mirror between ticks
(``Limits.live_tick``), so the page is as fresh as Dask's own; what those reads find is recorded
with the next tick, each task once.
The tick here is an hour: anything the mirror gets after the first one came from a live read. A
page is "open" as the plot server sees it: a document whose Bokeh session is about to connect.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from distributed import Client, LocalCluster, wait
from distributed.diagnostics.task_stream import TaskStreamPlugin

from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.history.model import Run
from dashdock.history.run_writes import Writer
from dashdock.history.store import HistoryStore
from dashdock.kernel.plot_state import OP as PLOT_STATE_OP
from dashdock.kernel.plot_state import offer as offer_plot_state
from dashdock.live.mirror import SchedulerMirror
from dashdock.live.plots import PART_EVERY_S
from dashdock.watcher.limits import Limits
from dashdock.watcher.mirror_reader import MirrorReader
from dashdock.watcher.run_watcher import RunWatcher

pytestmark = pytest.mark.slow  # a cluster

PATH = "/individual-task-stream"


class _Page:
    """A drawn page as ``seen`` reads it: its session is made and about to connect, until it is gone."""

    def __init__(self) -> None:
        self.session_context = SimpleNamespace(destroyed=False, _session=None)


@dataclass
class Watched:
    client: Client
    mirror: SchedulerMirror
    watcher: RunWatcher
    store: HistoryStore
    run: Run

    def mirrored(self) -> set[str]:
        return {str(record["key"]) for record in self.mirror.plugins[TaskStreamPlugin.name].buffer}


@asynccontextmanager
async def watched_cluster(tmp_path: Path) -> AsyncIterator[Watched]:
    store = HistoryStore.open(tmp_path / "history.db")
    options: dict[str, Any] = {"protocol": "tcp", "host": "127.0.0.1", "dashboard_address": ":0"}
    async with (
        LocalCluster(
            asynchronous=True, processes=False, n_workers=1, threads_per_worker=2, **options
        ) as cluster,
        Client(cluster, asynchronous=True) as client,
    ):
        offer_plot_state(cluster.scheduler)
        run = Run("11fe11fe11fe", "5ca1ab1e5ca1", "live", cluster.scheduler_address, time.time())
        store.begin_run(run)
        writer = Writer(store)
        mirror = SchedulerMirror()
        watcher = RunWatcher(
            run,
            writer,
            lambda event: None,
            Limits(tick=3600.0),
            AlertWatch(run.source, AlertLimits()),
            mirror,
        )
        await watcher.start()
        watching = asyncio.ensure_future(watcher.record())
        try:
            # The first tick is behind: the next one is an hour away.
            assert await _eventually(lambda: watcher.ticks >= 1)
            yield Watched(client, mirror, watcher, store, run)
        finally:
            watcher.stopping.set()
            await watching
            writer.close()
            store.close()


async def _computed(client: Client, name: str, n: int) -> set[str]:
    futures = [client.submit(lambda i: i, i, key=f"{name}-{i}") for i in range(n)]
    await wait(futures)
    return {future.key for future in futures}


async def _eventually(check: Any, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_an_open_page_gets_tasks_between_ticks_and_the_store_gets_each_once(tmp_path: Path) -> None:
    async with watched_cluster(tmp_path) as w:
        page = _Page()
        w.mirror.viewing(PATH, page)
        seen_live = await _computed(w.client, "live", 20)
        assert await _eventually(lambda: seen_live <= w.mirrored()), seen_live - w.mirrored()
        assert w.watcher.ticks == 1  # no tick brought them
        assert list(w.store.tasks(w.run.id)) == []  # recorded with the next tick, not yet

        page.session_context.destroyed = True  # the pane closed: the rest waits for the tick
        later = await _computed(w.client, "later", 5)
    # Stopping ticks once more: the live reads' tasks and the rest are written then.
    recorded = [task.key for task in HistoryStore.open(tmp_path / "history.db").tasks(w.run.id)]
    assert sorted(recorded) == sorted(seen_live | later)  # each once, the live reads' too


async def test_memory_by_key_is_asked_less_often_and_its_counts_stay_between(tmp_path: Path) -> None:
    """Memory by key's pass over every task in memory is the costliest part of a read: asked for
    less often (plots.PART_EVERY_S) than the rest of the state is read for the open page, and the
    page never sees its counts drop in between."""
    async with watched_cluster(tmp_path) as w:
        scheduler = w.client.cluster.scheduler  # type: ignore[union-attr]
        answer = scheduler.handlers[PLOT_STATE_OP]
        asked: list[tuple[float, bool]] = []  # when, and whether Memory by key's part was asked

        def recorded(comm: Any = None, **arguments: Any) -> Any:
            asked.append((time.monotonic(), "memory_by_key" in (arguments.get("parts") or ())))
            return answer(comm, **arguments)

        scheduler.handlers[PLOT_STATE_OP] = recorded
        held = w.client.map(lambda i: i, range(200), key=[f"held-{i}" for i in range(200)])
        await wait(held)

        def counted() -> int:
            return sum(len(worker.has_what) for worker in w.mirror.workers.values())

        page = _Page()  # the mirror holds its pages weakly: this one stays open until the end
        w.mirror.viewing("/individual-memory-by-key", page)
        assert await _eventually(lambda: counted() == 200), counted()
        first = len(asked)
        dropped = 0
        while sum(part for _, part in asked[first:]) < 3:  # the part asked for twice more
            dropped += counted() != 200
            await asyncio.sleep(0.01)
            assert len(asked) - first < 1000, "Memory by key's part was not asked for again"
        window = asked[first - 1 :]
        with_part = [at for at, part in window if part]
        assert dropped == 0, f"the page saw its counts drop {dropped} times between two answers"
        assert len(window) > len(with_part), "the rest of the state was not read in between"
        gaps = [later - earlier for earlier, later in itertools.pairwise(with_part)]
        assert min(gaps) >= PART_EVERY_S["memory_by_key"], gaps


def test_memory_by_key_is_asked_with_every_other_state_read_while_watched() -> None:
    """Its page trailed Dask's own by 0.37 s (median, bench/drawn_freshness.py) when its part came
    with every fourth state read; reads a little early (a busy loop) must not make it every third."""
    mirror = SchedulerMirror()
    page = _Page()  # held here until the end: the mirror holds its pages weakly
    mirror.viewing("/individual-memory-by-key", page)
    reader = MirrorReader(None, mirror, lambda event: None, "run", offer_every=1, install=False)  # type: ignore[arg-type]
    read_every = Limits().live_state_tick * 0.99
    asked = [n for n in range(13) if "memory_by_key" in reader._parts(n * read_every)[0]]
    assert asked == [0, 2, 4, 6, 8, 10, 12]


async def test_a_live_read_that_lost_nothing_is_one_call_to_the_scheduler(tmp_path: Path) -> None:
    """Reads for an open page come ten times a second: while the record read last still comes
    first, the scheduler is not asked for its counter too."""
    async with watched_cluster(tmp_path) as w:
        scheduler = w.client.cluster.scheduler  # type: ignore[union-attr]
        calls: dict[str, int] = {"get_task_stream": 0, "get_task_stream_index": 0}
        for op in calls:
            handler = scheduler.handlers[op]

            def counted(*args: Any, op: str = op, handler: Any = handler, **kwargs: Any) -> Any:
                calls[op] += 1
                return handler(*args, **kwargs)

            scheduler.handlers[op] = counted
        page = _Page()
        w.mirror.viewing(PATH, page)
        seen_live = await _computed(w.client, "one-call", 20)
        assert await _eventually(lambda: seen_live <= w.mirrored()), seen_live - w.mirrored()
        # From here on the last record read is known: ten more reads, one call each.
        before = dict(calls)
        await _computed(w.client, "more", 5)
        assert await _eventually(lambda: calls["get_task_stream"] >= before["get_task_stream"] + 10), calls
        assert calls["get_task_stream_index"] == before["get_task_stream_index"], (before, calls)
