"""The history store: what the recorder writes is what the server reads back, windows are exact,
retention keeps live runs, a damaged file is moved aside and reported, readers and a writer process
work at once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from dashdock.history.model import (
    Alert,
    Event,
    Gap,
    GroupProgress,
    MetricSample,
    Run,
    Span,
    TaskRecord,
    WorkerSample,
)
from dashdock.history.store import HistoryStore, HistoryStoreError

T0 = 1_764_000_000.0
ROOT = Path(__file__).resolve().parents[2]


def a_run(run_id: str = "0123456789ab", start: float = T0, end: float | None = None) -> Run:
    return Run(
        id=run_id,
        source="fedcba987654",
        name="Cluster 1",
        scheduler="tcp://127.0.0.1:1",
        start=start,
        end=end,
    )


def a_task(key: str, start: float, stop: float, **fields: object) -> TaskRecord:
    values: dict[str, object] = {
        "group": key.split("-")[0],
        "worker": "tcp://127.0.0.1:40001",
        "thread": 7,
        "status": "OK",
        "spans": (Span("compute", start, stop),),
    }
    values.update(fields)
    return TaskRecord(key=key, start=start, stop=stop, **values)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> HistoryStore:
    opened = HistoryStore.open(tmp_path / "history" / "history.db")
    yield opened
    opened.close()


def test_everything_recorded_reads_back_as_written_also_after_reopening(store: HistoryStore) -> None:
    run = a_run()
    store.begin_run(run)
    tasks = [
        a_task("sum-1", T0 + 1, T0 + 2, nbytes=80),
        a_task(
            "('getitem-abc', 3)",
            T0 + 1.5,
            T0 + 2.5,
            group="getitem",
            worker="tcp://127.0.0.1:40002",
            thread=None,
            spans=(
                Span("transfer", T0 + 1.5, T0 + 1.7, "tcp://127.0.0.1:40001"),
                Span("compute", T0 + 1.7, T0 + 2.5),
            ),
        ),
        a_task("div-2", T0 + 3, T0 + 3.25, status="error", exception="ZeroDivisionError('division by zero')"),
        a_task("odd-3", T0 + 4, T0 + 4.5, spans=(Span("compute", T0 + 4.1, T0 + 4.5),)),
        a_task("none-4", T0 + 5, T0 + 5.5, spans=()),
    ]
    assert store.add_tasks(run.id, tasks[:2])
    assert store.add_tasks(run.id, tasks[2:])
    gap = Gap(T0 + 2.6, T0 + 2.9, missed=17)
    store.add_gap(run.id, gap)
    samples = [WorkerSample(T0 + 1, "tcp://127.0.0.1:40001", 100, 200, 0, 12.5)]
    store.add_worker_samples(run.id, samples)
    progress = [GroupProgress(T0 + 2, "sum", {"memory": 3, "processing": 1})]
    store.add_group_progress(run.id, progress)
    events = [Event(T0 + 0.5, "worker-joined", "tcp://127.0.0.1:40001", {"nthreads": 4})]
    store.add_events(run.id, events)
    store.end_run(run.id, T0 + 6)

    reopened = HistoryStore.open(store.path)
    try:
        assert reopened.warning is None
        for reader in (store, reopened):
            assert list(reader.tasks(run.id)) == tasks
            assert reader.gaps(run.id) == [gap]
            assert reader.worker_samples(run.id) == samples
            assert reader.group_progress(run.id) == progress
            assert reader.events(run.id) == events
            [listed] = reader.runs()
            assert listed == Run(**{**run.to_store_json(), "end": T0 + 6, "tasks": 5, "gaps": 17})
            assert not listed.live
            assert reader.run(run.id) == listed
    finally:
        reopened.close()
    # Private: task keys and exceptions are the user's.
    assert os.stat(store.path).st_mode & 0o077 == 0


def test_a_window_holds_exactly_the_tasks_overlapping_it_edges_included(store: HistoryStore) -> None:
    run = a_run()
    store.begin_run(run)
    store.add_tasks(
        run.id,
        [
            a_task("a-0", T0 + 0, T0 + 1),
            a_task("b-1", T0 + 1, T0 + 2),
            a_task("c-2", T0 + 2, T0 + 3),
            a_task("d-3", T0 + 3.5, T0 + 4),
        ],
    )
    # A long task, written later: it overlaps windows long after it started.
    store.add_tasks(run.id, [a_task("long-4", T0 + 0.5, T0 + 10)])

    def keys(start: float | None, end: float | None, limit: int | None = None) -> list[str]:
        return [task.key for task in store.tasks(run.id, start, end, limit)]

    assert keys(T0 + 1, T0 + 2) == ["a-0", "long-4", "b-1", "c-2"]
    assert keys(T0 + 1.25, T0 + 1.75) == ["long-4", "b-1"]
    assert keys(T0 + 3.0001, T0 + 3.4) == ["long-4"]
    assert keys(T0 + 10.0001, None) == []
    assert keys(None, T0 + 0.4) == ["a-0"]
    assert keys(None, None, limit=2) == ["a-0", "long-4"]
    assert keys(None, None) == ["a-0", "long-4", "b-1", "c-2", "d-3"]
    assert list(store.tasks("000000000000")) == []


def test_the_overview_counts_tasks_finished_per_bucket(store: HistoryStore) -> None:
    run = a_run()
    store.begin_run(run)
    store.add_tasks(run.id, [a_task(f"x-{i}", T0 + i * 0.25, T0 + i * 0.25 + 0.1) for i in range(20)])
    assert store.task_rate(run.id, 1.0) == [(T0 + s, 4) for s in range(5)]
    assert sum(n for _, n in store.task_rate(run.id, 0.1)) == 20
    # A task the recorder read from before the run began counts in the bucket before it.
    store.add_tasks(run.id, [a_task("early-1", T0 - 0.5, T0 - 0.35)])
    assert store.task_rate(run.id, 2.5) == [(T0 - 2.5, 1), (T0, 10), (T0 + 2.5, 10)]
    assert store.task_rate("000000000000", 1.0) == []


def test_retention_deletes_the_oldest_ended_runs_never_a_live_one(store: HistoryStore) -> None:
    live = a_run("00000000000a", start=T0)  # the oldest, but still recording
    old = a_run("00000000000b", start=T0 + 10, end=T0 + 20)
    newer = a_run("00000000000c", start=T0 + 30, end=T0 + 40)
    for run in (live, old, newer):
        store.begin_run(run)
        store.add_tasks(
            run.id, [a_task(f"t-{i}", run.start + i / 1000, run.start + i / 1000 + 0.5) for i in range(3000)]
        )
        store.add_events(run.id, [Event(run.start, "worker-joined", "w", {})])

    # By age: runs ended more than 100 s before now go, the live one stays whatever its age.
    assert store.enforce_retention(max_bytes=10**12, max_age=100, now=T0 + 130) == [old.id]
    assert [r.id for r in store.runs()] == [live.id, newer.id]
    assert store.tasks(old.id) is not None and list(store.tasks(old.id)) == []
    assert store.events(old.id) == []

    # By size: ended runs go, oldest first, until under the limit; a live run alone over it stays.
    size_before = os.stat(store.path).st_size
    assert store.enforce_retention(max_bytes=1, max_age=10**9, now=T0 + 130) == [newer.id]
    assert [r.id for r in store.runs()] == [live.id]
    assert len(list(store.tasks(live.id))) == 3000
    assert os.stat(store.path).st_size < size_before  # the space went back to the file system
    assert store.enforce_retention(max_bytes=1, max_age=0, now=T0 + 10**6) == []
    assert not store.delete_run(newer.id)


def test_writes_to_a_deleted_run_are_dropped(store: HistoryStore) -> None:
    run = a_run()
    store.begin_run(run)
    assert store.delete_run(run.id)
    assert not store.add_tasks(run.id, [a_task("x-1", T0, T0 + 1)])
    assert not store.add_gap(run.id, Gap(T0, T0 + 1, 3))
    assert store.runs() == []


@pytest.mark.parametrize(
    "content",
    [b"this is not a database, just text\n" * 100, b"SQLite format 3\x00" + b"\xff" * 8000],
    ids=["text", "damaged-sqlite"],
)
def test_a_damaged_store_is_moved_aside_reported_and_replaced(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "history.db"
    path.write_bytes(content)
    store = HistoryStore.open(path)
    try:
        assert store.warning is not None
        [aside] = [p for p in tmp_path.iterdir() if p.name.startswith("history.db.damaged-")]
        assert aside.read_bytes() == content
        assert aside.name in store.warning and str(path) in store.warning
        store.begin_run(a_run())
        assert [run.id for run in store.runs()] == ["0123456789ab"]
    finally:
        store.close()
    again = HistoryStore.open(path)
    assert again.warning is None and len(again.runs()) == 1
    again.close()


def test_a_store_of_another_version_is_left_alone_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    HistoryStore.open(path).close()
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(HistoryStoreError, match="store version 99"):
        HistoryStore.open(path)
    assert [p.name for p in tmp_path.iterdir() if "damaged" in p.name] == []


def test_a_store_an_older_dashdock_wrote_gains_alerts_and_keeps_its_runs(store: HistoryStore) -> None:
    path = store.path
    store.begin_run(Run(id="0123456789ab", source="s", name="Old", scheduler="tcp://127.0.0.1:1", start=1.0))
    store.close()
    with closing(sqlite3.connect(path)) as db:  # version 1: no alerts, metric or scheduler samples
        db.executescript(
            "DROP TABLE alerts; DROP TABLE metric_samples; DROP TABLE scheduler_samples;"
            " PRAGMA user_version = 1;"
        )
    upgraded = HistoryStore.open(path)
    assert [r.name for r in upgraded.runs()] == ["Old"]
    alert = Alert(
        "a1a1a1a1a1a1", "s", "task-erred", "boom", 2.0, 2.0, "boom: 1 task erred", {"group": "boom"}
    )
    assert upgraded.add_alerts("0123456789ab", [alert])
    again = Alert(alert.id, "s", "task-erred", "boom", 2.0, 3.0, "boom: 2 tasks erred", {"group": "boom"}, 2)
    assert upgraded.add_alerts("0123456789ab", [again])
    assert upgraded.alerts() == [again]  # updated in place: one alert, the first time kept
    assert upgraded.alerts(since=3.0) == [] and upgraded.alerts(source="t") == []
    sample = MetricSample(2.0, "answer", "answer", 42.0)
    assert upgraded.add_metric_samples("0123456789ab", [sample])
    assert upgraded.metric_samples("0123456789ab") == [sample]
    assert upgraded.add_scheduler_samples("0123456789ab", [(2.0, 97.5)])
    assert upgraded.scheduler_cpu("0123456789ab") == [(2.0, 97.5)]
    assert upgraded.delete_run("0123456789ab") and upgraded.alerts() == []
    assert upgraded.metric_samples("0123456789ab") == [] and upgraded.scheduler_cpu("0123456789ab") == []
    upgraded.close()


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from dashdock.history.model import Run, Span, TaskRecord
    from dashdock.history.store import HistoryStore, HistoryStoreError

    store = HistoryStore.open(Path(sys.argv[1]))
    run = Run(id="0123456789ab", source="s", name="n", scheduler="tcp://127.0.0.1:1", start=0.0)
    store.begin_run(run)
    for batch in range(200):
        tasks = [
            TaskRecord(f"k-{batch}-{i}", "k", "w", 1, batch + i / 1000, batch + i / 1000 + 0.01, "OK",
                       (Span("compute", batch + i / 1000, batch + i / 1000 + 0.01),))
            for i in range(500)
        ]
        store.add_tasks(run.id, tasks)
    store.end_run(run.id, 500.0)
    """
)


def test_the_server_reads_while_the_recorder_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    reader = HistoryStore.open(path)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT)
    seen = []
    try:
        while writer.poll() is None:
            runs = reader.runs()
            if runs:
                # A read sees whole batches only: each write is one transaction.
                count = sum(1 for _ in reader.tasks(runs[0].id))
                assert count % 500 == 0
                seen.append(count)
    finally:
        writer.wait(60)
        reader.close()
    assert writer.returncode == 0
    assert seen == sorted(seen)
    final = HistoryStore.open(path)
    [run] = final.runs()
    assert run.tasks == 100_000 and not run.live
    assert sum(1 for _ in final.tasks(run.id)) == 100_000
    final.close()
