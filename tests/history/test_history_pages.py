"""The History view's pages: a recorded run drawn with Bokeh, served sandboxed, BokehJS from this server."""

from __future__ import annotations

import hashlib
import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _support import Jupyter

from dashdock.errors import NotFound
from dashdock.history.handlers import REPORT_POLICY
from dashdock.history.model import Alert, Gap, Run, Span, TaskRecord, WorkerSample
from dashdock.history.pages import PAGES, PageAssets, PageLimits, history_page
from dashdock.history.store import HistoryStore
from dashdock.history.views import bokeh_static_dir, bokeh_version

T0 = 1_764_000_000.0
RUN = "0123456789ab"
SOURCE = "fedcba987654"
WORKERS = ("tcp://127.0.0.1:40001", "tcp://127.0.0.1:40002")
EVIL = "<script>alert(1)</script>"
ASSETS = PageAssets("/base/dashdock/bokeh/", "9.9.9", "/base/dashdock/bokeh/page.js?v=abc")


def burst(first: int, count: int, at: float, group: str = "inc") -> list[TaskRecord]:
    """``count`` tasks from ``at`` on, 10 ms apart, on two workers of two threads; every third fetched
    its input from the other worker first."""
    tasks = []
    for n in range(first, first + count):
        start = at + (n - first) * 0.01
        spans: tuple[Span, ...] = (Span("compute", start, start + 0.02),)
        if n % 3 == 0:
            spans = (Span("transfer", start, start + 0.005), Span("compute", start + 0.005, start + 0.02))
        tasks.append(
            TaskRecord(
                key=f"('{group}', {n})",
                group=group,
                worker=WORKERS[n % 2],
                thread=100 + (n // 2) % 2,
                start=start,
                stop=start + 0.02,
                status="OK",
                spans=spans,
            )
        )
    return tasks


def erred(key: str, at: float, group: str = "boom") -> TaskRecord:
    return TaskRecord(key, group, WORKERS[0], 100, at, at + 0.01, "error", (Span("compute", at, at + 0.01),))


def record(store: HistoryStore, t0: float = T0) -> None:
    """A 40 s run: a burst of 100 ``inc`` tasks at 0 s, one of 50 ``dec`` at 20 s, an erred task with a
    hostile key at 21 s, a gap at 10 s, and both workers' memory every second."""
    store.begin_run(
        Run(id=RUN, source=SOURCE, name="Cluster <1>", scheduler="tcp://127.0.0.1:1", start=t0, end=t0 + 40)
    )
    store.add_tasks(RUN, burst(0, 100, t0 + 0.5) + burst(0, 50, t0 + 20, group="dec"))
    store.add_tasks(RUN, [erred(EVIL, t0 + 21)])
    store.add_gap(RUN, Gap(t0 + 10, t0 + 11, missed=42))
    store.add_alerts(
        RUN, [Alert("a1a1a1a1a1a1", SOURCE, "task-erred", "boom", t0 + 21, t0 + 21, f"boom: {EVIL}", {})]
    )
    store.add_worker_samples(
        RUN,
        [
            WorkerSample(t0 + s, worker, (1 + i) * 100 * 2**20, 50 * 2**20, 2**20 if s >= 30 else 0, 5.0)
            for s in range(40)
            for i, worker in enumerate(WORKERS)
        ],
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    opened = HistoryStore.open(tmp_path / "history.db")
    record(opened)
    yield opened
    opened.close()


def document_of(page: str) -> Any:
    """The Bokeh document embedded in a page, as BokehJS reads it."""
    (text,) = re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', page, re.DOTALL)
    return json.loads(html.unescape(text))


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from strings_in(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from strings_in(inner)


def walk(value: Any) -> Iterator[Any]:
    """Every value in a document's JSON, depth first."""
    yield value
    if isinstance(value, dict):
        for inner in value.values():
            yield from walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from walk(inner)


def column(document: Any, name: str) -> list[Any]:
    """Every value of the data column ``name`` in the document's data sources."""
    found: list[Any] = []

    def visit(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "map" and isinstance(value.get("entries"), list):
                for key, inner in value["entries"]:
                    if key == name and isinstance(inner, list):
                        found.extend(inner)
            for inner in value.values():
                visit(inner)
        elif isinstance(value, list):
            for inner in value:
                visit(inner)

    visit(document)
    return found


# -- the pages, as their builders make them --------------------------------------------------------


@pytest.mark.parametrize("name", PAGES)
def test_each_page_loads_dashdocks_script_first_and_bokehjs_from_this_server(
    store: HistoryStore, name: str
) -> None:
    page = history_page(store, RUN, name, None, None, ASSETS)
    scripts = re.findall(r"<script(?: src=\"([^\"]*)\")?[^>]*>", page)
    assert scripts[0] == "/base/dashdock/bokeh/page.js?v=abc"
    assert "/base/dashdock/bokeh/static/js/bokeh.min.js?v=9.9.9" in scripts
    assert all(not src or src.startswith("/base/dashdock/bokeh/") for src in scripts)
    assert "cdn.bokeh.org" not in page
    assert "<title>Cluster &lt;1&gt;:" in page  # the run's name is escaped
    assert document_of(page)  # the embedded document is valid JSON
    assert '"sizing_mode":"stretch_both"' in page


def test_a_hostile_task_key_is_data_in_the_page_never_markup(store: HistoryStore) -> None:
    page = history_page(store, RUN, "task-stream", None, None, ASSETS)
    assert EVIL not in page
    assert EVIL in column(document_of(page), "key")


def test_the_task_stream_of_a_window_draws_exactly_the_tasks_in_it(store: HistoryStore) -> None:
    page = history_page(store, RUN, "task-stream", T0 + 19, T0 + 22, ASSETS)
    keys = set(column(document_of(page), "key"))
    assert keys == {f"('dec', {n})" for n in range(50)} | {EVIL}
    colours = column(document_of(page), "color")
    assert "red" in colours  # transfers, as Dask draws them
    assert "50 tasks" not in page and "51 tasks on 4 worker threads" in page
    # Rows are named by worker and thread number, not Dask's long thread ids.
    labels = next(v for v in walk(document_of(page)) if isinstance(v, dict) and "major_label_overrides" in v)
    named = sorted(text for _, text in labels["major_label_overrides"]["entries"])
    assert named == sorted(f"{worker} thread {n}" for worker in WORKERS for n in (1, 2))


def test_a_task_stream_with_more_than_it_draws_says_so(store: HistoryStore) -> None:
    page = history_page(store, RUN, "task-stream", None, None, ASSETS, PageLimits(rects=30))
    assert 0 < len(column(document_of(page), "key")) <= 30
    assert "this window holds more tasks" in page


def test_progress_counts_the_tasks_each_group_finished_in_the_window(store: HistoryStore) -> None:
    page = history_page(store, RUN, "progress", T0 + 19, T0 + 40, ASSETS)
    document = document_of(page)
    finished = zip(column(document, "memory"), column(document, "erred"), strict=True)
    counts = dict(zip(column(document, "group"), finished, strict=True))
    assert counts == {"dec": (50, 0), "boom": (0, 1)}
    assert "51 tasks finished in this window, 1 erred" in page


def test_memory_shows_each_worker_and_the_total(store: HistoryStore) -> None:
    page = history_page(store, RUN, "memory", T0 + 25, T0 + 35, ASSETS)
    document = document_of(page)
    assert set(column(document, "worker")) == set(WORKERS)
    totals = column(document, "managed")
    assert 300 * 2**20 in totals  # both workers' managed memory summed
    assert "2 workers" in page


def _figures(value: Any) -> Iterator[dict[str, Any]]:
    """The attributes of every figure in an embedded document."""
    if isinstance(value, dict):
        if value.get("name") == "Figure" and isinstance(value.get("attributes"), dict):
            yield value["attributes"]
        for inner in value.values():
            yield from _figures(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _figures(inner)


def test_each_workers_memory_is_drawn_from_zero(store: HistoryStore) -> None:
    """A worker whose memory barely moves is a flat line, not an axis of ticks that all read alike."""
    document = document_of(history_page(store, RUN, "memory", T0 + 25, T0 + 35, ASSETS))
    (by_worker,) = [
        f for f in _figures(document) if f["title"]["attributes"]["text"] == "Process memory by worker"
    ]
    assert by_worker["y_range"].get("attributes", {}).get("start") == 0, by_worker["y_range"]


def test_a_window_reaching_back_before_its_run_shows_the_sources_earlier_run(store: HistoryStore) -> None:
    # The scheduler was replaced at 45 s (a restart): a new run of the same source, and one of another.
    later = "abcabcabcabc"
    store.begin_run(
        Run(id=later, source=SOURCE, name="Cluster <1>", scheduler="tcp://127.0.0.1:1", start=T0 + 45)
    )
    store.add_tasks(later, burst(0, 30, T0 + 46, group="after"))
    store.add_worker_samples(later, [WorkerSample(T0 + 46, WORKERS[0], 2**20, 0, 0, 1.0)])
    other = "0f0f0f0f0f0f"
    store.begin_run(
        Run(id=other, source="000000000000", name="other", scheduler="tcp://10.0.0.1:1", start=T0)
    )
    store.add_tasks(other, burst(0, 5, T0 + 30, group="elsewhere"))

    # A pane rewound over both asks the newest run: both runs of its source are drawn, not the other.
    page = history_page(store, later, "task-stream", T0 + 15, T0 + 60, ASSETS)
    groups = set(column(document_of(page), "group"))
    assert groups == {"dec", "boom", "after"}
    assert "This window spans 2 runs of this source" in page
    counts = dict(
        zip(
            column(document_of(history_page(store, later, "progress", T0 + 15, T0 + 60, ASSETS)), "group"),
            column(document_of(history_page(store, later, "progress", T0 + 15, T0 + 60, ASSETS)), "memory"),
            strict=True,
        )
    )
    assert counts == {"dec": 50, "after": 30, "boom": 0}
    memory = history_page(store, later, "memory", T0 + 15, T0 + 60, ASSETS)
    assert (
        min(column(document_of(memory), "time")) < (T0 + 45) * 1000 < max(column(document_of(memory), "time"))
    )
    # A window inside the new run is that run's alone.
    inside = history_page(store, later, "task-stream", T0 + 45, T0 + 60, ASSETS)
    assert set(column(document_of(inside), "group")) == {"after"}
    assert "runs of this source" not in inside


def test_the_overview_shows_the_whole_run_its_gaps_and_posts_the_chosen_window(store: HistoryStore) -> None:
    page = history_page(store, RUN, "overview", None, None, ASSETS)
    document = document_of(page)
    assert sum(column(document, "tasks")) == 151
    assert "missed 42 tasks" in set(strings_in(document))
    code = "\n".join(s for s in strings_in(document) if "postMessage" in s)
    assert "dashdock:history-window" in code and "setTimeout" in code
    assert "DocumentReady" in page or "document_ready" in page  # the first window, posted on load


def test_the_overview_marks_when_tasks_erred_with_the_alerts_title_as_data(store: HistoryStore) -> None:
    page = history_page(store, RUN, "overview", None, None, ASSETS)
    document = document_of(page)
    assert column(document, "title") == [f"boom: {EVIL}"]
    spans = [v for v in walk(document) if isinstance(v, dict) and v.get("name") == "Span"]
    assert [span["attributes"]["location"] for span in spans] == [(T0 + 21) * 1000]
    assert EVIL not in page


def test_the_overview_of_a_run_with_more_samples_than_it_reads_still_spans_the_run(
    store: HistoryStore,
) -> None:
    page = history_page(store, RUN, "overview", None, None, ASSETS, PageLimits(samples=40, memory_points=8))
    document = document_of(page)
    times = [t for t in column(document, "time") if isinstance(t, float | int)]
    assert min(times) < (T0 + 6) * 1000 and max(times) > (T0 + 34) * 1000
    assert 300 * 2**20 in column(document, "managed")  # both workers, summed


def test_the_overview_says_when_a_live_runs_count_was_taken(store: HistoryStore) -> None:
    """A live run keeps counting after its page is drawn, and a window's findings, asked later,
    count more: the note's figure says which moment it is of."""
    ended = strings_in(document_of(history_page(store, RUN, "overview", None, None, ASSETS)))
    assert any(text.startswith("151 tasks recorded. ") for text in ended)
    live = "5a5a5a5a5a5a"
    store.begin_run(Run(id=live, source="000000000000", name="live", scheduler="tcp://10.0.0.1:1", start=T0))
    store.add_tasks(live, burst(0, 7, T0 + 3, group="now"))
    drawn = strings_in(document_of(history_page(store, live, "overview", None, None, ASSETS)))
    note = "7 tasks recorded when this page was drawn (still recording)."
    assert any(text.startswith(note) for text in drawn)


def test_the_overview_of_a_window_draws_the_brush_there(store: HistoryStore) -> None:
    page = history_page(store, RUN, "overview", T0 + 5, T0 + 10, ASSETS)
    assert f'"start":{(T0 + 5) * 1000}' in page and f'"end":{(T0 + 10) * 1000}' in page


def test_an_unknown_page_or_run_is_not_found(store: HistoryStore) -> None:
    with pytest.raises(NotFound):
        history_page(store, RUN, "nope", None, None, ASSETS)
    with pytest.raises(NotFound):
        history_page(store, "aaaaaaaaaaaa", "overview", None, None, ASSETS)


# -- over HTTP -------------------------------------------------------------------------------------


@pytest.fixture
def recorded(sources_file: Path) -> Iterator[float]:
    """The run, in the store the server under test reads; recorded a minute ago (retention keeps
    it); its start is the value."""
    t0 = time.time() - 60
    opened = HistoryStore.open(sources_file.with_name("history.db"))
    record(opened, t0)
    yield t0
    opened.close()


async def test_a_page_is_served_sandboxed_with_the_runs_data(jupyter: Jupyter, recorded: float) -> None:
    window = f"start={recorded + 19}&end={recorded + 22}"
    response = await jupyter.fetch(f"dashdock/api/history/{RUN}/view/task-stream?{window}")
    assert response.code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert response.headers["Content-Security-Policy"] == REPORT_POLICY
    page = response.body.decode()
    assert EVIL not in page and EVIL in column(document_of(page), "key")
    assert jupyter.path("dashdock/bokeh/static/js/bokeh.min.js") in page


async def test_a_framed_page_waits_for_bokehjs_from_the_lab_and_names_it_by_hash(
    jupyter: Jupyter, recorded: float
) -> None:
    """A History view's frame is an opaque origin: its scripts wait for BokehJS from the Lab."""
    raw = (bokeh_static_dir() / "js" / "bokeh.min.js").read_bytes()
    by_hash = f"static/js/bokeh.min.js?v={hashlib.sha512(raw).hexdigest()}"
    framed = await jupyter.fetch(
        f"dashdock/api/history/{RUN}/view/task-stream", headers={"Sec-Fetch-Dest": "iframe"}
    )
    assert framed.code == 200
    assert f'<script type="dashdock/deferred" src="{jupyter.path("dashdock/bokeh/" + by_hash)}"' in (
        framed.body.decode()
    )
    tab = await jupyter.fetch(f"dashdock/api/history/{RUN}/view/task-stream")
    assert b"dashdock/deferred" not in tab.body and by_hash.encode() in tab.body
    # The file named by its hash is cached for good, like the one named by bokeh's version.
    script = await jupyter.fetch(f"dashdock/bokeh/{by_hash}", auth=False)
    assert script.code == 200 and "immutable" in script.headers["Cache-Control"]


async def test_a_page_needs_the_users_login(jupyter: Jupyter, recorded: float) -> None:
    response = await jupyter.fetch(f"dashdock/api/history/{RUN}/view/overview", auth=False)
    assert response.code in (302, 403)
    assert b"bokeh" not in response.body


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("aaaaaaaaaaaa/view/overview", 404),
        (f"{RUN}/view/nope", 404),
        (f"{RUN}/view/overview?start=soon", 400),
        (f"{RUN}/view/overview?start={T0 + 5}&end={T0}", 400),  # end before start
        (f"{RUN}/view/memory?end=nan", 400),
    ],
)
async def test_an_unknown_run_or_page_or_a_bad_window_is_a_json_error(
    jupyter: Jupyter, recorded: float, path: str, status: int
) -> None:
    code, body = await jupyter.api("GET", f"history/{path}")
    assert code == status
    assert isinstance(body["message"], str) and body["message"]


async def test_bokehjs_is_served_to_pages_without_a_cookie_and_cached_for_its_version(
    jupyter: Jupyter,
) -> None:
    response = await jupyter.fetch(f"dashdock/bokeh/static/js/bokeh.min.js?v={bokeh_version()}", auth=False)
    assert response.code == 200
    assert response.body == (bokeh_static_dir() / "js" / "bokeh.min.js").read_bytes()
    assert "javascript" in response.headers["Content-Type"]
    assert "immutable" in response.headers["Cache-Control"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_the_page_script_is_served_to_pages_without_a_cookie(jupyter: Jupyter, recorded: float) -> None:
    from dashdock.proxy.page.script import page_script

    page = (await jupyter.fetch(f"dashdock/api/history/{RUN}/view/overview")).body.decode()
    match = re.search(r'<script src="([^"]*/page\.js\?v=[0-9a-f]+)"></script>', page)
    assert match is not None
    response = await jupyter.fetch(html.unescape(match[1]), auth=False, absolute=True)
    assert response.code == 200
    assert response.body == page_script()
    assert "javascript" in response.headers["Content-Type"]
    assert "immutable" in response.headers["Cache-Control"]


@pytest.mark.parametrize(
    "path",
    [
        "../__init__.py",
        "js/../../__init__.py",
        "%2e%2e/%2e%2e/__init__.py",
        "js/..%2f..%2f..%2f__init__.py",
        "/etc/passwd",
        "js/",
        "js/bokeh.min.js.map",
        "lib",
    ],
)
async def test_the_static_route_serves_nothing_outside_bokehs_scripts(jupyter: Jupyter, path: str) -> None:
    response = await jupyter.fetch(f"dashdock/bokeh/static/{path}", auth=False)
    assert response.code in (403, 404)
    assert b"import" not in response.body and b"root:" not in response.body


async def test_the_static_route_serves_no_file_but_scripts_and_style_sheets(jupyter: Jupyter) -> None:
    other = next(p for p in bokeh_static_dir().rglob("*") if p.is_file() and p.suffix not in (".js", ".css"))
    response = await jupyter.fetch(
        f"dashdock/bokeh/static/{other.relative_to(bokeh_static_dir())}", auth=False
    )
    assert response.code == 404


def test_the_view_and_the_report_of_one_window_agree_on_total_memory(store: HistoryStore) -> None:
    from dashdock.history.report import html_report

    page = document_of(history_page(store, RUN, "memory", T0 + 25, T0 + 35, ASSETS))
    report_text = html_report(store, RUN, T0 + 25, T0 + 35)
    (raw,) = re.findall(r'<script type="application/json" id="[^"]+">(.*?)</script>', report_text, re.DOTALL)
    report = json.loads(html.unescape(raw))
    for kind in ("managed", "unmanaged", "spilled"):
        assert column(page, kind)[: len(column(report, kind))] == column(report, kind)
        assert column(report, kind)  # the totals were drawn
    assert 300 * 2**20 in column(report, "managed")  # both workers, even in buckets only one sampled
