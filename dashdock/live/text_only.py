"""What a scheduler names is shown as text on every page the recorder draws, never run as markup.

Any client of a scheduler chooses its task keys (and so prefixes and groups), exception texts,
span tags and the names of worker metrics, and a worker chooses its name. Dask's pages put some of
these where the browser reads HTML:

- the Exceptions table formats its cells with ``<code><%= value %></code>`` (underscore's raw
  interpolation), so a key such as ``<img src=x onerror=...>`` runs script in the page;
- a table's column titles become SlickGrid header HTML (the Workers table names a column after
  each worker metric);
- Fine Performance Metrics lists function names and span tags in ``MultiChoice`` widgets, whose
  Choices.js renders option labels as HTML.

A script in a page cannot reach the Lab or the user's session (the page runs in an opaque origin),
but it can navigate its own frame and so send the page's view URL elsewhere. ``as_text`` turns each
of these into text once a page function has built its document; ``TextOnlyFineMetrics`` keeps the
selectors' labels escaped as Dask adds names to them. Tooltips are escaped by Bokeh itself (Dask
uses no ``{safe}`` field), and everything else is drawn on canvas.
"""

from __future__ import annotations

import html
import re
from typing import Any

from bokeh.document import Document
from bokeh.models.widgets import HTMLTemplateFormatter, MultiChoice, TableColumn
from distributed.dashboard.components.scheduler import FinePerformanceMetrics

# `<%= expression %>` inserts the expression's value as HTML; `<%- expression %>` escapes it first.
_RAW_INTERPOLATION = re.compile(r"<%=")


def as_text(doc: Document) -> None:
    """Make every place of ``doc`` that would read a scheduler's string as HTML read it as text."""
    for formatter in doc.select({"type": HTMLTemplateFormatter}):
        assert isinstance(formatter, HTMLTemplateFormatter)
        formatter.template = _RAW_INTERPOLATION.sub("<%-", formatter.template)
    for column in doc.select({"type": TableColumn}):
        assert isinstance(column, TableColumn)
        if isinstance(column.title, str):
            column.title = html.escape(column.title)
    for selector in doc.select({"type": MultiChoice}):
        assert isinstance(selector, MultiChoice)
        labelled = _labelled(selector.options)
        if labelled != selector.options:
            selector.options = labelled


def _value(option: Any) -> str:
    return option[0] if isinstance(option, tuple) else option


def _labelled(options: list[Any]) -> list[str | tuple[str, str]]:
    """Options as (value, label) pairs whose label is the value escaped: the widget's value (what
    Dask filters by) stays the name itself."""
    return [(_value(option), html.escape(_value(option))) for option in options]


class _Names:
    """What Dask's ``_update_selectors`` reads and writes of a selector, with the names as plain
    strings: it compares the names it finds with ``options`` and extends them."""

    def __init__(self, selector: MultiChoice) -> None:
        self.options = [_value(option) for option in selector.options]
        self.value = list(selector.value)
        self.title = selector.title


class TextOnlyFineMetrics(FinePerformanceMetrics):
    """Dask's Fine Performance Metrics, whose selectors label each name with its escaped text."""

    def _update_selectors(self) -> None:
        selectors = {"function_selector": self.function_selector, "span_tag_selector": self.span_tag_selector}
        names = {attribute: _Names(selector) for attribute, selector in selectors.items()}
        for attribute, stand_in in names.items():
            setattr(self, attribute, stand_in)
        try:
            super()._update_selectors()
        finally:
            for attribute, selector in selectors.items():
                setattr(self, attribute, selector)
        for attribute, selector in selectors.items():
            stand_in = names[attribute]
            labelled = _labelled(stand_in.options)
            if labelled != selector.options:
                selector.options = labelled
            if stand_in.title != selector.title:
                selector.title = stand_in.title
