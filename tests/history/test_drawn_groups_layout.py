"""Task Groups, drawn by dashdock, lays out groups that Dask's own layout fails on: with this Dask,
``dask.order`` can rank a group before one it depends on (the demo's delayed ``sum`` of
``slow_increment``), and Dask's ``TaskGroupGraph`` then raises a ``KeyError``. Ours places the
groups as Dask does, in an order that respects their dependencies (live/groups_page.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dask
import pytest
from _drawn import dashboard_root, in_process_cluster
from _support import Jupyter
from distributed import Client, LocalCluster, wait
from distributed.dashboard.components.scheduler import TaskGroupGraph
from test_drawn_state_plots import _ours, _source_drawing, watching
from test_history_api import eventually

from dashdock.kernel import plot_state
from dashdock.live.groups_page import OrderedTaskGroupGraph, place, placing_order

PATH = "/individual-groups"


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=1) as local:
        yield local


@pytest.fixture
def dask_order_after_dependencies(monkeypatch: pytest.MonkeyPatch) -> None:
    """``dask.order`` as Dask's layout assumes it: its own ranks, each group after its dependencies
    (as placing_order takes them), so that Dask's layout runs and ours can be compared with it."""
    ranked_by_dask = dask.order.order

    def order(dsk: Any, dependencies: Any = None, **options: Any) -> dict[str, int]:
        ranks = ranked_by_dask(dsk, dependencies, **options)
        return {name: rank for rank, name in enumerate(placing_order(dependencies, ranks))}

    monkeypatch.setattr(dask.order, "order", order)


def slow_increment(x: int) -> int:
    return x + 1


def test_a_group_ranked_before_its_dependency_is_placed_after_it() -> None:
    dependencies = {"sum": {"slow_increment"}, "slow_increment": set()}
    order = placing_order(dependencies, {"sum": 0, "slow_increment": 1})
    assert order == ["slow_increment", "sum"]
    nodes, arrows = place(order, dependencies)
    assert nodes == {"slow_increment": {"x": 0, "y": 0}, "sum": {"x": 1, "y": 0}}
    assert arrows["sum"] == {"nstart": {"slow_increment"}, "nend": ["sum"]}


def test_groups_that_hold_each_other_back_are_all_placed() -> None:
    dependencies = {"a": {"b"}, "b": {"a"}, "c": {"a"}, "d": set()}
    order = placing_order(dependencies, {"a": 1, "b": 2, "c": 3, "d": 0})
    assert order == ["d", "a", "b", "c"]
    nodes, _ = place(order, dependencies)
    assert nodes == {
        "d": {"x": 0, "y": 0},
        "a": {"x": 0, "y": 1},
        "b": {"x": 1, "y": 1},
        "c": {"x": 1, "y": 2},
    }


@pytest.mark.usefixtures("dask_order_after_dependencies")
async def test_given_an_order_dasks_layout_can_use_ours_is_dasks(cluster: LocalCluster) -> None:
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        # A chain, a fan-out and a fan-in (on which Dask's own layout fails with this Dask).
        base = client.map(slow_increment, range(4), key=[f"base-{i}" for i in range(4)])
        left = client.map(slow_increment, base, key=[f"left-{i}" for i in range(4)])
        right = client.map(slow_increment, base, key=[f"right-{i}" for i in range(4)])
        joined = client.submit(lambda *parts: sum(parts), *left, *right, key="joined-0")
        await wait([joined])
        theirs = TaskGroupGraph(cluster.scheduler).update_layout()
        assert len(theirs[0]) == 4
        assert OrderedTaskGroupGraph(cluster.scheduler).update_layout() == theirs


@pytest.mark.slow  # a recorder process with a Bokeh server
async def test_the_demos_groups_are_drawn(jupyter: Jupyter, cluster: LocalCluster) -> None:
    plot_state.offer(cluster.scheduler)
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), [PATH])
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        leaves = [dask.delayed(slow_increment)(i) for i in range(8)]
        held = client.compute([*leaves, dask.delayed(sum)(leaves)])  # both groups kept in memory
        await wait(held)
        shown: set[str] = set()

        async def drawn() -> bool:
            contents = await _ours(jupyter, source_id, PATH)
            shown.update(name for kind, data in contents if kind == "data" for name in data.get("name", ()))
            return any(name.startswith("slow_increment") for name in shown) and any(
                name.startswith("sum") for name in shown
            )

        async with watching(jupyter, source_id, PATH):
            assert await eventually(drawn, 60), shown
