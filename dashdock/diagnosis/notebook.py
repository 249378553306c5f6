"""``dashdock.diagnose(client)``: why the last computation (or a window) took as long as it did,
read by the kernel from the store its server records into (as ``export_trace`` reads it).

Its repr reads as the History view does: one sentence per finding, with its figure and advice.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass
from typing import Any

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.export import recorded_run
from dashdock.history.store import HistoryStore

# Tasks further apart than this belong to two computations.
IDLE_BETWEEN = 2.0
# How far back the last computation is looked for.
LOOK_BACK = 3600.0


@dataclass(frozen=True)
class Diagnosis:
    """The findings of one window of a recorded run, costliest first."""

    run: str
    start: float
    end: float
    findings: list[dict[str, Any]]

    def __repr__(self) -> str:
        when = f"{_clock(self.start)} to {_clock(self.end)}"
        lines = [f"Why {self.run} took {self.end - self.start:.1f} s ({when}):"]
        found = [f"- {f['title']}. {f['advice']}" for f in self.findings]
        lines += found or ["- no cause cost more than 2 %."]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = (
            f"<strong>Why it took {self.end - self.start:.1f} s</strong> "
            f"<span>({html.escape(self.run)}, {_clock(self.start)} to {_clock(self.end)})</span>"
        )
        if not self.findings:
            return f"<div>{head}<p>No cause cost more than 2 % of the thread time.</p></div>"
        items = "".join(
            f"<li><b>{html.escape(f['title'])}.</b> {html.escape(f['advice'])} "
            f"<a href='{html.escape(f['docs'])}' target='_blank' rel='noopener noreferrer'>Dask docs</a></li>"
            for f in self.findings
        )
        return f"<div>{head}<ol>{items}</ol></div>"


def diagnose(
    client: Any,
    start: float | None = None,
    end: float | None = None,
    store: str | os.PathLike[str] | None = None,
) -> Diagnosis:
    """Why ``client``'s last computation took as long as it did; or the window [start, end] (Unix
    seconds) of the newest run dashdock recorded of its scheduler."""
    history, run = recorded_run(client, store)
    try:
        if start is None and end is None:
            start, end = _last_computation(history, run.id, run.end or time.time())
        answer = diagnose_window(history, run, start, end, DiagnosisLimits())
    finally:
        history.close()
    findings = answer["findings"]
    assert isinstance(findings, list)
    first, last = answer["start"], answer["end"]
    assert isinstance(first, float | int) and isinstance(last, float | int)
    return Diagnosis(run.name, float(first), float(last), findings)


def _last_computation(history: HistoryStore, run_id: str, now: float) -> tuple[float, float]:
    """The last stretch of tasks with no pause of ``IDLE_BETWEEN`` in it."""
    spans = sorted((task.start, task.stop) for task in history.tasks(run_id, now - LOOK_BACK, None))
    if not spans:
        raise LookupError("dashdock has recorded no task of this scheduler in the last hour.")
    start, end = spans[0]
    for task_start, task_stop in spans[1:]:  # merged forwards: the last stretch is what is left
        if task_start > end + IDLE_BETWEEN:
            start = task_start
        end = max(end, task_stop)
    return start, end


def _clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds))
