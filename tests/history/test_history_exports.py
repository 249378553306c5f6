"""The exports of a recorded run: the Chrome trace, the task table as Parquet, the HTML report."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from dashdock.errors import NotFound
from dashdock.history.model import Event, Gap, Run, Span, TaskRecord, WorkerSample
from dashdock.history.parquet import tasks_parquet
from dashdock.history.report import ReportLimits, html_report
from dashdock.history.store import HistoryStore
from dashdock.history.trace import chrome_trace

T0 = 1_764_000_000.0
RUN = "0123456789ab"
WORKERS = ("tcp://127.0.0.1:40001", "tcp://127.0.0.1:40002")
EVIL = "<script>alert('x')</script>"


def recorded_tasks(count: int) -> list[TaskRecord]:
    """Two workers of two threads; every third task fetched its input first, one task erred."""
    tasks = []
    for n in range(count):
        worker, thread = WORKERS[n % 2], 100 + (n // 2) % 2
        start = T0 + n * 0.01
        spans: tuple[Span, ...] = (Span("compute", start, start + 0.02),)
        if n % 3 == 0:
            spans = (
                Span("transfer", start, start + 0.005, WORKERS[1 - n % 2]),
                Span("compute", start + 0.005, start + 0.02),
            )
        tasks.append(
            TaskRecord(
                key=f"('inc-{n % 7}', {n})",
                group=f"inc-{n % 7}",
                worker=worker,
                thread=thread,
                start=start,
                stop=start + 0.02,
                status="OK",
                spans=spans,
                nbytes=28,
            )
        )
    return tasks


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    opened = HistoryStore.open(tmp_path / "history.db")
    yield opened
    opened.close()


def record(store: HistoryStore, tasks: list[TaskRecord]) -> None:
    store.begin_run(
        Run(id=RUN, source="fedcba987654", name="Cluster 1", scheduler="tcp://127.0.0.1:1", start=T0)
    )
    for i in range(0, len(tasks), 1000):
        store.add_tasks(RUN, tasks[i : i + 1000])


def trace_of(
    store: HistoryStore, start: float | None = None, end: float | None = None, chunk: int = 4096
) -> tuple[dict, int]:
    chunks = list(chrome_trace(store, RUN, start, end, chunk=chunk))
    return json.loads(b"".join(chunks)), len(chunks)


def test_the_trace_holds_each_span_once_on_its_worker_and_thread(store: HistoryStore) -> None:
    tasks = recorded_tasks(3000)
    record(store, tasks)
    store.add_gap(RUN, Gap(T0 + 5, T0 + 6, missed=42))
    trace, chunks = trace_of(store)

    assert chunks > 10  # streamed, not built whole
    assert trace["displayTimeUnit"] == "ms"
    events = trace["traceEvents"]
    processes = {
        e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"
    }
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"]
        for e in events
        if e["ph"] == "M" and e["name"] == "thread_name"
    }
    spans = [e for e in events if e["ph"] == "X"]
    seen = Counter((e["args"]["key"], e["cat"]) for e in spans)
    expected = Counter((t.key, s.action) for t in tasks for s in t.spans)
    assert seen == expected and max(seen.values()) == 1
    by_key = {t.key: t for t in tasks}
    for event in spans:
        task = by_key[event["args"]["key"]]
        assert processes[event["pid"]] == task.worker
        assert threads[(event["pid"], event["tid"])] == f"thread {task.thread}"
        assert event["dur"] > 0
        assert event["args"]["group"] == task.group and event["args"]["status"] == "OK"
        assert event["name"] == (task.key if event["cat"] == "compute" else event["cat"])
    first = min(spans, key=lambda e: e["ts"])
    assert first["ts"] == 0  # microseconds from the run's start
    [gap] = [e for e in events if e["ph"] == "i"]
    assert gap["name"] == "missed 42 tasks" and gap["s"] == "g" and gap["ts"] == pytest.approx(5e6)


def test_a_window_trace_holds_the_tasks_of_the_window_and_an_empty_run_is_valid(store: HistoryStore) -> None:
    record(store, recorded_tasks(1000))
    trace, _ = trace_of(store, T0 + 2.005, T0 + 2.995)
    keys = {e["args"]["key"] for e in trace["traceEvents"] if e["ph"] == "X"}
    # Task n runs from n/100 to n/100 + 0.02 s: tasks 199..299 overlap [2.005, 2.995].
    assert keys == {f"('inc-{n % 7}', {n})" for n in range(199, 300)}
    empty, _ = trace_of(store, T0 + 100, T0 + 200)
    assert [e["ph"] for e in empty["traceEvents"]] == ["M"]
    with pytest.raises(NotFound):
        next(chrome_trace(store, "000000000000"))


def test_the_task_table_reads_back_with_pyarrow(store: HistoryStore) -> None:
    tasks = recorded_tasks(2500)
    record(store, tasks)
    out = io.BytesIO()
    tasks_parquet(store, RUN, None, None, out, row_group=1000)
    out.seek(0)
    parquet = pq.ParquetFile(out)
    assert parquet.metadata.num_row_groups == 3
    rows = parquet.read().to_pylist()
    assert [row["key"] for row in rows] == [t.key for t in tasks]
    first, second = rows[0], rows[1]
    assert first["worker"] == WORKERS[0] and first["thread"] == 100 and first["group"] == "inc-0"
    assert first["start"] == T0 and first["stop"] == T0 + 0.02 and first["nbytes"] == 28
    assert first["transfer_seconds"] == pytest.approx(0.005, abs=1e-6) and first[
        "compute_seconds"
    ] == pytest.approx(0.015, abs=1e-6)
    assert second["transfer_seconds"] == 0 and second["disk_seconds"] == 0
    assert first["status"] == "OK" and first["exception"] is None

    window = io.BytesIO()
    tasks_parquet(store, RUN, T0 + 100, None, window)
    window.seek(0)
    assert pq.read_table(window).num_rows == 0  # an empty window is an empty table, with its columns
    window.seek(0)
    assert "compute_seconds" in pq.read_table(window).column_names


def test_the_report_is_one_offline_page_with_memory_exceptions_and_metrics_escaped(
    store: HistoryStore,
) -> None:
    tasks = recorded_tasks(300)
    tasks.append(
        TaskRecord(
            key=f"('{EVIL}', 1)",
            group=EVIL,
            worker=WORKERS[0],
            thread=100,
            start=T0 + 1,
            stop=T0 + 1.5,
            status="error",
            spans=(Span("compute", T0 + 1, T0 + 1.5),),
            exception=f'ValueError("{EVIL} & more")',
        )
    )
    record(store, sorted(tasks, key=lambda t: t.start))
    store.add_worker_samples(
        RUN,
        [WorkerSample(T0 + s, w, 1000 * s, 500, 250 * s, 50.0) for s in range(4) for w in WORKERS],
    )
    store.add_gap(RUN, Gap(T0 + 2, T0 + 2.5, missed=9))
    store.add_events(
        RUN,
        [
            Event(T0 + 1, "metrics", None, {"execute / inc / thread-cpu / seconds": 0.25}),
            Event(
                T0 + 3,
                "metrics",
                None,
                {
                    "execute / inc / thread-cpu / seconds": 1.25,
                    "execute / inc / memory-read / bytes": 3 * 2**20,
                    f"execute / {EVIL} / thread-noncpu / seconds": 0.5,
                    "gather-dep / network / seconds": 0.002,
                },
            ),
        ],
    )
    store.add_events(
        RUN, [Event(T0 + 2, "exception", WORKERS[1], {"key": "other-1", "exception": f"KeyError('{EVIL}')"})]
    )
    store.end_run(RUN, T0 + 4)

    page = html_report(store, RUN, None, None)

    assert EVIL not in page  # neither the key nor the exception became markup
    assert "ValueError(&quot;&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more&quot;)" in page
    assert "KeyError(&#x27;&lt;script&gt;" in page
    # Self-contained: no script, style sheet or image is loaded from anywhere.
    assert not re.search(r"<(script|link|img)[^>]+(src|href)=", page)
    assert "Bokeh" in page and "Task stream" in page and "Worker memory" in page
    # Fine Performance Metrics of the whole run, in units: seconds by group and activity, bytes apart.
    assert "Where task time went" in page and "compute (CPU)" in page and "1.25 s" in page
    assert "compute off the CPU (GIL, I/O, waiting)" in page and "500.0 ms" in page
    assert "network transfer" in page and "2.0 ms" in page
    assert "<td>memory read</td><td class='n'>3.0 MiB</td>" in page
    assert "e+" not in page.split("Fine Performance Metrics")[-1]  # no raw exponents in the tables
    # A window gets what it cost: the closing totals less those before it began.
    window = html_report(store, RUN, T0 + 2, T0 + 3.5)
    assert "1.00 s" in window.split("<h2>Fine Performance Metrics</h2>")[1]
    assert "Gaps in the recording" in page and ">9<" in page
    assert "inc-3" in page  # task groups

    bounded = html_report(store, RUN, None, None, limits=ReportLimits(rects=50))
    assert "The task stream draws the first" in bounded
    with pytest.raises(NotFound):
        html_report(store, "000000000000")
