"""Dask's key plots served by the recorder process, drawn by Dask's own code from its mirrors.

Each open Dask plot page is a Bokeh session whose callbacks run in the scheduler's event loop, so
every viewer slows the scheduler down (distributed#6103). A ``PlotServer`` is a Bokeh server in the
recorder process with the same pages (``DRAWN``: Dask's own page functions, handed a
``SchedulerMirror`` instead of the scheduler): N viewers cost the scheduler the recorder's one
reader. A page names its run in the query (``?run=<id>``); the Jupyter server's proxy relays a
recorded source's drawn plots here instead of to the scheduler (proxy/relay_handler.py).

It listens on loopback only and answers only requests that carry its secret header, which the
Jupyter server adds; Bokeh keeps that header out of the session token it writes into pages.
"""

from __future__ import annotations

import asyncio
import gc
import hmac
import logging
import secrets
import time
import weakref
from collections.abc import Callable
from typing import Any

import bokeh.document.document as bokeh_document
from bokeh.application import Application
from bokeh.application.handlers.function import FunctionHandler
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from bokeh.models.widgets import Div
from bokeh.server.auth_provider import AuthProvider
from bokeh.server.server import BaseServer
from bokeh.server.tornado import BokehTornado
from tornado import netutil
from tornado.httpserver import HTTPServer
from tornado.httputil import HTTPServerRequest
from tornado.ioloop import IOLoop
from tornado.web import RequestHandler

from dashdock.live.give_back import give_back
from dashdock.live.mirror import SchedulerMirror, seen
from dashdock.live.one_message import one_message
from dashdock.live.one_write import write_messages_at_once
from dashdock.live.plots import DRAWN, RUN_ARGUMENT, SECRET_HEADER, WATCHED_PARTS, below
from dashdock.live.stale import CHECK_EVERY_MS, watch_freshness
from dashdock.live.text_only import as_text
from dashdock.live.unchanged import send_only_changes

log = logging.getLogger("dashdock.recorder")  # its stderr is the Jupyter server's

# Dask's pages redraw every 100-500 ms; what they read here changes once a recorder tick (1 s).
# A page looks a fifth more often than Dask's page of it redraws, and at least every 160 ms (Dask's
# 500 ms pages would otherwise trail its own by a read), and redraws only when what it reads has
# changed: the mirror moves about ten times a second while pages are open (Limits.live_tick), so a
# change reaches the browser within a look of the read, and the same numbers are never sent again
# (the browser's drawing was most of what 24 panes cost, on the machine the workers share).
MIN_REDRAW_MS = 80
MAX_LOOK_MS = 160
# The pages drawn from the task stream plugin's buffer: they redraw when tasks arrive; every other
# page redraws when the scheduler's state was read again.
FROM_TASKS = (
    "/individual-task-stream",
    "/individual-compute-time-per-key",
    "/individual-aggregate-time-per-action",
)
# Dask's time series append a point every redraw (500 ms), changed or not, and keep the last 1,000:
# they are samples over time, so their pages redraw as Dask's do, and show the same ~8 minutes.
TIME_SERIES = (
    "/individual-workers-network-timeseries",
    "/individual-workers-cpu-timeseries",
    "/individual-workers-memory-timeseries",
    "/individual-workers-disk-timeseries",
)
# Bokeh's Document.destroy runs a full gc.collect() for each page it lets go of (5-6 s after its
# pane closed, all expired pages together): 24 closed panes cost this process 2.4 s of CPU, on the
# cores the workers use. One collection does the same work once, if it comes late enough: a page
# is garbage only when its stopped periodic callbacks have woken from their last sleep (Bokeh's
# _AsyncPeriodic), up to the longest period after (stale.py's 1 s check). A collection any sooner
# left the last pages let go of as garbage in the oldest generation, which Python's own collector
# seldom scans in a quiet process: half the runs of 2,000 opens kept 8 pages and 1.35x the
# baseline RSS, their few objects pinning 25 MB of the heap (bench/watcher_memory.py).
COLLECT_AFTER_S = 2 * CHECK_EVERY_MS / 1000
# A give-back returns only the heap pages wholly free at that moment. The same again once no page
# has been let go of for a while returns the pages wholly freed since:
# after 1,000 opens, 1.033x the warm baseline instead of 1.051x (bench/watcher_memory.py). Panes
# closing all the time postpone it, as the process then uses that memory again anyway.
SETTLE_AFTER_S = 20.0
# Bokeh keeps a page's session 15 s after its last connection closed (checked every 17 s), so a
# client could come back to it; a pane never does (it loads the page again), and every page kept
# holds its document (~0.3 MB): 240 panes opened and closed in a minute held 70 MB, which the
# process kept after they went. A session unused for 5 s goes (a page whose websocket comes later
# still opens: Bokeh makes its session again).
UNUSED_SESSION_MS = 5000
CHECK_UNUSED_MS = 1000
# Requests refused (without the secret) are counted, and logged at most once this often.
REFUSALS_LOG_S = 10.0
FAILED_PAGE = "dashdock could not draw this plot from the recording (see the server log); reload the pane."


class _CoalescedCollect:
    """Stands for the ``gc`` module in Bokeh's document module: its ``collect()`` asks for a
    collection at least ``COLLECT_AFTER_S`` after it, one for however many pages are let go of
    meanwhile; a page let go of while one is due gets another, later one, if the due one comes
    too soon for it. Once none has come for ``settle_after``, one more settles the heap."""

    def __init__(self, loop: IOLoop, settle_after: float = SETTLE_AFTER_S) -> None:
        self._loop = loop
        self._due = False
        self._asked_at = 0.0  # when a page was last let go of (time.monotonic)
        self._settle_after = settle_after
        self._settle: object | None = None  # the timeout of the settling collection, once one is due

    def collect(self, generation: int = 2) -> int:
        self._asked_at = time.monotonic()
        if not self._due:
            self._due = True
            self._loop.add_callback(self._collect_soon)  # thread-safe, as Bokeh may call it anywhere
        return 0

    async def _collect_soon(self) -> None:
        self._cancel_settling()  # a page let go of: the heap settles after its collection
        while True:
            await asyncio.sleep(max(0.0, self._asked_at + COLLECT_AFTER_S - time.monotonic()))
            covered = time.monotonic() - COLLECT_AFTER_S  # pages let go of before this are garbage
            self._due = False
            gc.collect()
            give_back()
            if self._asked_at <= covered or self._due:  # none since, or a new call already asked
                self._settle_later()
                return
            self._due = True

    def _settle_later(self) -> None:
        self._cancel_settling()
        self._settle = self._loop.call_later(self._settle_after, self._settled)

    def _cancel_settling(self) -> None:
        if self._settle is not None:
            self._loop.remove_timeout(self._settle)
            self._settle = None

    def _settled(self) -> None:
        self._settle = None
        gc.collect()
        give_back()

    def __getattr__(self, name: str) -> Any:
        return getattr(gc, name)


def _carries(request: HTTPServerRequest, secret: bytes) -> bool:
    return hmac.compare_digest(request.headers.get(SECRET_HEADER, "").encode(), secret)


class _SecretHeader(AuthProvider):
    """Lets through requests that carry the secret; others are sent to a page that refuses them
    (``_RelativeResources`` refuses them before this is asked)."""

    def __init__(self, secret: str) -> None:
        self._secret = secret.encode()
        super().__init__()

    @property
    def get_user(self) -> Any:  # Bokeh types the handler as a request; it is the handler
        def user(handler: RequestHandler) -> str | None:
            return "dashdock" if _carries(handler.request, self._secret) else None

        return user

    @property
    def login_url(self) -> str:
        return "/refused"

    @property
    def login_handler(self) -> type[RequestHandler]:
        return _Refused


class _Refusals:
    """Counts refused requests and says so in the log at most once every ``REFUSALS_LOG_S``:
    another local user can send thousands a second, and this process's stderr is the Jupyter
    server's log."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._logged_at: float | None = None
        self._since = 0  # refused since the last line

    def refused(self) -> None:
        self._since += 1
        now = self._clock()
        if self._logged_at is not None and now - self._logged_at < REFUSALS_LOG_S:
            return
        log.warning(
            "dashdock: the recorder's plot server refused %d request(s) without its secret%s",
            self._since,
            "" if self._logged_at is None else f" in the last {now - self._logged_at:.0f} s",
        )
        self._logged_at, self._since = now, 0


class _Refused(RequestHandler):
    """Any request without the secret, whatever its method and path: 403, and one count."""

    def initialize(self, refusals: _Refusals) -> None:
        self._refusals = refusals

    def prepare(self) -> None:
        self._refusals.refused()
        self.set_status(403)
        self.finish("403: these plots are served to dashdock's Jupyter server only")


class _RelativeResources(BokehTornado):
    """Links BokehJS as ``static/js/...`` below the page, as Dask's pages do: the proxy serves it
    from the Lab's cache (proxy/bokehjs/). A request without the secret is refused before any of
    Bokeh's handlers sees it (some raise on it: a traceback per request in the server's log)."""

    def __init__(self, *args: Any, secret: str, **kwargs: Any) -> None:
        self._secret = secret.encode()
        self.refusals = _Refusals()
        super().__init__(*args, **kwargs)

    def find_handler(self, request: HTTPServerRequest, **kwargs: Any) -> Any:
        if not _carries(request, self._secret):
            return self.get_handler_delegate(request, _Refused, {"refusals": self.refusals})
        return super().find_handler(request, **kwargs)

    def log_request(self, handler: RequestHandler) -> None:
        if not isinstance(handler, _Refused):  # counted there
            super().log_request(handler)

    def resources(self, absolute_url: str | bool | None = True) -> Any:
        return super().resources(absolute_url)


class PlotServer:
    """Bokeh on a loopback port: Dask's page of each ``DRAWN`` path for the run a page names."""

    def __init__(self, mirror_of: Callable[[str], SchedulerMirror | None]) -> None:
        self.secret = secrets.token_urlsafe(32)
        self._mirror_of = mirror_of
        self._server: BaseServer | None = None
        self.port = 0
        self._pages: dict[str, weakref.WeakSet[Document]] = {}  # run id -> its open pages

    def start(self) -> None:
        from distributed.dashboard.components.scheduler import individual_doc
        from distributed.dashboard.scheduler import applications

        from dashdock.live.groups_page import groups_page
        from dashdock.live.text_only import TextOnlyFineMetrics

        # Dask's and Bokeh's code, imported for good: no collection scans it again.
        gc.collect()
        gc.freeze()
        bokeh_document.gc = _CoalescedCollect(IOLoop.current())  # type: ignore[assignment]
        pages = {
            **applications,
            "/individual-groups": groups_page(),  # see groups_page.py
            "/individual-fine-performance-metrics": individual_doc(TextOnlyFineMetrics, 500),  # text_only.py
        }
        apps = {path: Application(FunctionHandler(self._page(path, pages[path]))) for path in DRAWN}
        tornado_app = _RelativeResources(
            apps,
            prefix="/",
            use_index=False,
            absolute_url="",
            # The proxy is the only client, and it checks the browser's Origin itself.
            extra_websocket_origins=["*"],
            auth_provider=_SecretHeader(self.secret),
            secret=self.secret,
            exclude_headers=[SECRET_HEADER],
            unused_session_lifetime_milliseconds=UNUSED_SESSION_MS,
            check_unused_sessions_milliseconds=CHECK_UNUSED_MS,
        )
        write_messages_at_once(tornado_app)  # one_write.py
        http_server = HTTPServer(tornado_app)
        sockets = netutil.bind_sockets(0, "127.0.0.1")
        http_server.add_sockets(sockets)
        self.port = sockets[0].getsockname()[1]
        self._server = BaseServer(IOLoop.current(), tornado_app, http_server)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def end(self, run_id: str) -> None:
        """The run ended: close its pages' websockets, so the proxy reports them lost and their
        panes load again (the plot of the next run, or the dashboard's own)."""
        for doc in list(self._pages.pop(run_id, ())):
            _close(doc)

    def _page(
        self, path: str, draw: Callable[[Any, dict[str, Any], Document], None]
    ) -> Callable[[Document], None]:
        def page(doc: Document) -> None:
            context: Any = doc.session_context
            arguments = context.request.arguments if context is not None else {}
            runs = arguments.get(RUN_ARGUMENT) or [b""]
            run_id = runs[0].decode(errors="replace") if isinstance(runs[0], bytes) else str(runs[0])
            mirror = self._mirror_of(run_id)
            if mirror is None:
                doc.add_root(Div(text="This recording has ended; reload the pane."))
                return
            watch_freshness(doc, mirror, path, _close)  # stale.py
            _paced(doc, mirror, path=path)
            try:
                draw(mirror, {"prefix": "/"}, doc)
            except Exception:  # Dask's page function, on a state it may not expect
                _failed(doc, path)
                return
            _without_functions(doc)
            as_text(doc)  # what the scheduler names is never markup (text_only.py)
            send_only_changes(doc)  # unchanged.py
            # What the scheduler is asked for depends on what is watched.
            if mirror.viewing(path, doc) and path in WATCHED_PARTS.values():
                mirror.read_soon.set()
            self._pages.setdefault(run_id, weakref.WeakSet()).add(doc)

        return page


def _close(doc: Document) -> None:
    """End the page's sessions: its browser's websocket closes, and the pane loads again."""
    context: Any = doc.session_context  # Bokeh's server context: the session it serves
    session = getattr(context, "_session", None)
    for connection in list(getattr(session, "_subscribed_connections", ())):
        connection._socket.close()


def _failed(doc: Document, path: str) -> None:
    """Dask's page function raised: the pane says so instead of a bare "500" (Bokeh's answer when
    a page function raises), and the server log has the traceback."""
    log.exception("dashdock: the recorder could not draw %s", path)
    for callback in list(doc.session_callbacks):
        doc.callbacks.remove_session_callback(callback)
    doc.clear()
    doc.add_root(Div(text=FAILED_PAGE))


def _without_functions(doc: Document) -> None:
    """Dask's Compute Time Per Key and Aggregate Time Per Action start with placeholder rows, one
    coloured by a Python function (the task stream's ``colors["compute"]``), until a task has
    computed. Bokeh cannot send a function, so Dask's own page fails to load on a fresh cluster and
    stays blank. Here such a value becomes null (drawn transparent) and the page loads; the first
    update replaces the placeholders as on Dask's page."""
    for source in doc.select({"type": ColumnDataSource}):
        if not isinstance(source, ColumnDataSource):
            continue
        for name, column in list(source.data.items()):
            if isinstance(column, list) and any(callable(value) for value in column):
                source.data[name] = [None if callable(value) else value for value in column]


def look_period(dask_period_ms: int) -> int:
    """How often a drawn page looks for a change, for a page Dask redraws every ``dask_period_ms``."""
    return max(MIN_REDRAW_MS, int(min(dask_period_ms * 0.8, MAX_LOOK_MS)))


def _paced(
    doc: Document, mirror: SchedulerMirror, is_seen: Callable[[Document], bool] = seen, path: str = ""
) -> None:
    """Dask's page function adds its redraw with ``doc.add_periodic_callback(update, period)``:
    on this page it looks every ``look_period(period)``, and a redraw runs only when what the page
    reads of the mirror has changed since that callback last ran, and a browser is connected to
    see it; a time series (``TIME_SERIES``) redraws at Dask's period, whenever a browser sees it. A
    redraw that raises ends the page's redraws: the pane says so and the log has it once, not a
    traceback every period."""
    add = doc.add_periodic_callback
    from_tasks = below(path, FROM_TASKS)
    sampled = below(path, TIME_SERIES)

    def moved() -> int:
        return mirror.task_changes if from_tasks else mirror.state_changes

    def paced(callback: Callable[[], object], period_milliseconds: int) -> Any:
        drawn_at = -1  # not every page function draws before its first period: that one always runs

        def when_changed() -> None:
            nonlocal drawn_at
            if (sampled or moved() != drawn_at) and is_seen(doc):
                drawn_at = moved()
                try:
                    with one_message(doc):  # one_message.py
                        callback()
                except Exception:  # Dask's redraw, on a state it may not expect
                    _failed(doc, path)

        return add(when_changed, period_milliseconds if sampled else look_period(period_milliseconds))

    doc.add_periodic_callback = paced  # type: ignore[method-assign]
