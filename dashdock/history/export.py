"""``dashdock.export_trace``: a notebook's own run, written as a Chrome trace by the kernel itself.

The kernel reads the store the server records into (its path comes in the environment the server
gives kernels), so no request to the server and no token are needed; SQLite lets it read while the
recorder writes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from dashdock.history.model import Run
from dashdock.history.store import HistoryStore
from dashdock.history.trace import chrome_trace
from dashdock.kernel.protocol import HISTORY_FILE_VARIABLE


def export_trace(
    client: Any,
    path: str | os.PathLike[str],
    start: float | None = None,
    end: float | None = None,
    store: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the Chrome trace of what dashdock recorded of ``client``'s scheduler to ``path``.

    ``client`` is a ``distributed.Client`` or a scheduler address; ``start`` and ``end`` (Unix
    seconds) choose a window, else the whole run. The newest run of that scheduler is used. Open
    the file in https://ui.perfetto.dev or chrome://tracing. Returns the path written.
    """
    history, run = recorded_run(client, store)
    target = Path(path)
    try:
        with target.open("wb") as out:
            for chunk in chrome_trace(history, run.id, start, end):
                out.write(chunk)
    finally:
        history.close()
    return target


def recorded_run(client: Any, store: str | os.PathLike[str] | None = None) -> tuple[HistoryStore, Run]:
    """The store this kernel's server records into (or ``store``) and its newest run of
    ``client``'s scheduler (a ``distributed.Client`` or an address); the caller closes the store."""
    address = client if isinstance(client, str) else client.scheduler.address
    location = store or os.environ.get(HISTORY_FILE_VARIABLE)
    if not location:
        raise LookupError(
            "This kernel was not started by a Jupyter server with dashdock's history "
            "(c.DashdockApp.history); pass store= the path of a history.db."
        )
    if not Path(location).exists():
        raise LookupError(f"There is no history store at {location}.")
    history = HistoryStore.open(Path(location))
    runs = [run for run in history.runs() if run.scheduler == address]
    if not runs:
        history.close()
        raise LookupError(
            f"dashdock has not recorded the scheduler {address}: it records managed clusters and "
            "notebooks' clients on tcp:// schedulers while the server runs."
        )
    return history, max(runs, key=lambda candidate: candidate.start)
