"""A drawn page sends a plot's columns only when they changed (live/unchanged.py): Dask's
``update`` resends numeric columns of over 10 rows every redraw, equal or not."""

from __future__ import annotations

from typing import Any

import numpy as np
from bokeh.document import Document
from bokeh.document.events import DocumentChangedEvent
from bokeh.models import ColumnDataSource
from distributed.dashboard.utils import update

from dashdock.live.unchanged import send_only_changes

ROWS = 50  # over Dask's 10, so ``update`` makes numpy arrays and stops comparing


def _page() -> tuple[ColumnDataSource, list[DocumentChangedEvent]]:
    source = ColumnDataSource({"x": [0.0], "name": ["a"]})
    doc = Document()
    doc.add_root(source)
    send_only_changes(doc)
    sent: list[DocumentChangedEvent] = []
    doc.on_change(sent.append)  # as a session hears of changes: what it would send
    return source, sent


def _columns(scale: float = 1.0, name: str = "a") -> dict[str, Any]:
    return {"x": [scale * i for i in range(ROWS)], "name": [name] * ROWS}


def test_a_redraw_with_the_same_numbers_sends_nothing() -> None:
    source, sent = _page()
    update(source, _columns())
    update(source, _columns())
    update(source, _columns())
    assert len(sent) == 1


def test_every_real_change_is_sent_and_the_browser_ends_with_the_last() -> None:
    source, sent = _page()
    for scale, name in ((1.0, "a"), (2.0, "a"), (2.0, "b"), (2.0, "b"), (1.0, "a")):
        update(source, _columns(scale, name))
    assert len(sent) == 4
    assert list(source.data["x"]) == _columns()["x"]


def test_an_array_changed_in_place_after_it_was_sent_is_sent_again() -> None:
    source, sent = _page()
    columns = {"x": np.arange(float(ROWS)), "name": ["a"] * ROWS}
    source.data.update(columns)
    columns["x"][3] = -1.0  # the page's own array, changed where it lies
    source.data.update(columns)
    assert len(sent) == 2


def test_after_a_stream_the_same_columns_are_sent_again() -> None:
    source, sent = _page()
    update(source, _columns())
    source.stream({"x": [99.0], "name": ["z"]})
    update(source, _columns())  # equals what was sent before the stream, not what the browser has
    source.data = _columns(3.0)  # a new data dict is sent whole...
    update(source, _columns(3.0))  # ...so this one repeats it
    assert len(sent) == 4
    assert list(source.data["x"]) == _columns(3.0)["x"]
