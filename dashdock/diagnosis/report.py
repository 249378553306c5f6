"""The report's first section: the window's findings, each a sentence with its figure and advice."""

from __future__ import annotations

import html

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.model import Run
from dashdock.history.store import HistoryStore


def findings_section(store: HistoryStore, run: Run, start: float | None, end: float | None) -> str:
    """HTML (everything a scheduler named is escaped): "Why it took this long" and its findings."""
    answer = diagnose_window(store, run, start, end, DiagnosisLimits())
    findings = answer["findings"]
    assert isinstance(findings, list)
    title = "<h2>Why it took this long</h2>"
    if not findings:
        return title + "<p>No cause cost more than 2 % of the window's thread time.</p>"
    items = "".join(
        f"<li><b>{_e(f['title'])}.</b> {_e(f['detail'])} {_e(f['advice'])} "
        f"<a href='{_e(f['docs'])}' rel='noopener noreferrer' target='_blank'>Dask's documentation</a></li>"
        for f in findings
    )
    note = "<p class='note'>The window holds more tasks than were read.</p>" if answer["truncated"] else ""
    return f"{title}<ol>{items}</ol>{note}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
