"""Dask's Fine Performance Metrics as a mirror offers them, checked: the scheduler's cumulative worker
metrics and what its spans extension merges, read once a tick while a page of the plot is open
(``fine_metrics`` in kernel/plot_state.py's answer).

Dask's page merges the spans by the tags its user selects, at every redraw. Here a page's
``merge_by_tags`` answers from the last tick's read and asks for that selection from the next tick
on: a new selection is drawn within a tick, and the scheduler merges each selection once a tick
however many pages show it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable, Mapping
from typing import Any

MAX_METRICS = 5000  # entries of each mapping, as the scheduler's side clips them
MAX_KEY_PARTS = 8
MAX_NAME = 256
MAX_TAGS = 1000  # tags listed in the page's selector
MAX_TAG_SETS = 4  # selections asked for a tick (the scheduler's side merges at most these)
MAX_SELECTED = 32  # tags in one selection
ASKED_FOR = 10.0  # seconds a selection is asked for after a page last merged by it

Metrics = dict[tuple[Hashable, ...], float]


class MergedSpans:
    """What the page reads of Dask's merged ``Span``."""

    def __init__(self, metrics: Metrics) -> None:
        self.cumulative_worker_metrics = metrics


class MirroredSpans:
    """As Dask's ``SpansSchedulerExtension``, for what Fine Performance Metrics reads of it."""

    def __init__(self) -> None:
        self.spans_search_by_tag: dict[str, list[Any]] = {}  # the page lists the tags only
        self.spans: range = range(0)  # how many spans there are: the page asks whether any
        self._all: Metrics = {}
        self._by_tags: dict[tuple[str, ...], Metrics] = {}
        self._asked: dict[tuple[str, ...], float] = {}  # selection -> when a page last merged by it

    def merge_all(self) -> MergedSpans:
        return MergedSpans(self._all)

    def merge_by_tags(self, *tags: str) -> MergedSpans:
        selection = tuple(tags)[:MAX_SELECTED]
        self._asked.pop(selection, None)
        self._asked[selection] = time.monotonic()  # the newest last
        while len(self._asked) > MAX_TAG_SETS:
            del self._asked[next(iter(self._asked))]
        return MergedSpans(self._by_tags.get(selection, {}))

    def asked(self) -> list[list[str]]:
        """The selections pages merged by lately, for the next read."""
        recent = time.monotonic() - ASKED_FOR
        return [list(tags) for tags, when in self._asked.items() if when >= recent]

    def update(self, given: Mapping[str, Any]) -> None:
        tags = given.get("tags")
        listed = tags[:MAX_TAGS] if isinstance(tags, (list, tuple)) else []
        self.spans_search_by_tag = {tag[:MAX_NAME]: [] for tag in listed if isinstance(tag, str)}
        count = given.get("spans")
        self.spans = range(min(count, 2**31) if isinstance(count, int) and count > 0 else 0)
        self._all = read_metrics(given.get("all"))
        merged: dict[tuple[str, ...], Metrics] = {}
        by_tags = given.get("by_tags")
        for item in by_tags[:MAX_TAG_SETS] if isinstance(by_tags, (list, tuple)) else ():
            if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], (list, tuple)):
                selection = tuple(t for t in item[0][:MAX_SELECTED] if isinstance(t, str))
                if selection:
                    merged[selection] = read_metrics(item[1])
        self._by_tags = merged


def update_fine_metrics(mirror: Any, given: object) -> None:
    """``mirror.cumulative_worker_metrics``, and its ``extensions["spans"]`` when the scheduler has
    Dask's spans extension, after the scheduler's answer ``given``. No answer (the plot is not
    watched): none are kept, as no page reads them."""
    spans: MirroredSpans | None = mirror.extensions.get("spans")
    if not isinstance(given, Mapping):
        mirror.cumulative_worker_metrics = {}
        mirror.extensions.pop("spans", None)
        return
    mirror.cumulative_worker_metrics = read_metrics(given.get("cumulative"))
    if "spans" not in given:
        mirror.extensions.pop("spans", None)
        return
    if spans is None:
        spans = mirror.extensions["spans"] = MirroredSpans()
    spans.update(given)  # kept: it knows the selections its pages asked for


def read_metrics(items: object) -> Metrics:
    """``[[key parts], value]`` entries (tuples, as msgpack decodes them) as Dask's metrics mapping:
    tuple keys of text parts (the page asserts that a unit and a function are text), finite
    numbers, at most ``MAX_METRICS``."""
    metrics: Metrics = {}
    for item in items[:MAX_METRICS] if isinstance(items, (list, tuple)) else ():
        if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], (list, tuple))):
            continue
        parts, value = item
        if (
            2 <= len(parts) <= MAX_KEY_PARTS
            and all(isinstance(part, str) for part in parts)
            and isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
        ):
            key = tuple(part[:MAX_NAME] for part in parts)
            if key[0] != "execute" or len(key) == 4:  # the page unpacks an execute key in four
                metrics[key] = metrics.get(key, 0.0) + float(value)
    return metrics
