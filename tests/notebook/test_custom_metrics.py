"""Custom metrics (``dashdock.metric``) on a real scheduler in its own process, and how they are listed."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from distributed import Client, LocalCluster

import dashdock
from dashdock.sources.catalog import parse_custom

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # Processes, so the board really travels to another interpreter by value.
    with LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address="127.0.0.1:0"
    ) as cluster:
        yield cluster


@pytest.fixture
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster) as client:
        yield client
        for metric in dashdock.metrics(client):
            metric.remove()


def _root(client: Client) -> str:
    return client.dashboard_link.rsplit("/", 1)[0]


def _listing(client: Client) -> dict[str, str]:
    with urllib.request.urlopen(_root(client) + "/dashdock-metrics.json", timeout=10) as response:
        return json.loads(response.read())


def _eventually(condition: Callable[[], Any], timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)
    return value


def test_a_metric_is_listed_and_served_and_goes_when_removed(client: Client) -> None:
    metric = dashdock.metric(client, "Queue length", lambda dask_scheduler: len(dask_scheduler.tasks))
    assert metric.path == "/dashdock-metric-queue-length"
    assert _listing(client) == {"Queue length": metric.path}
    with urllib.request.urlopen(_root(client) + metric.path, timeout=10) as response:
        page = response.read().decode()
    assert "<title>Queue length</title>" in page and "bokeh" in page
    assert metric.remove() is True
    assert metric.remove() is False
    assert _listing(client) == {}
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(_root(client) + metric.path, timeout=10)
    assert refused.value.code == 404


def test_running_the_cell_again_replaces_the_metric_under_the_same_plot(client: Client) -> None:
    first = dashdock.metric(client, "Load", lambda dask_scheduler: 1, every=0.2)
    second = dashdock.metric(client, "Load", lambda dask_scheduler: {"a": 2, "b": 3}, every=0.2)
    assert second.path == first.path
    described = _eventually(lambda: [m for m in dashdock.metrics(client) if m.lines == ["a", "b"]])
    assert [metric.name for metric in described] == ["Load"]
    # Another name that makes the same slug gets a plot of its own.
    other = dashdock.metric(client, "LOAD!", lambda dask_scheduler: 1)
    assert other.path == "/dashdock-metric-load-2"


def test_a_failing_function_is_reported_and_harms_nothing(client: Client) -> None:
    dashdock.metric(client, "Broken", lambda dask_scheduler: 1 / 0, every=0.2)
    dashdock.metric(client, "Text", lambda dask_scheduler: "high", every=0.2)
    dashdock.metric(
        client, "Worker failure", lambda dask_worker: dask_worker.missing, every=0.2, where="workers"
    )
    errors = _eventually(
        lambda: (
            (found := {m.name: m.error for m in dashdock.metrics(client) if m.error})
            and len(found) == 3
            and found
        )
    )
    assert errors.keys() == {"Broken", "Text", "Worker failure"}, errors
    assert errors["Broken"] == "ZeroDivisionError: division by zero"
    assert errors["Text"] == "TypeError: it returned str, not a number or a dict of numbers"
    assert "has no attribute 'missing'" in errors["Worker failure"]
    assert errors["Worker failure"].count("Worker ") == 2  # each worker says it failed
    assert client.submit(lambda x: x + 1, 1).result(timeout=10) == 2


def test_a_worker_metric_draws_one_line_per_worker(client: Client) -> None:
    dashdock.metric(
        client, "Threads", lambda dask_worker: dask_worker.state.nthreads, every=0.2, where="workers"
    )
    lines = _eventually(lambda: [m.lines for m in dashdock.metrics(client) if m.lines])
    assert lines == [["Worker 0", "Worker 1"]]


def test_a_client_metric_goes_with_its_client_and_a_cluster_metric_stays(cluster: LocalCluster) -> None:
    with Client(cluster) as owner:
        dashdock.metric(owner, "Mine", lambda dask_scheduler: 1, lifetime="client")
        dashdock.metric(owner, "Shared", lambda dask_scheduler: 1)
    with Client(cluster) as later:
        assert _eventually(lambda: [m.name for m in dashdock.metrics(later)] == ["Shared"])
        for metric in dashdock.metrics(later):
            metric.remove()


def test_limits_and_bad_arguments_say_what_is_wrong(client: Client) -> None:
    bad: list[tuple[dict[str, Any], str]] = [
        ({"name": ""}, "name of 1 to 100 characters"),
        ({"fn": 42}, "fn must be a function"),
        ({"every": 0.01}, "every is in seconds, from 0.1"),
        ({"where": "nanny"}, "where is one of 'scheduler', 'workers'"),
        ({"lifetime": "forever"}, "lifetime is one of 'cluster', 'client'"),
        ({"max_points": 0}, "max_points is a positive whole number"),
    ]
    for changed, message in bad:
        arguments: dict[str, Any] = {"name": "m", "fn": lambda dask_scheduler: 1, **changed}
        with pytest.raises((ValueError, TypeError), match=message):
            dashdock.metric(client, **arguments)
    dashdock.metric(client, "one", lambda dask_scheduler: 1, max_metrics=2)
    dashdock.metric(client, "two", lambda dask_scheduler: 1, max_metrics=2)
    with pytest.raises(ValueError, match="has 2 metrics, the most it keeps; remove one first"):
        dashdock.metric(client, "three", lambda dask_scheduler: 1, max_metrics=2)


def test_the_listing_keeps_only_usable_names_and_paths() -> None:
    hostile = {
        "fine": "/dashdock-metric-fine",
        "": "/dashdock-metric-empty",
        "x" * 101: "/dashdock-metric-long",
        "other host": "//evil.example/x",
        "up": "/dashdock-metric/../../api/contents",
        "script": "/<script>",
        "number": 7,
    }
    assert [(plot.name, plot.group, plot.path) for plot in parse_custom(hostile)] == [
        ("fine", "custom", "/dashdock-metric-fine")
    ]
    with pytest.raises(ValueError):
        parse_custom(["not", "an", "object"])
