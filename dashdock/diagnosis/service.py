"""A window's diagnosis from the history store (run in a worker thread: it reads and counts)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from dashdock.diagnosis.findings import Finding, diagnose
from dashdock.diagnosis.window import read_window
from dashdock.history.model import Run
from dashdock.history.report_metrics import metrics_of_window
from dashdock.history.store import HistoryStore

# A worker's heartbeat (Dask's: about every second on a small cluster) and a recorder tick (1 s).
SPILL_REPORT_LAG = 2.5


@dataclass(frozen=True)
class DiagnosisLimits:
    max_tasks: int = 1_000_000  # tasks read for one window; more are left out, and the answer says so
    max_samples: int = 200_000  # worker samples read (spilled bytes)


def diagnose_window(
    store: HistoryStore, run: Run, start: float | None, end: float | None, limits: DiagnosisLimits
) -> dict[str, object]:
    """``{"findings": [...], "tasks": n, "truncated": bool}`` for [start, end] of ``run``."""
    run_span = (run.start, run.end or time.time())
    window = read_window(store, run.id, start, end, run_span, limits.max_tasks)
    spilled: dict[str, int] = {}
    # A worker reports its bytes on disk with its heartbeat, which the recorder reads at its next
    # tick: what a short window spilled can first show that long after it.
    reported_by = window.last + SPILL_REPORT_LAG
    for sample in store.worker_samples(run.id, window.first, reported_by, limit=limits.max_samples):
        spilled[sample.worker] = max(spilled.get(sample.worker, 0), sample.spilled)
    findings: list[Finding] = diagnose(window, metrics_of_window(store, run.id, start, end), spilled)
    return {
        "findings": [finding.to_json() for finding in findings],
        "tasks": len(window.tasks),
        "truncated": window.truncated,
        "threads": window.thread_count,
        # The last recorded task's end: a caller waiting for work just done compares it to its end.
        "recorded_until": float(window.tasks.stop.max()) if len(window.tasks) else None,
        "start": window.first,
        "end": window.last,
    }
