"""A Dask page function that raises in the recorder (on a state it does not expect) leaves its
pane a message and the server log its traceback, not a bare "500: Internal Server Error" page
and a redraw failing every tick."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from bokeh.document import Document
from bokeh.models.widgets import Div

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.plot_server import FAILED_PAGE, PlotServer


def _broken_page(scheduler: Any, extra: dict[str, Any], doc: Document) -> None:
    """Draws half of its page and its redraw, then fails as Dask's Task Groups layout did."""
    doc.add_root(Div(text="half drawn"))
    doc.add_periodic_callback(lambda: None, 500)
    raise KeyError("slow_increment")


def test_a_page_that_fails_to_draw_says_so_and_logs_why(caplog: pytest.LogCaptureFixture) -> None:
    mirror = SchedulerMirror()
    page = PlotServer(lambda run_id: mirror)._page("/individual-groups", _broken_page)
    doc = Document()
    with caplog.at_level(logging.ERROR, logger="dashdock.recorder"):
        page(doc)
    assert [root.text for root in doc.roots if isinstance(root, Div)] == [FAILED_PAGE]
    assert len(doc.roots) == 1
    assert not doc.session_callbacks  # nothing left redrawing what failed
    assert "/individual-groups" in caplog.text and "KeyError: 'slow_increment'" in caplog.text
