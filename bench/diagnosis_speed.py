"""How long diagnosing a window takes: .venv/bin/python bench/diagnosis_speed.py [tasks ...]

Records synthetic runs (default 10,000, 100,000 and 1,000,000 tasks: 50 groups, 8 workers x 4
threads, 0.1-0.4 s tasks with transfers on every fifth, some erred, one worker leaving) into a
real HistoryStore, then times ``diagnose_window`` over the whole run (what the History view asks
when nothing is brushed), in the worker thread the server would use. Prints the median of three
rounds, the findings of the largest, and the process's peak memory; figures, no assertions.
The target: under 1 s for 100,000 tasks.
"""

from __future__ import annotations

import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import heading, table

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.model import Event, Run, Span, TaskRecord
from dashdock.history.store import HistoryStore

SIZES = [int(a) for a in sys.argv[1:]] or [10_000, 100_000, 1_000_000]
WORKERS, THREADS, GROUPS = 8, 4, 50
T0 = 1_764_000_000.0


def record(store: HistoryStore, run_id: str, tasks: int) -> Run:
    rng = random.Random(tasks)
    lanes = [(f"tcp://10.0.0.{w}:4000", t) for w in range(WORKERS) for t in range(THREADS)]
    clock = dict.fromkeys(lanes, T0)
    run = Run(run_id, "fedcba987654", f"{tasks} tasks", "tcp://10.0.0.1:8786", T0)
    store.begin_run(run)
    store.add_events(
        run_id,
        [Event(T0, "worker-joined", w, {"at_start": True, "threads": THREADS}) for w, _ in lanes[::THREADS]],
    )
    batch: list[TaskRecord] = []
    for n in range(tasks):
        lane = lanes[n % len(lanes)]
        start = clock[lane] + rng.uniform(0.0005, 0.003)
        seconds = rng.uniform(0.1, 0.4)
        spans: tuple[Span, ...] = (Span("compute", start, start + seconds),)
        if n % 5 == 0:
            spans = (
                Span("transfer", start, start + 0.02, lanes[(n + 7) % len(lanes)][0]),
                Span("compute", start + 0.02, start + seconds),
            )
        status = "error" if n % 997 == 0 else "OK"
        batch.append(
            TaskRecord(
                f"('g{n % GROUPS}', {n})",
                f"g{n % GROUPS}",
                lane[0],
                lane[1],
                start,
                start + seconds,
                status,
                spans,
            )
        )
        clock[lane] = start + seconds
        if len(batch) == 1000:
            store.add_tasks(run_id, sorted(batch, key=lambda t: t.start))
            batch = []
    if batch:
        store.add_tasks(run_id, sorted(batch, key=lambda t: t.start))
    end = max(clock.values())
    store.add_events(
        run_id, [Event(end - 5, "worker-left", lanes[0][0], {"reason": "bench", "expected": False})]
    )
    store.end_run(run_id, end)
    found = store.run(run_id)
    assert found is not None
    return found


def main() -> None:
    heading("Diagnosis of a whole run (median of 3, in one thread)")
    rows = [["tasks", "recorded s", "diagnose s", "findings", "top finding"]]
    with tempfile.TemporaryDirectory() as tmp:
        store = HistoryStore.open(Path(tmp) / "history.db")
        last: dict[str, object] = {}
        for i, size in enumerate(SIZES):
            run = record(store, f"{i:012x}", size)
            times = []
            for _ in range(3):
                began = time.perf_counter()
                last = diagnose_window(store, run, None, None, DiagnosisLimits())
                times.append(time.perf_counter() - began)
            findings = last["findings"]
            assert isinstance(findings, list)
            top = f"{findings[0]['kind']} ({findings[0]['share']:.0%})" if findings else "-"
            rows.append(
                [
                    f"{size:,}",
                    f"{(run.end or 0) - run.start:,.0f}",
                    f"{statistics.median(times):.2f}",
                    str(len(findings)),
                    top,
                ]
            )
        store.close()
    table(rows)
    heading(f"Findings of the {SIZES[-1]:,}-task run")
    findings = last["findings"]
    assert isinstance(findings, list)
    for finding in findings:
        print(f"  {finding['kind']:<16} {finding['lost_seconds']:>10,.1f} s  {finding['title']}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\n  peak RSS of this process: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
