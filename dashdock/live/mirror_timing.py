"""The scheduler's ``GroupTiming`` plugin as Dask's Task Group Progress reads it: compute seconds per
task group in one-second bins, and the threads there were, kept from what the recorder reads of it
while a page of that plot is open (``group_timing`` in kernel/plot_state.py's answer), checked.

The scheduler sends only the bins from the last one the mirror has (which may have grown since) on:
the mirror merges them into its copy of the last ``MAX_BINS``, of at most ``MAX_GROUPS`` groups.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, TypeGuard

MAX_BINS = 200  # Dask's plot shows the last 180
MAX_GROUPS = 1000  # as the recorder's other group and prefix bounds
_MAX_COUNT = 2**53


class MirroredGroupTiming:
    """What ``TaskGroupProgress`` reads of ``GroupTiming``: ``dt``, ``time``, ``nthreads``,
    ``compute``; ``length`` is how many bins the scheduler's plugin has (``time`` holds its last)."""

    name = "group-timing"  # as GroupTiming.name: the component finds it in ``scheduler.plugins``

    def __init__(self) -> None:
        now = time.time()
        self.dt = 1.0
        self.time: list[float] = [now, now]  # as the plugin starts
        self.nthreads: list[float] = [0, 0]
        self.compute: dict[str, list[float]] = {}
        self.length = 0  # nothing read yet: the next answer is taken whole

    def add(self, given: object) -> bool:
        """Merge an answer; False (nothing changed) when it is not one."""
        if not isinstance(given, Mapping):
            return False
        length, start, dt = given.get("length"), given.get("start"), given.get("dt")
        if not _count(length) or not _count(start) or start > length:
            return False
        times, nthreads = _numbers(given.get("time")), _numbers(given.get("nthreads"))
        width = length - start
        if (
            times is None
            or nthreads is None
            or len(times) != width
            or len(nthreads) != width
            or width > MAX_BINS + 2
        ):
            return False
        compute: dict[str, list[float]] = {}
        groups = given.get("compute")
        for name, values in list(groups.items())[:MAX_GROUPS] if isinstance(groups, Mapping) else ():
            checked = _numbers(values)
            if isinstance(name, str) and checked is not None and len(checked) == width:
                compute[name] = checked
        first = self.length - len(self.time)  # the plugin's index of the first bin kept here
        keep = start - first if self.length and first <= start <= self.length else 0
        self.time = self.time[:keep] + times
        self.nthreads = self.nthreads[:keep] + nthreads
        # A group new to the mirror was, in the plugin, there from the start with zeros.
        self.compute = {
            name: self.compute.get(name, [0.0] * keep)[:keep] + values for name, values in compute.items()
        }
        if isinstance(dt, (int, float)) and not isinstance(dt, bool) and math.isfinite(dt) and 0 < dt <= 3600:
            self.dt = float(dt)
        self.length = length
        self._trim()
        return True

    def _trim(self) -> None:
        over = len(self.time) - MAX_BINS
        if over > 0:
            self.time, self.nthreads = self.time[over:], self.nthreads[over:]
            self.compute = {name: values[over:] for name, values in self.compute.items()}


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def _numbers(values: Any) -> list[float] | None:
    """A list of finite numbers (anything else in it is 0.0), or None when it is not a list."""
    if not isinstance(values, (list, tuple)) or len(values) > MAX_BINS + 2:
        return None
    return [
        float(min(max(v, 0.0), _MAX_COUNT))
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        else 0.0
        for v in values
    ]
