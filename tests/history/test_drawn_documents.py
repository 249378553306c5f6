"""A drawn plot is Dask's page of it, document for document, on what the other tests do not use:
tuple keys, long texts and long names. Each compares the whole document of dashdock's page with
Dask's own page of the same scheduler, frozen so both read the same state."""

from __future__ import annotations

from typing import Any

import pytest
from _drawn import dashboard_root
from _support import Jupyter
from distributed import Client, LocalCluster, wait
from test_drawn_state_plots import _dasks, _ours, _source_drawing, _stop_measuring, cluster, watching
from test_history_api import eventually

from dashdock.kernel import plot_state

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster per test
__all__ = ["cluster"]  # the fixture, shared with test_drawn_state_plots.py

# Dask cuts an exception's message at 10,000 characters: one close to that, raised this deep, has
# texts far past what dashdock once kept (4,000 characters each).
MESSAGE = "a message of an exception, long but within the limit of Dask " * 150
DEPTH = 60  # frames of two functions in turn (Python folds a frame repeated in a row)


def _fail_deep(depth: int) -> None:
    if depth:
        _fail_deeper(depth - 1)
    raise ValueError(MESSAGE)


def _fail_deeper(depth: int) -> None:
    _fail_deep(depth)


async def _same(jupyter: Jupyter, source_id: str, cluster: LocalCluster, path: str) -> tuple[bool, Any]:
    ours, theirs = await _ours(jupyter, source_id, path), await _dasks(cluster, path)
    return ours == theirs, (ours, theirs)


async def test_exceptions_of_tuple_keys_with_long_texts_are_dasks_page(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)
    path = "/individual-exceptions"
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), [path])
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        erred = [client.submit(_fail_deep, DEPTH, key=("deep-failing", i)) for i in range(3)]
        erred.append(client.submit(_fail_deep, DEPTH, key="deep-failing-text-key"))
        await wait(erred)
        for worker in cluster.workers.values():
            worker.periodic_callbacks["heartbeat"].stop()
        await client.run_on_scheduler(_stop_measuring)
        differs: list[Any] = []

        async def same() -> bool:
            equal, differs[:] = await _same(jupyter, source_id, cluster, path)
            return equal

        assert await eventually(same, 60), differs
        (table,) = [data for kind, data in await _ours(jupyter, source_id, path) if kind == "data"]
        # Not an empty table equal to an empty one: the four tasks, their whole texts.
        assert len(table["Task"]) == 4 and all(len(text) > 9_000 for text in table["Exception"])
        assert all(len(text) > 4_000 and "_fail_deep" in text for text in table["Traceback"])
        del erred


# A group name of 5,000 characters (a function's repr, a path) and three keys of it that share
# far more than the 2,048 characters dashdock once kept of a key: three tasks in Dask's Graph, one
# group.
LONG_NAME = "long-group-" + "n" * 5000
SUMMED = "long-sum-" + "s" * 3000


def _sum(*parts: bytes) -> int:
    return sum(map(len, parts))


async def test_long_keys_and_names_are_split_and_coloured_as_dasks_pages(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)
    # Dask's own Task Groups page fails on this graph (the KeyError of its layout that dashdock's
    # page fixes, docs/architecture.md): it is checked for the names below, not compared.
    compared = ("/individual-progress", "/individual-memory-by-key", "/individual-graph")
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), (*compared, "/individual-groups"))
    async with (
        watching(jupyter, source_id, "/individual-memory-by-key", "/individual-graph", "/individual-groups"),
        Client(cluster.scheduler_address, asynchronous=True) as client,
    ):
        parts = client.map(
            lambda i: bytes(1000 * (i + 1)), range(3), key=[f"{LONG_NAME}-{i}" for i in range(3)]
        )
        summed = client.submit(_sum, *parts, key=SUMMED)
        await wait([*parts, summed])
        for worker in cluster.workers.values():
            worker.periodic_callbacks["heartbeat"].stop()
        await client.run_on_scheduler(_stop_measuring)
        differs: list[Any] = []

        async def same() -> bool:
            for path in compared:
                equal, shown = await _same(jupyter, source_id, cluster, path)
                if not equal:
                    differs[:] = [path, shown]
                    return False
            return True

        assert await eventually(same, 60), differs
        graph = str(await _ours(jupyter, source_id, "/individual-graph"))
        assert all(f"{LONG_NAME}-{i}" in graph for i in range(3)), "three nodes, not one"
        groups = str(await _ours(jupyter, source_id, "/individual-groups"))
        assert LONG_NAME in groups and SUMMED in groups
        del parts, summed
