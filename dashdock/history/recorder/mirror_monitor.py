"""The scheduler's own system monitor (CPU, memory, network, ... of its process, measured by Dask
twice a second) as Dask's Scheduler System and Contention plots read it, kept from the rows the
recorder receives once a tick (``monitor`` in kernel/plot_state.py's answer), checked.

Dask's plots ask a monitor for its rows since a count (``range_query``), for its newest values
(``recent``), and make it measure once when a page opens (``update``): here nothing is measured,
the scheduler measures itself.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping

MAX_QUANTITIES = 32  # Dask measures about a dozen
MAX_NAME = 64
MAX_ROWS = 10_000  # rows kept per quantity (Dask keeps 7,200 by default)


class MirroredMonitor:
    def __init__(self) -> None:
        self.quantities: dict[str, deque[float | None]] = {}
        self.count = 0  # rows the scheduler's monitor has measured, as it last said
        self.monitor_gil_contention = False

    def range_query(self, start: int) -> dict[str, list[float | None]]:
        """The rows after the ``start``-th, as far back as they are kept (None where a quantity
        began later than the others)."""
        if start >= self.count:
            return {name: [] for name in self.quantities}
        # As Dask counts them: by its CPU rows, at least the newest one.
        kept = len(self.quantities.get("cpu", ()))
        wanted = max(1, min(kept, self.count - start))
        return {name: _last(rows, wanted) for name, rows in self.quantities.items()}

    def recent(self) -> dict[str, float | None]:
        return {name: rows[-1] for name, rows in self.quantities.items() if rows}

    def update(self) -> None:
        """Dask's pages make a monitor measure when they open; the scheduler measures its own."""

    def add(self, given: object) -> None:
        """The scheduler's answer: its rows since ``count`` when the recorder last asked."""
        if not isinstance(given, Mapping):
            return
        kept = given.get("kept")
        maxlen = MAX_ROWS
        if isinstance(kept, int) and not isinstance(kept, bool) and kept > 0:
            maxlen = min(kept, MAX_ROWS)
        self.monitor_gil_contention = given.get("gil") is True
        rows = given.get("rows")
        for name, values in list(rows.items())[:MAX_QUANTITIES] if isinstance(rows, Mapping) else ():
            if not isinstance(name, str) or not isinstance(values, (list, tuple)):
                continue
            kept_rows = self.quantities.get(name[:MAX_NAME])
            if kept_rows is None and len(self.quantities) >= MAX_QUANTITIES:
                continue  # no more names than Dask measures, over all answers
            if kept_rows is None or kept_rows.maxlen != maxlen:
                kept_rows = self.quantities[name[:MAX_NAME]] = deque(kept_rows or (), maxlen=maxlen)
            kept_rows.extend(_value(v) for v in values[-maxlen:])
        count = given.get("count")
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            self.count = count


def _last(rows: deque[float | None], wanted: int) -> list[float | None]:
    missing = wanted - len(rows)
    return [None] * missing + list(rows)[len(rows) - min(wanted, len(rows)) :]


def _value(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value
