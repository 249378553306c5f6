"""Dask's Fine Performance Metrics drawn from a mirror (live/mirror_fine_metrics.py): the same
bars and pies as Dask's page on the same scheduler, for every span filter a user selects, and
nothing a hostile scheduler sends makes the page draw more than the bounds or fail."""

from __future__ import annotations

import json
import math
import time
from collections import deque
from typing import Any

import msgpack
import pytest
from _bokeh import BokehMessage, models, plot_contents, receive, send_pull_doc_request
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter
from bokeh.models import ColumnDataSource
from distributed import Client, span, wait
from distributed.dashboard.components.scheduler import FinePerformanceMetrics
from test_drawn_state_plots import _connect, _source_drawing
from test_history_api import eventually

from dashdock.kernel import plot_state
from dashdock.live import mirror_fine_metrics
from dashdock.live.mirror import SchedulerMirror

pytestmark = pytest.mark.slow  # a cluster
PATH = "/individual-fine-performance-metrics"

LONG_TAG = "gamma-" + "x" * 300  # listed clipped to 256 characters: a page selects that
SELECTIONS: list[list[str]] = [[], ["alpha"], ["beta"], ["beta", "alpha"], [LONG_TAG]]


def _shown(page: FinePerformanceMetrics) -> list[dict[str, Any]]:
    """What the page draws: its three data sources."""
    sources: list[ColumnDataSource] = [
        page.task_exec_by_prefix_src,
        page.task_exec_by_activity_src,
        page.get_data_by_activity_src,
    ]
    return [{name: list(values) for name, values in source.data.items()} for source in sources]


def _as_the_recorder_reads(answer: dict[str, Any]) -> Any:
    """The handler's answer as it reaches the recorder: msgpack, arrays decoded as tuples."""
    return msgpack.loads(msgpack.dumps(answer), use_list=False, strict_map_key=False)


def _both_pages(dask_scheduler: Any) -> list[tuple[list[str], Any, Any]]:
    """Run in the scheduler's event loop, so both read one state: for each selection, Dask's page
    on the scheduler and ours on a mirror fed as the recorder feeds it (a read with nothing
    selected, the page's redraw, which asks for its selection, the next read, the next redraw)."""
    compared = []
    for selection in SELECTIONS:
        theirs = FinePerformanceMetrics(dask_scheduler)
        theirs.span_tag_selector.value = selection
        theirs.update()

        mirror = SchedulerMirror()
        mirror.update_state(_as_the_recorder_reads(plot_state.snapshot(dask_scheduler, fine_metrics_tags=[])))
        ours = FinePerformanceMetrics(mirror)
        ours.span_tag_selector.value = [tag[: mirror_fine_metrics.MAX_NAME] for tag in selection]
        ours.update()
        asked = mirror.fine_metrics_tags()
        answer = plot_state.snapshot(dask_scheduler, fine_metrics_tags=asked)
        mirror.update_state(_as_the_recorder_reads(answer))
        ours.update()
        compared.append((asked, _shown(theirs), _shown(ours)))
    return compared


def alpha_work(x: int) -> int:
    return x + 1


def beta_work(x: int) -> int:
    return x * 2


def gamma_work(x: int) -> int:
    return x - 1


def _stop_heartbeats(dask_worker: Any) -> None:
    dask_worker.periodic_callbacks["heartbeat"].stop()


def test_fine_performance_metrics_drawn_from_a_mirror_show_dasks_numbers_for_each_span_filter() -> None:
    with in_process_cluster(threads_per_worker=1) as cluster, Client(cluster) as client:
        with span("alpha"):
            first = client.map(alpha_work, range(20))
            with span("beta"):
                second = client.map(beta_work, range(20))
        with span(LONG_TAG):
            third = client.map(gamma_work, range(5))
        wait(first + second + third)

        def heard() -> bool:  # the workers' heartbeats have brought both functions' metrics
            keys = list(cluster.scheduler.cumulative_worker_metrics)
            return {"alpha_work", "beta_work", "gamma_work"} <= {key[1] for key in keys if len(key) == 4}

        deadline = time.monotonic() + 60
        while not heard():
            assert time.monotonic() < deadline, list(cluster.scheduler.cumulative_worker_metrics)
            time.sleep(0.05)
        client.run(_stop_heartbeats)  # what both pages read stays as it is

        compared = client.run_on_scheduler(_both_pages)

    for selection, (asked, theirs, ours) in zip(SELECTIONS, compared, strict=True):
        # Only a selection is asked for: with none, the spans merged whole come with every read.
        assert asked == ([[tag[: mirror_fine_metrics.MAX_NAME] for tag in selection]] if selection else []), (
            asked
        )
        assert ours == theirs, (selection, ours, theirs)
        bars = ours[0]
        assert bars["__functions"], (selection, bars)  # not an empty page that equals another
    # Each filter shows its own spans: beta's spans ran only beta_work.
    by_selection = {tuple(s): c[2][0]["__functions"] for s, c in zip(SELECTIONS, compared, strict=True)}
    assert "alpha_work" in by_selection[("alpha",)]
    assert "alpha_work" not in by_selection[("beta",)] and "beta_work" in by_selection[("beta",)]
    assert by_selection[(LONG_TAG,)] and "gamma_work" in by_selection[(LONG_TAG,)]  # a tag over 256


async def test_a_span_filter_chosen_on_a_drawn_page_is_merged_by_the_scheduler(jupyter: Jupyter) -> None:
    """The whole way: a user picks a span tag in our page's filter (a Bokeh patch from the
    browser), the recorder asks the scheduler for those spans merged, and the bars show them."""
    with in_process_cluster(threads_per_worker=1) as cluster:
        plot_state.offer(cluster.scheduler)
        source_id = await _source_drawing(jupyter, dashboard_root(cluster), [PATH])
        async with Client(cluster.scheduler_address, asynchronous=True) as client:
            with span("alpha"):
                first = client.map(alpha_work, range(20))
                with span("beta"):
                    second = client.map(beta_work, range(20))
            await wait(first + second)
            connection = await _connect(jupyter, source_id, PATH)
            try:
                assert (await receive(connection)).msgtype == "ACK"

                async def functions() -> list[str]:
                    bars = [d for k, d in plot_contents(await _document(connection)) if "__functions" in d]
                    return list(bars[0]["__functions"]) if bars else []

                async def both() -> bool:  # once heartbeats have brought the metrics of both
                    return {"alpha_work", "beta_work"} <= set(await functions())

                assert await eventually(both, 60), await functions()
                await _choose(connection, await _document(connection), ["beta"])

                async def filtered() -> bool:
                    shown = await functions()
                    return "beta_work" in shown and "alpha_work" not in shown

                assert await eventually(filtered, 30), await functions()
            finally:
                connection.close()
            assert scheduler_sessions(cluster) == 0  # the page was ours, not a session on the scheduler
            del first, second


async def _document(connection: Any) -> BokehMessage:
    """The page's document now (patches the server pushes meanwhile are passed over)."""
    await send_pull_doc_request(connection)
    for _ in range(1000):
        reply = await receive(connection)
        if reply.msgtype == "PULL-DOC-REPLY":
            return reply
    raise AssertionError("no PULL-DOC-REPLY in 1000 messages")


async def _choose(connection: Any, document: BokehMessage, tags: list[str]) -> None:
    """Select ``tags`` in the page's span filter, as the browser tells the server a widget changed."""
    found = [
        str(node["id"])
        for name, attributes, node in models(document)
        if name == "MultiChoice" and str(attributes.get("title", "")).startswith("Filter by span tag")
    ]
    assert len(found) == 1, found
    event = {"kind": "ModelChanged", "model": {"id": found[0]}, "attr": "value", "new": tags}
    await connection.write_message(json.dumps({"msgid": "choose", "msgtype": "PATCH-DOC"}))
    await connection.write_message("{}")
    await connection.write_message(json.dumps({"events": [event]}))


def test_fine_metrics_from_a_hostile_scheduler_are_checked_and_bounded() -> None:
    many = mirror_fine_metrics.MAX_METRICS + 500
    junk: dict[str, Any] = {
        "cumulative": (
            [(("execute", f"f{i}", "thread-cpu", "seconds"), 1.0) for i in range(many)]
            + [
                (("execute", "short", "seconds"), 1.0),  # an execute key of three parts
                (("execute", "f", "a", 7), 1.0),  # a unit that is not text
                (("get-data", "network", "seconds"), math.nan),
                (("get-data", "network", "seconds"), True),
                "not an entry",
                (("x",), 1.0),
            ]
        ),
        "tags": ["ok", 3, "t" * 1000] + [f"tag{i}" for i in range(2000)],
        "spans": -4,
        "all": {"not": "a list"},
        "by_tags": [[["ok"], [(("execute", "g", "a", "seconds"), 2.0)]]] * 10 + [["bad"], 7],
    }
    mirror = SchedulerMirror()
    answer = plot_state.snapshot(_EmptyScheduler(), fine_metrics_tags=[])
    answer["fine_metrics"] = junk
    assert mirror.update_state(_as_the_recorder_reads(answer))
    metrics, spans = mirror.cumulative_worker_metrics, mirror.extensions.get("spans")
    assert len(metrics) == mirror_fine_metrics.MAX_METRICS
    assert all(len(key) == 4 and all(isinstance(p, str) for p in key) for key in metrics)
    assert spans is not None
    assert len(spans.spans_search_by_tag) <= mirror_fine_metrics.MAX_TAGS
    assert max(map(len, spans.spans_search_by_tag)) <= mirror_fine_metrics.MAX_NAME
    assert not spans.spans  # a negative count reads as none
    assert spans.merge_all().cumulative_worker_metrics == {}
    assert spans.merge_by_tags("ok").cumulative_worker_metrics == {("execute", "g", "a", "seconds"): 2.0}

    # Pages ask for at most MAX_TAG_SETS selections a read: the newest.
    for i in range(10):
        spans.merge_by_tags(f"tag{i}")
    assert spans.asked() == [[f"tag{i}"] for i in range(10 - mirror_fine_metrics.MAX_TAG_SETS, 10)]

    # Dask's page draws whatever the mirror holds without failing.
    page = FinePerformanceMetrics(mirror)
    page.update()
    assert len(_shown(page)[0]["__functions"]) == mirror_fine_metrics.MAX_METRICS

    # Not watched any more (no answer, or not one): nothing is kept.
    for not_an_answer in (None, ["not", "a", "mapping"]):
        answer["fine_metrics"] = not_an_answer
        assert mirror.update_state(_as_the_recorder_reads(answer))
        assert mirror.cumulative_worker_metrics == {} and "spans" not in mirror.extensions
        answer["fine_metrics"] = junk
        assert mirror.update_state(_as_the_recorder_reads(answer))
        assert mirror.extensions.get("spans") is not None


class _EmptyScheduler:
    """What ``plot_state.snapshot`` reads, with nothing in it."""

    def __init__(self) -> None:
        from distributed.system_monitor import SystemMonitor

        self.idle: dict[str, Any] = {}
        self.saturated: set[Any] = set()
        self.workers: dict[str, Any] = {}
        self.task_prefixes: dict[str, Any] = {}
        self.total_nthreads = 0
        self.bandwidth = 0.0
        self.bandwidth_types: dict[str, float] = {}
        self.bandwidth_workers: dict[tuple[str, str], float] = {}
        self.erred_tasks: deque[Any] = deque(maxlen=100)
        self.monitor = SystemMonitor()
        self._tick_interval_observed = 0.0
        self.transition_counter = 0
        self.cumulative_worker_metrics: dict[Any, float] = {}
        self.extensions: dict[str, Any] = {}
