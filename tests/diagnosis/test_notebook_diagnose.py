"""``dashdock.diagnose(client)`` in a notebook: the last computation's findings, read as the History
view reads them, from the store the kernel's server records into."""

from __future__ import annotations

from pathlib import Path

import pytest

import dashdock
from dashdock.history.model import Event, Run, Span, TaskRecord
from dashdock.history.store import HistoryStore

T0 = 1_764_000_000.0
A = "tcp://127.0.0.1:40001"
SCHEDULER = "tcp://127.0.0.1:1"


def test_the_last_computation_is_diagnosed_and_reads_as_sentences(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    store = HistoryStore.open(path)
    store.begin_run(Run("0123456789ab", "fedcba987654", "analysis.ipynb", SCHEDULER, T0, T0 + 100))
    store.add_events("0123456789ab", [Event(T0, "worker-joined", A, {"at_start": True, "threads": 2})])
    # A first computation that erred, then, 10 s later, a chain of tasks one at a time on 2 threads.
    failed = [
        TaskRecord(
            f"boom-{n}",
            "boom",
            A,
            1 + n % 2,
            T0 + 1 + n,
            T0 + 2 + n,
            "error",
            (Span("compute", T0 + 1 + n, T0 + 2 + n),),
        )
        for n in range(4)
    ]
    chain = [
        TaskRecord(
            f"step-{n}",
            "step",
            A,
            1,
            T0 + 15 + n,
            T0 + 16 + n,
            "OK",
            (Span("compute", T0 + 15 + n, T0 + 16 + n),),
        )
        for n in range(10)
    ]
    store.add_tasks("0123456789ab", failed + chain)
    store.close()

    found = dashdock.diagnose(SCHEDULER, store=path)
    assert (found.start, found.end) == (T0 + 15, T0 + 25)  # the last computation only
    kinds = [f["kind"] for f in found.findings]
    assert kinds[0] == "low-parallelism" and "errors" not in kinds
    assert "50 % of thread time was idle: fewer tasks ran than the 2 threads could" in repr(found)
    page = found._repr_html_()
    assert "Why it took 10.0 s" in page and "analysis.ipynb" in page and "https://docs.dask.org" in page
    # A window chosen by hand: the failures.
    earlier = dashdock.diagnose(SCHEDULER, start=T0, end=T0 + 6, store=path)
    assert earlier.findings[0]["kind"] == "errors"


def test_an_unrecorded_scheduler_says_so(tmp_path: Path) -> None:
    HistoryStore.open(tmp_path / "history.db").close()
    with pytest.raises(LookupError, match="has not recorded the scheduler"):
        dashdock.diagnose("tcp://127.0.0.1:9", store=tmp_path / "history.db")
