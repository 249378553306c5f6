"""Each cause diagnosis names, on a recorded run built to show it (and only it): named first, with
the thread-time it cost; a healthy run gets no finding worth a look."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.model import Event, Run, Span, TaskRecord, WorkerSample
from dashdock.history.store import HistoryStore

T0 = 1_764_000_000.0
RUN = "0123456789ab"
A, B = "tcp://127.0.0.1:40001", "tcp://127.0.0.1:40002"
THREADS = [(A, 1), (A, 2), (B, 1), (B, 2)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    opened = HistoryStore.open(tmp_path / "history.db")
    opened.begin_run(Run(RUN, "fedcba987654", "Cluster 1", "tcp://127.0.0.1:1", T0, T0 + 100))
    opened.add_events(RUN, [Event(T0, "worker-joined", w, {"at_start": True, "threads": 2}) for w in (A, B)])
    yield opened
    opened.close()


def task(n: int, lane: tuple[str, int], start: float, seconds: float, **kw: object) -> TaskRecord:
    spans = kw.pop("spans", None) or (Span("compute", start, start + seconds),)
    return TaskRecord(
        f"('work', {n})",
        str(kw.pop("group", "work")),
        lane[0],
        lane[1],
        start,
        start + seconds,
        str(kw.pop("status", "OK")),
        spans,
    )  # type: ignore[arg-type]


def back_to_back(
    seconds: float, count: int, lanes: list[tuple[str, int]] = THREADS, gap: float = 0.001, at: float = T0 + 1
) -> list[TaskRecord]:
    """``count`` tasks per lane, each ``seconds`` long, ``gap`` apart."""
    tasks = []
    for i, lane in enumerate(lanes):
        for n in range(count):
            tasks.append(task(i * count + n, lane, at + n * (seconds + gap), seconds))
    return sorted(tasks, key=lambda t: t.start)


def findings(store: HistoryStore, tasks: list[TaskRecord]) -> list[dict]:
    store.add_tasks(RUN, tasks)
    run = store.run(RUN)
    assert run is not None
    return diagnose_window(store, run, None, None, DiagnosisLimits())["findings"]  # type: ignore[return-value]


def window_findings(store: HistoryStore, tasks: list[TaskRecord]) -> list[dict]:
    """Findings for the window the tasks span (as a cell's or a brushed window is asked)."""
    store.add_tasks(RUN, tasks)
    run = store.run(RUN)
    assert run is not None
    start, end = min(t.start for t in tasks), max(t.stop for t in tasks)
    return diagnose_window(store, run, start, end, DiagnosisLimits())["findings"]  # type: ignore[return-value]


def test_a_healthy_balanced_run_gets_no_finding_worth_a_look(store: HistoryStore) -> None:
    found = window_findings(store, back_to_back(0.5, 20))
    assert [f for f in found if f["share"] >= 0.05] == [], found


def test_a_long_task_at_the_end_is_a_straggler(store: HistoryStore) -> None:
    tasks = back_to_back(0.5, 10)
    tasks.append(task(999, (A, 1), T0 + 1 + 10 * 0.501, 6.0))
    (top, *_) = window_findings(store, tasks)
    assert top["kind"] == "straggler"
    # Three threads idle for the last ~6 s: about 18 thread-seconds.
    assert 15 < top["lost_seconds"] < 19, top
    assert top["evidence"]["tasks"][0]["seconds"] == 6.0
    assert top["title"].startswith(f"{round(100 * top['share'])} % of thread time was idle in the last")
    # The stretch a click on it brushes (its tail, and the busy work before it) says the same.
    run = store.run(RUN)
    assert run is not None
    again = diagnose_window(store, run, top["start"], top["end"], DiagnosisLimits())["findings"]
    assert again[0]["kind"] == "straggler", again  # type: ignore[index]


def test_time_between_computations_has_no_cause_and_each_computation_its_own_end(
    store: HistoryStore,
) -> None:
    # A notebook's two computations 20 s apart, the first held at its end by one long task: over
    # the whole run the 20 s nobody submitted work are no cause ("too few tasks" was 80 thread-s of
    # it), and the first computation's straggler is named although the run ends with the second.
    first = back_to_back(0.5, 10)
    first.append(task(999, (A, 1), T0 + 1 + 10 * 0.501, 6.0))
    resumed = max(t.stop for t in first) + 20
    second = [
        task(2000 + n, (t.worker, t.thread or 0), t.start - T0 - 1 + resumed, 0.5)
        for n, t in enumerate(first[:40])
    ]
    found = findings(store, first + second)
    kinds = {f["kind"]: f for f in found}
    assert "low-parallelism" not in kinds and "imbalance" not in kinds, found
    straggler = kinds["straggler"]
    assert 15 < straggler["lost_seconds"] < 19, straggler  # three threads idle for its last ~6 s
    assert straggler["end"] < resumed
    assert straggler["evidence"]["ends"] == 1
    # It says which task held the end, against its group's usual length.
    assert "The longest: ('work', 999), 6.00 s against its group's median of 500.0 ms." in straggler["detail"]


def test_tiny_tasks_are_small_tasks(store: HistoryStore) -> None:
    tasks = back_to_back(0.002, 1000, gap=0.002)
    (top, *_) = window_findings(store, tasks)
    assert top["kind"] == "small-tasks"
    assert 0.4 < top["share"] < 0.6, top  # half of each thread's time is the gap between tasks
    assert top["evidence"]["tasks"] == 4000


def test_erred_tasks_cost_what_they_ran(store: HistoryStore) -> None:
    tasks = back_to_back(0.5, 10)
    tasks = [
        t
        if i % 2
        else TaskRecord(
            t.key, "boom", t.worker, t.thread, t.start, t.stop, "error", t.spans, exception="ValueError('x')"
        )
        for i, t in enumerate(tasks)
    ]
    (top, *_) = window_findings(store, tasks)
    assert top["kind"] == "errors" and top["evidence"]["erred"] == 20
    assert abs(top["lost_seconds"] - 10.0) < 0.01 and top["evidence"]["exception"] == "ValueError('x')"


def test_transfers_and_spilling_count_their_spans(store: HistoryStore) -> None:
    tasks = []
    for n, lane in enumerate(THREADS * 5):
        start = T0 + 1 + (n // 4) * 1.0
        spans = (
            Span("transfer", start, start + 0.4, B),
            Span("disk-read", start + 0.4, start + 0.7),
            Span("compute", start + 0.7, start + 1.0),
        )
        tasks.append(task(n, lane, start, 1.0, spans=spans))
    store.add_worker_samples(RUN, [WorkerSample(T0 + 2, A, 0, 0, 3 * 2**30, 10.0)])
    found = {f["kind"]: f for f in window_findings(store, tasks)}
    assert abs(found["transfer"]["lost_seconds"] - 8.0) < 0.01  # 20 transfers of 0.4 s
    assert abs(found["spilling"]["lost_seconds"] - 6.0) < 0.01  # 20 disk reads of 0.3 s
    assert (
        "3.0 GiB" in found["spilling"]["title"]
        and found["spilling"]["evidence"]["spilled_bytes"] == 3 * 2**30
    )


def test_bytes_spilled_in_a_short_window_are_read_from_the_next_heartbeat(store: HistoryStore) -> None:
    # A cell of 1.5 s that spilled and let go of its data: the workers' bytes on disk reach the
    # recorder with their next heartbeat, read at its next tick, after the window's end.
    start = T0 + 1
    spans = (Span("disk-write", start, start + 0.6), Span("compute", start + 0.6, start + 1.5))
    tasks = [task(0, (A, 1), start, 1.5, spans=spans)]
    store.add_worker_samples(
        RUN,
        [WorkerSample(start + 1.0, A, 0, 0, 0, 10.0), WorkerSample(start + 3.0, A, 0, 0, 96 * 2**20, 10.0)],
    )
    (spilling,) = (f for f in window_findings(store, tasks) if f["kind"] == "spilling")
    assert spilling["evidence"]["spilled_bytes"] == 96 * 2**20, spilling
    assert "96.0 MiB" in spilling["title"], spilling


def test_one_busy_worker_beside_an_idle_one_is_imbalance(store: HistoryStore) -> None:
    (top, *_) = window_findings(store, back_to_back(0.5, 20, lanes=[(A, 1), (A, 2)]))
    assert top["kind"] == "imbalance"
    assert 0.45 < top["share"] < 0.55, top  # B's two threads of four, the whole time


def test_a_chain_of_tasks_is_low_parallelism(store: HistoryStore) -> None:
    lanes = [THREADS[n % 4] for n in range(20)]
    tasks = [task(n, lanes[n], T0 + 1 + n * 0.5, 0.5) for n in range(20)]  # one at a time
    (top, *_) = window_findings(store, tasks)
    assert top["kind"] == "low-parallelism"
    assert 0.7 < top["share"] < 0.8, top  # three threads of four idle


def test_work_recomputed_after_a_worker_died_is_worker_lost(store: HistoryStore) -> None:
    first = [task(n, (B, 1 + n % 2), T0 + 1 + (n // 2) * 1.0, 1.0) for n in range(10)]
    store.add_events(RUN, [Event(T0 + 7, "worker-left", B, {"reason": "killed", "expected": False})])
    again = [task(n, (A, 1 + n % 2), T0 + 8 + (n // 2) * 1.0, 1.0) for n in range(10)]
    found = {f["kind"]: f for f in window_findings(store, first + again)}
    assert abs(found["worker-lost"]["lost_seconds"] - 10.0) < 0.01
    assert found["worker-lost"]["evidence"]["workers"] == {B: "killed"}


def test_a_worker_paused_for_memory_is_memory_pause_not_imbalance(store: HistoryStore) -> None:
    tasks = back_to_back(0.5, 20, lanes=[(A, 1), (A, 2)])
    # The recorder's samples saw B paused, then running again, 10 s later.
    store.add_events(RUN, [Event(T0 + 1, "worker-paused", B), Event(T0 + 11, "worker-resumed", B)])
    (top, *_) = window_findings(store, tasks)
    assert top["kind"] == "memory-pause" and top["evidence"]["workers"] == [B]
    assert 19 < top["lost_seconds"] < 21, top  # B's two threads for the ~10 s A worked


def test_idle_threads_while_the_scheduler_was_saturated_are_scheduler_bound(store: HistoryStore) -> None:
    # Tiny tasks with 40 ms between them on every thread, while the scheduler's monitor read its
    # process at 100 % of a core (twice a second): the gaps are the scheduler's, not overhead.
    tasks = back_to_back(0.01, 200, gap=0.04)
    store.add_scheduler_samples(RUN, [(T0 + 0.5 + i / 2, 100.0) for i in range(24)])
    (top, *rest) = window_findings(store, tasks)
    assert top["kind"] == "scheduler-bound", top
    # 4 threads idle 80 % of the ~10 s: about 32 thread-seconds.
    assert 28 < top["lost_seconds"] < 36, top
    assert "small-tasks" not in [f["kind"] for f in rest], rest


def test_a_scheduler_loop_that_ticks_rarely_is_scheduler_bound(store: HistoryStore) -> None:
    # The recorder read the loop's observed tick interval once a second: 500 ms, not Dask's 20.
    store.add_scheduler_samples(RUN, [], [(T0 + 1 + i, 0.5) for i in range(11)])
    (top, *_) = window_findings(store, back_to_back(0.01, 200, gap=0.04))
    assert top["kind"] == "scheduler-bound" and top["evidence"]["loop_interval_max"] == 0.5, top
    assert 28 < top["lost_seconds"] < 36, top


def test_a_scheduler_loop_held_between_two_reads_is_scheduler_bound(store: HistoryStore) -> None:
    # The recorder read the loop's figure when it was back to 20 ms; the monitor, which that loop
    # runs twice a second, skipped 3 s of beats (its CPU figure stayed low: no core for it).
    rows = [(T0 + 0.5 + i / 2, 30.0) for i in range(8)] + [(T0 + 7.5 + i / 2, 30.0) for i in range(8)]
    store.add_scheduler_samples(RUN, rows, [(T0 + 1 + i, 0.02) for i in range(11)])
    tasks = back_to_back(0.05, 60) + back_to_back(0.05, 60, at=T0 + 7.6)  # to T0 + 4.06, and again
    (top, *_) = window_findings(store, sorted(tasks, key=lambda t: t.start))
    assert top["kind"] == "scheduler-bound", top
    assert top["evidence"]["loop_interval_max"] == 3.0, top  # 3.5 s apart where 0.5 is usual
    # Every thread idle through the hold: 4 threads x 3.5 s, with nothing else counted as held.
    assert 13 < top["lost_seconds"] < 16, top


def test_a_busy_scheduler_before_the_window_is_not_its_finding(store: HistoryStore) -> None:
    # The monitor's last figure before the work began was a busy one; within it, the scheduler was
    # at ease.
    rows = [(T0 + 0.5, 100.0)] + [(T0 + 1 + i / 2, 30.0) for i in range(22)]
    store.add_scheduler_samples(RUN, rows, [(T0 + 5, 0.021)])
    (top, *_) = window_findings(store, back_to_back(0.01, 200, gap=0.04))
    assert top["kind"] == "small-tasks", top


def test_a_scheduler_at_ease_leaves_the_gaps_to_per_task_overhead(store: HistoryStore) -> None:
    store.add_scheduler_samples(RUN, [(T0 + 0.5 + i / 2, 30.0) for i in range(24)], [(T0 + 5, 0.021)])
    (top, *_) = window_findings(store, back_to_back(0.01, 200, gap=0.04))
    assert top["kind"] == "small-tasks", top


def test_findings_are_ordered_by_cost_and_carry_their_advice(store: HistoryStore) -> None:
    tasks = back_to_back(0.5, 10)
    tasks.append(task(999, (A, 1), T0 + 6, 6.0))
    found = window_findings(store, tasks)
    assert [f["lost_seconds"] for f in found] == sorted((f["lost_seconds"] for f in found), reverse=True)
    for finding in found:
        assert finding["advice"] and finding["docs"].startswith("https://")
        assert set(finding) >= {
            "kind",
            "title",
            "detail",
            "lost_seconds",
            "share",
            "evidence",
            "start",
            "end",
        }


def test_a_worker_seen_joining_after_its_first_tasks_was_there_for_them(tmp_path: Path) -> None:
    # The recorder samples workers once a second: B's first tasks ran before the sample that saw it.
    store = HistoryStore.open(tmp_path / "late.db")
    store.begin_run(Run(RUN, "fedcba987654", "Cluster 1", "tcp://127.0.0.1:1", T0, T0 + 100))
    store.add_events(
        RUN,
        [
            Event(T0, "worker-joined", A, {"at_start": True, "threads": 2}),
            Event(T0 + 3, "worker-joined", B, {"at_start": False, "threads": 2}),
        ],
    )
    try:
        found = window_findings(store, back_to_back(0.5, 20))
        assert [f for f in found if f["share"] >= 0.05] == [], found
    finally:
        store.close()


def test_one_long_task_alone_is_low_parallelism_not_imbalance(tmp_path: Path) -> None:
    # Two workers of one thread, a single 4 s task: its worker is saturated, but nothing else was
    # there to give the other (a notebook cell's one slow task).
    store = HistoryStore.open(tmp_path / "one.db")
    store.begin_run(Run(RUN, "fedcba987654", "Cluster 1", "tcp://127.0.0.1:1", T0, T0 + 100))
    store.add_events(RUN, [Event(T0, "worker-joined", w, {"at_start": True, "threads": 1}) for w in (A, B)])
    try:
        (top, *_) = window_findings(store, [task(1, (A, 1), T0 + 1, 4.0)])
        assert top["kind"] == "low-parallelism", top
        assert abs(top["share"] - 0.5) < 0.01  # one thread of two idle
    finally:
        store.close()


def test_a_single_thread_has_no_straggler(tmp_path: Path) -> None:
    # One worker of one thread: Dask stamps a task's stop a moment after the next one's start, so
    # two tasks seem to overlap once; the gaps after that are not a straggler idling other threads
    # (there are none). Without the rule, 1.5 s of gaps read as a straggler.
    store = HistoryStore.open(tmp_path / "single.db")
    store.begin_run(Run(RUN, "fedcba987654", "Cluster 1", "tcp://127.0.0.1:1", T0, T0 + 100))
    store.add_events(RUN, [Event(T0, "worker-joined", A, {"at_start": True, "threads": 1})])
    tasks = [task(n, (A, 1), T0 + 1 + n * 0.505, 0.5) for n in range(10)]
    tasks.append(task(10, (A, 1), tasks[-1].stop - 0.003, 0.4))  # stamped 3 ms into the one before
    tasks += [task(11 + n, (A, 1), T0 + 7 + n * 0.65, 0.5) for n in range(10)]  # 150 ms gaps
    try:
        found = window_findings(store, tasks)
        assert "straggler" not in [f["kind"] for f in found], found
    finally:
        store.close()
