"""A drawn page survives any value its mirror holds (issue 40, item 4): a NaN, a None, a missing
field or a worker of 0 threads in a scheduler's ``dashdock_plot_state`` answer is checked where it
enters the mirror (mirror_state.py, mirror_monitor.py), and a page whose redraw raises all the
same says so once, in the pane and in the log, not a traceback every 500 ms. Whatever a hostile
scheduler sends (workers, prefixes, erred tasks, its monitor, its groups) is checked and bounded
there, keys and names whole within a budget of characters."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
from typing import Any

import bokeh.document.document as bokeh_document
import pytest
from _bokeh import plot_contents, receive, send_pull_doc_request, session_token
from bokeh.document import Document
from bokeh.models.widgets import Div
from distributed.dashboard.scheduler import applications
from tornado.httpclient import AsyncHTTPClient
from tornado.websocket import websocket_connect

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.mirror_monitor import REQUIRED
from dashdock.live.plot_server import FAILED_PAGE, PlotServer, _paced
from dashdock.live.plots import SECRET_HEADER

NAN, INF = float("nan"), float("inf")
PATHS = ("/individual-scheduler-system", "/individual-contention", "/individual-workers")


def _hostile_state(count: int = 3) -> dict[str, Any]:
    """A state whose every number the plots read is NaN, None, infinite or missing."""
    worker = {
        "address": "tcp://10.0.0.1:1",
        "name": None,
        "nthreads": 0,
        "memory_limit": NAN,
        "status": "running",
        "process": INF,
        "occupancy": NAN,
        "processing": None,
        "metrics": {"cpu": NAN, "memory": None, "host_net_io": {"read_bps": INF}, "transfer": 3},
    }
    bare = {"address": "tcp://10.0.0.2:1"}  # every other field missing
    return {
        "workers": [worker, bare],
        "total_nthreads": 0,
        "tick_interval": NAN,
        "monitor": {
            "count": count,
            "kept": 100,
            "gil": True,
            "rows": {
                "time": [None, 1.0e9 + count, NAN, 1.0e9 + count + 0.5],
                "cpu": [None, NAN, INF],  # one short
                "memory": [None, None, None, None],
                "gil_contention": [NAN] * 4,
            },
        },
    }


def _mirror(state: dict[str, Any]) -> SchedulerMirror:
    mirror = SchedulerMirror()
    assert mirror.update_state(state)
    return mirror


@pytest.mark.parametrize("state", [_hostile_state(), {}, {"workers": [{"address": "a"}]}, {"monitor": {}}])
def test_the_mirror_holds_only_finite_numbers_where_the_plots_read_them(state: dict[str, Any]) -> None:
    mirror = _mirror(state)
    assert mirror.total_nthreads >= sum(w.nthreads for w in mirror.workers.values())
    for worker in mirror.workers.values():
        assert worker.nthreads >= 1
        metrics = worker.metrics
        for name in ("cpu", "memory", "time", "event_loop_interval"):
            assert math.isfinite(metrics[name])
        for name, part in (("host_net_io", "read_bps"), ("host_net_io", "write_bps")):
            assert math.isfinite(metrics[name][part])
        for part in ("incoming_bytes", "outgoing_bytes"):
            assert math.isfinite(metrics["transfer"][part])
    rows = mirror.monitor.range_query(start=0)
    assert set(REQUIRED) <= set(rows)
    lengths = {len(values) for values in rows.values()}
    assert len(lengths) == 1 and lengths != {0}, rows  # a row at least, every quantity as long
    for values in rows.values():
        assert all(isinstance(v, float) and math.isfinite(v) for v in values), values
    assert all(t > 0 for t in rows["time"])


def test_monitor_rows_without_a_time_are_left_out_and_the_rest_aligned() -> None:
    monitor = _mirror(_hostile_state()).monitor
    assert list(monitor.quantities["time"]) == [1.0e9 + 3, 1.0e9 + 3.5]
    assert list(monitor.quantities["cpu"]) == [0.0, 0.0]  # NaN, and missing
    assert list(monitor.quantities["num_fds"]) == [0.0, 0.0]  # never sent


@pytest.mark.parametrize("path", PATHS)
def test_a_page_draws_and_redraws_a_hostile_state(path: str, caplog: pytest.LogCaptureFixture) -> None:
    mirror, doc = _mirror(_hostile_state()), Document()
    _paced(doc, mirror, is_seen=lambda _: True, path=path)
    with caplog.at_level(logging.WARNING):
        applications[path](mirror, {"prefix": "/"}, doc)
        for count in range(4, 8):
            assert mirror.update_state(_hostile_state(count))
            for callback in list(doc.session_callbacks):
                callback.callback()
    assert FAILED_PAGE not in [root.text for root in doc.roots if isinstance(root, Div)]
    assert doc.session_callbacks  # still redrawing
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_a_redraw_that_raises_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    mirror, doc = SchedulerMirror(), Document()
    _paced(doc, mirror, is_seen=lambda _: True, path="/individual-workers")

    def redraw() -> None:
        raise ZeroDivisionError("float division by zero")

    doc.add_root(Div(text="drawn"))
    doc.add_periodic_callback(redraw, 500)
    with caplog.at_level(logging.ERROR, logger="dashdock.recorder"):
        for _ in range(5):
            mirror.update_state({})
            for callback in list(doc.session_callbacks):
                callback.callback()
    assert [root.text for root in doc.roots if isinstance(root, Div)] == [FAILED_PAGE]
    assert not doc.session_callbacks  # no redraw left to fail again
    assert [r.getMessage() for r in caplog.records] == [
        "dashdock: the recorder could not draw /individual-workers"
    ]
    assert caplog.records[0].exc_info is not None  # its traceback, once


async def _pull_page(port: int, secret: str, path: str) -> list[tuple[str, Any]]:
    """The page of ``path`` as the proxy asks for it, its document pulled after a few redraws."""
    headers = {SECRET_HEADER: secret}
    page = await AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}{path}?run=r", headers=headers)
    connection = await websocket_connect(
        _request(f"ws://127.0.0.1:{port}{path}/ws", headers),
        subprotocols=["bokeh", session_token(page.body.decode())],
    )
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await asyncio.sleep(1.3)  # redraws of a page whose mirror moves meanwhile
        await send_pull_doc_request(connection)
        for _ in range(100):
            reply = await receive(connection)
            if reply.msgtype != "PATCH-DOC":
                assert reply.msgtype == "PULL-DOC-REPLY", reply.content.get("text")
                return plot_contents(reply)
        raise AssertionError("no PULL-DOC-REPLY in 100 messages")
    finally:
        connection.close()


def _request(url: str, headers: dict[str, str]) -> Any:
    from tornado.httpclient import HTTPRequest

    return HTTPRequest(url, headers=headers)


def test_drawn_pages_of_a_hostile_state_load_and_log_no_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bokeh_document, "gc", gc)  # PlotServer.start replaces it: put it back after
    mirror = _mirror(_hostile_state())

    async def ticks() -> None:
        for count in range(4, 100):
            await asyncio.sleep(0.25)
            mirror.update_state(_hostile_state(count))

    async def main() -> dict[str, list[tuple[str, Any]]]:
        server = PlotServer(lambda run_id: mirror)
        server.start()
        ticking = asyncio.ensure_future(ticks())
        try:
            return {path: await _pull_page(server.port, server.secret, path) for path in PATHS}
        finally:
            ticking.cancel()
            server.stop()

    with caplog.at_level(logging.WARNING):
        contents = asyncio.run(main())
    for path, content in contents.items():
        assert content, path
        assert FAILED_PAGE not in str(content), path
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info], caplog.text


def test_what_a_hostile_scheduler_says_of_its_state_is_checked_and_clipped() -> None:
    from distributed.core import Status

    from dashdock.live.mirror import ERRED_TEXTS_BUDGET, SchedulerMirror
    from dashdock.live.mirror_state import MAX_EXCEPTION_TEXT, MAX_HELD, MAX_NAME, MAX_PREFIXES, MAX_WORKERS

    mirror = SchedulerMirror()
    assert not mirror.update_state(["not", "a", "state"]) and not mirror.has_state
    worker = {
        "address": "tcp://" + "w" * 10_000,
        "name": {"not": "a name"},
        "nthreads": -4,
        "memory_limit": float("inf"),
        "status": "<script>",
        "metrics": {"cpu": 1e300, "transfer": {"incoming_bytes": 5, "deeper": {"x": 1}}, "text": "no", 7: 1},
        "process": 2**80,
        "managed": "lots",
        "unmanaged_old": -1,
        "spilled": True,
        "occupancy": float("nan"),
        "processing": 10**30,
        "idle": "yes",
        "saturated": True,
        "held": {"x": [10**12, 5], "y": ["many", 1], "z": [1]},
        "gpu_memory_total": 10**30,
    }
    raw = {
        "workers": [worker, worker, "junk", {"address": 5}]
        + [{"address": f"tcp://w:{i}"} for i in range(MAX_WORKERS + 10)],
        "prefixes": {
            "inc": {
                "states": {"memory": 3, "no-worker": "x", "<evil>": 9},
                "durations": {"compute": 1.5, "x": "y"},
            },
            **{f"p{i}": {} for i in range(2000)},
        },
        "total_nthreads": "8",
        "bandwidth_workers": [["a", "b", 1.0], ["a", 5, 2.0], "junk"],
        "exceptions": [["k", 2.0, ["w"] * 100, "E" * 10**5, None], ["short"], "junk"],
        "exceptions_kept": 10**9,
    }
    assert mirror.update_state(raw) and mirror.has_state
    first = next(iter(mirror.workers.values()))
    assert len(first.address) == MAX_NAME and first.name == "{'not': 'a name'}"
    # A worker has at least one thread: 0 of them broke Dask's Workers plot (ZeroDivisionError).
    assert first.nthreads == 1 and first.status is Status.undefined and first.occupancy == 0.0
    assert first.memory.process == 2**53 and first.memory.managed == 0 and first.memory.spilled == 0
    # The metrics Dask's plots index are there (zeros when left out), besides the checked ones sent.
    assert first.metrics == {
        "cpu": 2.0**53,
        "memory": 0.0,
        "time": 0.0,
        "event_loop_interval": 0.0,
        "host_net_io": {"read_bps": 0.0, "write_bps": 0.0},
        "transfer": {"incoming_bytes": 5, "outgoing_bytes": 0.0},
    }
    assert len(first.processing) == 2**53
    assert first in mirror.saturated and first not in mirror.idle
    assert first.extra == {"gpu": {"memory-total": 2**53}}
    assert next(w for w in mirror.workers.values() if w.address == "tcp://w:0").extra == {}
    # Memory by key walks one object per task: never more than MAX_HELD over all workers.
    assert len(first.has_what) == MAX_HELD and first.has_what.by_name == {"x": (MAX_HELD, 5), "y": (0, 1)}
    # The duplicate address and the entries that are not workers are dropped; at most MAX_WORKERS
    # entries are read at all.
    assert len(mirror.workers) == MAX_WORKERS - 3
    # "8" is no count: the total is the workers' threads, a thread each (never fewer than theirs).
    assert len(mirror.task_prefixes) == MAX_PREFIXES and mirror.total_nthreads == len(mirror.workers)
    states = mirror.task_prefixes["inc"].states
    assert states["memory"] == 3 and states["no-worker"] == 0 and "<evil>" not in states
    assert mirror.task_prefixes["inc"].all_durations == {"compute": 1.5}
    assert mirror.bandwidth_workers == {("a", "b"): 1.0} and mirror.bandwidth == 0.0
    (erred,) = mirror.erred_tasks
    assert len(erred.erred_on) == 16 and len(erred.exception_text) == MAX_EXCEPTION_TEXT
    assert erred.traceback_text == "None"
    assert mirror.erred_tasks.maxlen == 1000 and mirror.exceptions_since == 2.0
    assert mirror.memory.process == 2**53  # Scheduler.memory's sum, as Dask's Cluster Memory reads it
    # Erred keys of any length, the newest first, within a budget for their keys and texts together.
    long_erred = [
        [("k-" + "k" * 2**20, i), 3.0 + i, [], "E", "T"] for i in reversed(range(40))
    ]  # newest first
    assert mirror.update_state(raw | {"exceptions": long_erred})
    newest = mirror.erred_tasks[0]
    assert newest.key == ("k-" + "k" * 2**20, 39) and newest.timestamp == 42.0
    assert all(isinstance(e.key, tuple) for e in mirror.erred_tasks)  # the oldest ("k") let go of
    held = sum(len(e.key[0]) + len(e.exception_text) + len(e.traceback_text) for e in mirror.erred_tasks)
    assert mirror.erred_chars == held <= ERRED_TEXTS_BUDGET < held + 2**20 + 8


def test_the_mirrored_monitor_answers_as_dasks_own_and_refuses_junk() -> None:
    from types import SimpleNamespace

    from distributed.dashboard.components.scheduler import Contention
    from distributed.system_monitor import SystemMonitor

    from dashdock.live.mirror_monitor import (
        GIL,
        MAX_QUANTITIES,
        MAX_ROWS,
        REQUIRED,
        MirroredMonitor,
    )

    real = SystemMonitor(maxlen=5)
    mirrored = MirroredMonitor()
    for _ in range(3):  # read in pieces, as the recorder does once a tick
        for _ in range(3):
            real.update()
        mirrored.add(
            {"count": real.count, "kept": real.maxlen, "rows": real.range_query(start=mirrored.count)}
        )
    # Row for row Dask's own (its Scheduler System page holds every column, plots six of them).
    assert set(REQUIRED) <= set(real.quantities)
    for start in (-1, 0, 3, 6, 8, 9, 20):
        assert mirrored.range_query(start) == real.range_query(start), start
    assert mirrored.recent() == real.recent()

    # Contention reads the GIL's contention from ``recent()`` while the scheduler monitors it,
    # however many junk names come before it.
    junk = {f"q{i}": [1] for i in range(100)}
    gil = MirroredMonitor()
    gil.add({"count": 2, "gil": True, "rows": {**junk, "time": [1.0e9, 1.0e9 + 1], GIL: [0.25, 0.5]}})
    contention = Contention(SimpleNamespace(monitor=gil))
    assert contention.gil_contention_scheduler == 0.5 and contention.root.title.text.startswith(
        "Event Loop &"
    )
    assert {*REQUIRED, GIL} <= set(gil.quantities) and gil.range_query(0)[GIL] == [0.25, 0.5]
    assert len(gil.quantities) == MAX_QUANTITIES
    assert math.isnan(Contention(SimpleNamespace(monitor=mirrored)).gil_contention_scheduler)  # as Dask's

    hostile = MirroredMonitor()
    hostile.add(
        {
            "count": True,
            "kept": 10**9,
            "gil": "yes",
            "rows": {**junk, "time": [1.0e9] * 3 * 10**4, "cpu": [float("nan"), "x", 2] * 10**4, 5: [1]},
        }
    )
    # At most MAX_QUANTITIES names, the six Dask's Scheduler System reads always among them;
    # a bool is no count, "yes" is not True, and every value kept is a finite number.
    assert len(hostile.quantities) == MAX_QUANTITIES and set(REQUIRED) <= set(hostile.quantities)
    assert hostile.count == 0 and not hostile.monitor_gil_contention and GIL not in hostile.quantities
    assert all(len(rows) == MAX_ROWS for rows in hostile.quantities.values())
    assert list(hostile.quantities["cpu"])[-3:] == [0.0, 0.0, 2.0] and not any(hostile.quantities["num_fds"])
    hostile.add({"rows": {"more": [1], "time": [1.0e9]}})
    assert "more" not in hostile.quantities  # no more names, over all answers
    # Rows without a time are no rows: Dask's page gets one row of zeros at the current time.
    timeless = MirroredMonitor()
    timeless.add({"count": 3, "rows": {"cpu": [1, 2, 3], "time": [None, "x", float("nan")]}})
    now = timeless.range_query(0)
    assert set(now) == set(REQUIRED) and all(now[name] == [0.0] for name in REQUIRED if name != "time")


def test_task_groups_from_a_hostile_scheduler_are_checked_and_link_only_groups_read() -> None:
    from dashdock.live.mirror_groups import MAX_GROUPS, read_groups

    assert read_groups(None) is None and read_groups(["x"]) is None
    groups = read_groups(
        {
            "a": {
                "prefix": "a",
                "dependencies": ["ghost", 5, "b"],
                "states": {"memory": "9"},
                "types": "str",
            },
            "b": {"prefix": {"x": 1}, "nbytes_total": -5, "duration": float("inf"), "types": ["t"] * 100},
            **{f"g{i}": {} for i in range(2000)},
        }
    )
    assert groups is not None and len(groups) == MAX_GROUPS
    a, b = groups["a"], groups["b"]
    assert a.dependencies == {b} and a.states["memory"] == 0 and a.types == set()
    assert b.prefix.name == "{'x': 1}" and b.nbytes_total == 0 and b.duration == 0.0 and b.types == {"t"}
