"""Dask's Task Group Progress drawn by the recorder: compute per task group over time, read from the
scheduler's GroupTiming plugin while a page of it is open (kernel/plot_state.py, live/
mirror_timing.py): the same groups, bins and threads as Dask's own page on the same cluster."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter
from distributed import Client, LocalCluster, wait
from test_drawn_state_plots import _dasks, _ours, _source_drawing, watching
from test_history_api import eventually

from dashdock.kernel import plot_state
from dashdock.live.mirror_timing import MAX_BINS, MirroredGroupTiming

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster per test

PATH = "/individual-group-progress"


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=2) as local:
        yield local


def _slow(x: int) -> int:
    time.sleep(0.05)
    return x


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def _drawn(contents: list[tuple[str, Any]]) -> dict[str, Any] | None:
    """The plot's data once its page has drawn it (a column per group, and the threads), None
    before. Each page counts time from when it opened, so its time axis is compared by its steps."""
    for kind, data in contents:
        if kind == "data" and "nthreads" in data:
            steps = [round(b - a, 3) for a, b in zip(data["time"], data["time"][1:], strict=False)]
            return {**{k: v for k, v in data.items() if k != "time"}, "time steps": steps}
    return None


async def _running_group_timing(cluster: LocalCluster) -> None:
    """Waits until the scheduler runs GroupTiming, as a watched page makes it."""

    async def timing() -> bool:
        return "group-timing" in cluster.scheduler.plugins

    assert await eventually(timing, 30)


async def _drawn_as_dasks(jupyter: Jupyter, source_id: str, cluster: LocalCluster) -> list[Any]:
    """Waits until our page draws what Dask's page of the same scheduler draws: [ours, theirs]."""
    seen: list[Any] = []

    async def same() -> bool:
        ours, theirs = _drawn(await _ours(jupyter, source_id, PATH)), _drawn(await _dasks(cluster, PATH))
        seen[:] = [ours, theirs]
        return ours is not None and ours == theirs

    assert await eventually(same, 60), seen
    return seen


async def test_task_group_progress_is_drawn_with_dasks_groups_and_numbers(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), [PATH])
    # Watched (a page kept open), it makes the scheduler run GroupTiming, as Dask's own page does.
    async with watching(jupyter, source_id, PATH):
        await _running_group_timing(cluster)
        async with Client(cluster.scheduler_address, asynchronous=True) as client:
            futures = client.map(_slow, range(40), key=[f"slow-{i}" for i in range(40)])
            await wait(futures)
            assert scheduler_sessions(cluster) == 0  # ours cost it no Bokeh session
            # Nothing runs now, and GroupTiming changes only when a task finishes.
            seen = await _drawn_as_dasks(jupyter, source_id, cluster)
            groups = {name: values for name, values in seen[0].items() if name.startswith("slow")}
            assert groups and sum(sum(values) for values in groups.values()) > 0, seen[0]
            del futures


async def test_a_long_task_beside_short_ones_is_counted_in_every_bin_it_ran_through(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    """GroupTiming adds a task's compute to each bin it ran through when it ends, bins the mirror
    read while it ran: they are read again, so no bin is left short (13 % of a group was)."""
    plot_state.offer(cluster.scheduler)
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), [PATH])
    async with watching(jupyter, source_id, PATH):
        await _running_group_timing(cluster)
        async with Client(cluster.scheduler_address, asynchronous=True) as client:
            long = client.submit(_sleep, 4.0, key="long-0")
            short = client.map(_slow, range(100), key=[f"short-{i}" for i in range(100)])
            await wait([long, *short])
            seen = await _drawn_as_dasks(jupyter, source_id, cluster)
            assert sum(seen[0]["long"]) >= 4.0, seen[0]  # every second of it, in the bins it spans
            del long, short


def test_group_timing_from_a_hostile_scheduler_is_checked_and_merged() -> None:
    timing = MirroredGroupTiming()
    for junk in ("junk", {"length": -1, "start": 0}, {"length": 2, "start": 3}, {"length": True, "start": 0}):
        assert not timing.add(junk)
    assert timing.length == 0
    assert timing.add(
        {
            "dt": float("inf"),
            "length": 3,
            "start": 0,
            "time": [1.0, 2.0, 3.0],
            "nthreads": [2, 2, "x"],
            "compute": {"a": [0.0, 1.0, 0.5], "short": [1.0], "text": "x", 5: [1, 2, 3]},
        }
    )
    assert timing.time == [1.0, 2.0, 3.0] and timing.nthreads == [2.0, 2.0, 0.0]
    assert timing.compute == {"a": [0.0, 1.0, 0.5]} and timing.dt == 1.0
    # The next answer resends the last bin (it grew) and adds one, with a group new here.
    assert timing.add(
        {
            "length": 4,
            "start": 2,
            "time": [3.0, 4.0],
            "nthreads": [2, 4],
            "compute": {"a": [0.7, 0.2], "b": [0, 1]},
        }
    )
    assert timing.time == [1.0, 2.0, 3.0, 4.0] and timing.nthreads == [2.0, 2.0, 2.0, 4.0]
    assert timing.compute == {"a": [0.0, 1.0, 0.7, 0.2], "b": [0.0, 0.0, 0.0, 1.0]}
    # Columns that do not line up are refused whole.
    assert not timing.add({"length": 5, "start": 4, "time": [5.0], "nthreads": [], "compute": {}})
    # The plugin restarted (fewer bins than known): the answer is taken whole.
    assert timing.add({"length": 2, "start": 0, "time": [9.0, 9.5], "nthreads": [1, 1], "compute": {}})
    assert timing.time == [9.0, 9.5] and timing.compute == {}
    # At most MAX_BINS are kept, and what is not a finite number is 0.
    n = MAX_BINS + 2
    bins = {"length": n, "start": 0, "time": [float(i) for i in range(n)], "nthreads": [1] * n}
    assert timing.add({**bins, "compute": {"a": [float("nan")] * n}})
    assert len(timing.time) == MAX_BINS and timing.compute["a"] == [0.0] * MAX_BINS
    assert not timing.add({**bins, "length": n + 10, "time": [0.0] * (n + 10), "nthreads": [0] * (n + 10)})
