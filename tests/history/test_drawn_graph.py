"""Dask's Graph drawn by the recorder (live/mirror_graph.py): the scheduler sends its tasks
once a tick while the Graph is watched, and each page's layout (Dask's GraphLayout) runs off the
scheduler. A page that stays open follows new, changed and forgotten tasks to the same nodes,
edges and colours as Dask's own page kept open on the same scheduler. (Tasks of equal priority,
as one-by-one submissions have, may be stacked in another order within a column than a page that
saw each submission apart: Dask's own pages differ so, opened at different times.)"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import dask
import pytest
from _drawn import dashboard_root, in_process_cluster
from _support import Jupyter
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Title
from dask import delayed
from distributed import Client, Scheduler, Worker, wait
from distributed.dashboard.scheduler import applications
from test_drawn_state_plots import _source_drawing, watching
from test_history_api import eventually

from dashdock.kernel import plot_state
from dashdock.kernel.plot_state import snapshot
from dashdock.live.mirror import SchedulerMirror
from dashdock.live.mirror_graph import MAX_EDGES, MAX_GRAPH_TASKS, read_graph

PATH = "/individual-graph"


def _inc(x: int) -> int:
    return x + 1


def _add(*numbers: int) -> int:
    return sum(numbers)


class _Page:
    """A Graph page kept open, whose periodic redraw the test runs."""

    def __init__(self, scheduler: Any) -> None:
        self.doc = Document()
        applications[PATH](scheduler, {"prefix": "/"}, self.doc)

    def shown(self) -> dict[str, Any]:
        """After a redraw, what the page shows: its visible nodes (a forgotten task's node stays
        in the data, hidden, until the page renumbers them) and edges, and its subtitle."""
        for callback in self.doc.session_callbacks:
            callback.callback()
        sources = [model for model in self.doc.models if isinstance(model, ColumnDataSource)]
        nodes = next(s.data for s in sources if "state" in s.data)
        edges = next(s.data for s in sources if "state" not in s.data)
        columns = ("key", "x", "y", "state", "name")
        return {
            "nodes": [
                tuple(nodes[c][i] for c in columns) for i, v in enumerate(nodes["visible"]) if v == "True"
            ],
            "edges": [(edges["x"][i], edges["y"][i]) for i, v in enumerate(edges["visible"]) if v == "True"],
            "subtitle": [m.text for m in self.doc.models if isinstance(m, Title) and m.text != "Task Graph"],
        }


@asynccontextmanager
async def _scheduler() -> AsyncIterator[Scheduler]:
    async with Scheduler(dashboard_address=":0", host="127.0.0.1") as s, Worker(s.address, nthreads=2):
        yield s


async def test_an_open_graph_follows_the_scheduler_as_dasks_own_page_does() -> None:
    async with _scheduler() as scheduler:
        await _follows(scheduler)


async def _follows(scheduler: Scheduler) -> None:
    mirror = SchedulerMirror()
    ours, theirs = _Page(mirror), _Page(scheduler)  # both open before there is anything to draw

    def read() -> None:  # a recorder tick: the scheduler's answer while the Graph is watched
        assert mirror.update_state(snapshot(scheduler, graph_items=5000))

    async with Client(scheduler.address, asynchronous=True) as client:
        # A collection's graph, ordered by Dask (dask.order): every task its own priority.
        loads = [delayed(_inc)(i, dask_key_name=f"load-{i}") for i in range(6)]
        pairs = [
            delayed(_add)(a, b, dask_key_name=f"pair-{i}")
            for i, (a, b) in enumerate(itertools.pairwise(loads))
        ]
        held = client.compute([*loads, *pairs, delayed(_add)(*pairs, dask_key_name="total")])
        total = held[-1]
        await wait(held)
        read()
        drawn = ours.shown()
        assert drawn == theirs.shown()
        assert len(drawn["nodes"]) == 12 and len(drawn["edges"]) == 10 + 5
        assert {state for _, _, _, state, _ in drawn["nodes"]} == {"memory"}
        assert max(x for _, x, _, _, _ in drawn["nodes"]) == 2  # loads, pairs, total: three columns

        # Released: the loads and pairs, once only the total is held (it keeps them as its lineage).
        del held
        await _until(lambda: sum(ts.state == "released" for ts in scheduler.tasks.values()) == 11)
        read()
        drawn = ours.shown()
        assert drawn == theirs.shown()
        assert sorted(state for *_, state, _ in drawn["nodes"]) == ["memory"] + ["released"] * 11

        # Forgotten, all of them; then another graph.
        del total
        await _until(lambda: not scheduler.tasks)
        more = [delayed(_inc)(i, dask_key_name=f"more-{i}") for i in range(3)]
        held = client.compute([*more, delayed(_add)(*more, dask_key_name="last")])
        await wait(held)
        read()
        drawn = ours.shown()
        assert drawn == theirs.shown()
        assert sorted(key for key, *_ in drawn["nodes"]) == ["last", "more-0", "more-1", "more-2"]
        # Only Dask's own page runs a layout on the scheduler; ours runs in the mirror.
        assert sum(name.startswith("graph-layout") for name in scheduler.plugins) == 1
        assert sum(name.startswith("graph-layout") for name in mirror.plugins) == 1
        del held


async def _until(condition: Any) -> None:
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the scheduler did not get there in 10 s")


async def test_a_graph_too_big_to_draw_costs_the_scheduler_its_count_only() -> None:
    async with _scheduler() as scheduler, Client(scheduler.address, asynchronous=True) as client:
        futures = client.map(_inc, range(5), key=[f"n-{i}" for i in range(5)])
        await wait(futures)
        answer = snapshot(scheduler, graph_items=4)
        assert answer["graph"] == {"count": 5}  # no task sent
        mirror = SchedulerMirror()
        with dask.config.set({"distributed.dashboard.graph-max-items": 4}):  # the recorder's, as sent
            page = _Page(mirror)
        assert mirror.update_state(answer)
        assert page.shown() == {
            "nodes": [],
            "edges": [],
            "subtitle": ["Scheduler has too many tasks to display."],
        }
        # Not asked for (the Graph is not watched): not sent, and the mirror keeps none.
        assert "graph" not in snapshot(scheduler)
        assert mirror.update_state(snapshot(scheduler)) and len(mirror.tasks) == 0
        del futures


def test_a_hostile_schedulers_graph_is_checked_and_laid_out_in_bounded_time() -> None:
    task = ["a", "memory", "a", [0, 1], []]
    assert read_graph("junk") is None and read_graph(["not", "a", "graph"]) is None
    count, tasks = read_graph(
        {
            "count": -5,
            "tasks": [
                task,
                task,  # the same key again: left out
                ["b", "no-such-state", "b", [], []],
                ["c", "memory", "c", [True, "x"], [0, 0, 99, -1, "0", True]],  # junk places left out
                ["d", "waiting", "d", [], [5]],  # d <-> e: a cycle, both left without dependencies
                ["e", "waiting", "e", [], [4, 0]],
                ["f", "waiting", "f", [], [5]],  # below the cycle: cannot be placed either
                "junk",
                ["k" * 10_000, "memory", "p" * 10_000, list(range(20)), []],
            ],
        }
    ) or (0, [])
    assert count == len(tasks) == 6  # a count below what was sent is what was sent
    by_key = {t.key: t for t in tasks}
    long_key = "k" * 10_000  # whole, as Dask's page has it
    assert by_key["a"].priority == (0, 1) and by_key["c"].priority == () and by_key[long_key].priority == ()
    assert by_key["c"].dependencies == ["a"]
    assert by_key["d"].dependencies == by_key["e"].dependencies == by_key["f"].dependencies == []
    assert by_key[long_key].prefix == "p" * 10_000

    # Laid out by Dask's code, in the recorder: it ends, every task placed.
    mirror = SchedulerMirror()
    page = _Page(mirror)
    cycle = [["d", "waiting", "d", [], [1]], ["e", "waiting", "e", [], [0]], ["g", "memory", "g", [], [0, 1]]]
    assert mirror.update_state({"graph": {"count": 3, "tasks": cycle}})
    assert sorted(key for key, *_ in page.shown()["nodes"]) == ["d", "e", "g"]
    # More than MAX_GRAPH_TASKS sent: the first MAX_GRAPH_TASKS are read, with MAX_EDGES in all.
    many = [[f"t-{i}", "memory", "t", [], list(range(i))] for i in range(MAX_GRAPH_TASKS + 5)]
    _, read = read_graph({"count": 0, "tasks": many}) or (0, [])
    assert len(read) == MAX_GRAPH_TASKS and sum(len(t.dependencies) for t in read) == MAX_EDGES


def test_tuple_keys_are_written_out_as_dasks_graph_writes_them() -> None:
    sent = [
        [["x-token", 0, 1], "memory", "x", [0], []],
        [7, "memory", "7", [1], []],
        [["a", ["b"]], "memory", "a", [], []],
    ]
    _, tasks = read_graph({"count": 3, "tasks": sent}) or (0, [])
    assert [t.key for t in tasks] == [str(("x-token", 0, 1)), "7"]  # a nested key is left out


@pytest.mark.slow  # a recorder process with a Bokeh server
async def test_the_graph_is_asked_for_only_while_a_browser_shows_it(jupyter: Jupyter) -> None:
    """A closed pane's Bokeh session outlives it a while (Bokeh keeps unused sessions 15 s): the
    scheduler stops sending its tasks as soon as no browser is connected, not when Bokeh lets go."""
    with in_process_cluster(threads_per_worker=1) as cluster:
        plot_state.offer(cluster.scheduler)
        asked: list[bool] = []  # per answer of the scheduler: whether the graph was in it
        answer = cluster.scheduler.handlers[plot_state.OP]

        def recorded(comm: object = None, **kwargs: Any) -> object:
            asked.append("graph_items" in kwargs)
            return answer(comm, **kwargs)

        cluster.scheduler.handlers[plot_state.OP] = recorded
        source_id = await _source_drawing(jupyter, dashboard_root(cluster), [PATH])
        async with watching(jupyter, source_id, PATH):
            asked.clear()
            assert await eventually(lambda: _true(asked[-2:] == [True, True]), 30), asked
        asked.clear()
        assert await eventually(lambda: _true(asked[-2:] == [False, False]), 10), asked


async def _true(value: bool) -> bool:
    return value


def test_a_graphs_long_names_are_sent_whole_while_its_answer_stays_bounded() -> None:
    from types import SimpleNamespace

    def scheduler(count: int, length: int) -> Any:
        tasks = {
            f"{i}-" + "k" * length: SimpleNamespace(
                key=f"{i}-" + "k" * length,
                state="memory",
                prefix=SimpleNamespace(name="p" * length),
                priority=(0, i),
                dependencies=(),
            )
            for i in range(count)
        }
        return SimpleNamespace(tasks=tasks)

    few = plot_state._graph(scheduler(3, 1000), MAX_GRAPH_TASKS)["tasks"]
    assert [len(key) for key, *_ in few] == [1002] * 3 and all(len(t[2]) == 1000 for t in few)
    longest = plot_state._graph(scheduler(3, 200_000), MAX_GRAPH_TASKS)["tasks"]  # 1.2 M characters
    assert [len(key) for key, *_ in longest] == [200_002] * 3 and all(len(t[2]) == 200_000 for t in longest)
    many = plot_state._graph(scheduler(MAX_GRAPH_TASKS, 5000), MAX_GRAPH_TASKS)["tasks"]
    assert len(many) == MAX_GRAPH_TASKS
    assert sum(len(key) + len(prefix) for key, _, prefix, *_ in many) <= plot_state.GRAPH_NAMES_BUDGET
