"""The scheduler's own system monitor (CPU, memory, network, ... of its process, measured by Dask
twice a second) as Dask's Scheduler System and Contention plots read it, kept from the rows the
recorder receives once a tick (``monitor`` in kernel/plot_state.py's answer), checked.

Dask's plots ask a monitor for its rows since a count (``range_query``), for its newest values
(``recent``), and make it measure once when a page opens (``update``): here nothing is measured,
the scheduler measures itself.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping

MAX_QUANTITIES = 32  # Dask measures about a dozen
MAX_NAME = 64
MAX_ROWS = 10_000  # rows kept per quantity (Dask keeps 7,200 by default)


# What Dask's Scheduler System reads of every row: a scheduler that left one out has zeros.
REQUIRED = ("time", "cpu", "memory", "host_net_io.read_bps", "host_net_io.write_bps", "num_fds")
# What Dask's Contention reads besides (``recent()["gil_contention"]``), kept while the scheduler
# says it monitors the GIL, as Dask's own monitor has it only then.
GIL = "gil_contention"
_MAX_VALUE = 2.0**53


class MirroredMonitor:
    """Rows of numbers only, every quantity as many as the others: a row whose time is not a
    number is left out, any other value that is not a finite number reads as zero (Dask's plots
    take min, max and mean of them, and multiply the times)."""

    def __init__(self) -> None:
        self.quantities: dict[str, deque[float]] = {name: deque(maxlen=MAX_ROWS) for name in REQUIRED}
        self.count = 0  # rows the scheduler's monitor has measured, as it last said
        self.monitor_gil_contention = False

    def range_query(self, start: int) -> dict[str, list[float]]:
        """The rows after the ``start``-th, as far back as they are kept; one row of zeros at
        the current time while none is (Dask's own monitor always has one)."""
        kept = len(self.quantities["time"])
        if not kept:
            return {name: [time.time() if name == "time" else 0.0] for name in self.quantities}
        if start >= self.count:
            return {name: [] for name in self.quantities}
        wanted = max(1, min(kept, self.count - start))
        return {name: list(rows)[kept - wanted :] for name, rows in self.quantities.items()}

    def recent(self) -> dict[str, float]:
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
        if self.quantities["time"].maxlen != maxlen:
            self.quantities = {name: deque(rows, maxlen=maxlen) for name, rows in self.quantities.items()}
        if self.monitor_gil_contention and GIL not in self.quantities:
            # Contention reads it while the GIL is monitored: zeros in the rows before it.
            self.quantities[GIL] = deque([0.0] * len(self.quantities["time"]), maxlen=maxlen)
        rows = given.get("rows")
        columns: dict[str, list[object]] = {}
        if isinstance(rows, Mapping):
            # The quantities Dask's plots read first, so that no junk name crowds them out; then
            # the others Dask's page holds too (its Scheduler System sends every column).
            for name in self.quantities:
                values = rows.get(name)
                if isinstance(values, (list, tuple)):
                    columns[name] = list(values[-maxlen:])
            for name, values in list(rows.items())[: MAX_QUANTITIES * 2]:
                if isinstance(name, str) and isinstance(values, (list, tuple)):
                    columns.setdefault(name[:MAX_NAME], list(values[-maxlen:]))
        times = columns.get("time", [])
        rows_kept = [i for i, t in enumerate(times) if _value(t) > 0]
        if not rows_kept:
            self._count(given)
            return
        held = len(self.quantities["time"])
        for name in columns:
            if name not in self.quantities and len(self.quantities) < MAX_QUANTITIES:
                # A quantity begins later than the others: zeros in the rows before it.
                self.quantities[name] = deque([0.0] * held, maxlen=maxlen)
        for name, kept_rows in self.quantities.items():
            values = columns.get(name, [])
            kept_rows.extend(_value(values[i]) if i < len(values) else 0.0 for i in rows_kept)
        self._count(given)

    def _count(self, given: Mapping[str, object]) -> None:
        count = given.get("count")
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            self.count = count


def _value(value: object) -> float:
    """A finite number, as a float, never negative; zero for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(min(max(value, 0.0), _MAX_VALUE))
