"""A Bokeh server inside the kernel for the plots ``dashdock.publish`` puts on the dashboard.

It runs on a thread of its own, so a pane stays live while a cell computes, and listens on the
loopback interface only. The kernel keeps each published object in a document of its own
(``Mirror``); every browser session gets a copy, and each change the kernel makes (``stream``,
``patch``, a new title, a new glyph) is sent on to the copies as the Bokeh patch it is. So the
user changes their figure as they always do, from any cell, without Bokeh's session locks.
"""

from __future__ import annotations

import asyncio
import html
import logging
import threading
from concurrent.futures import Future
from typing import Any

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

START_TIMEOUT = 30.0


class Mirror:
    """The kernel's document of one published object, and the browser sessions showing copies."""

    def __init__(self, obj: Any) -> None:
        from bokeh.document import Document

        self.document = Document()
        self.document.add_root(obj)
        self._sessions: set[Any] = set()
        self._lock = threading.Lock()
        self.document.on_change(self._forward)

    def fill(self, doc: Any) -> None:
        """A new session's document: a copy of the kernel's, kept in step until the session ends."""
        from bokeh.document import Document

        with self._lock:
            copy = Document.from_json(self.document.to_json())
            for root in list(copy.roots):
                copy.remove_root(root)
                doc.add_root(root)
            doc.title = self.document.title
            self._sessions.add(doc)
        doc.on_session_destroyed(lambda _: self._drop(doc))

    def close(self) -> None:
        self.document.remove_on_change(self._forward)
        with self._lock:
            self._sessions.clear()

    def _drop(self, doc: Any) -> None:
        with self._lock:
            self._sessions.discard(doc)

    def _forward(self, event: Any) -> None:
        from bokeh.protocol import Protocol

        with self._lock:  # not while a new session copies the document
            try:
                patch = Protocol().create("PATCH-DOC", [event])
            except Exception:  # not a change a browser needs (an event of the kernel's own)
                return
            sessions = list(self._sessions)
        for doc in sessions:
            # Thread-safe: the session applies it on the server's thread, under its document lock.
            doc.add_next_tick_callback(lambda doc=doc: patch.apply_to_document(doc))


class PanelView:
    """A published Panel object: Panel builds each session's models and keeps them in step itself."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def fill(self, doc: Any) -> None:
        self.obj.server_doc(doc)

    def close(self) -> None:
        """Panel lets go of a session's models when the session ends."""


class _Router(web.Application):
    """The index of published plots, then each plot's own Bokeh application, added as they come."""

    def __init__(self) -> None:
        super().__init__([(r"/", _Index, {"router": self})])
        self.apps: dict[str, Any] = {}  # path -> BokehTornado
        self.names: dict[str, str] = {}  # path -> the name it was published under

    def find_handler(self, request: Any, **kwargs: Any) -> Any:
        handler = super().find_handler(request, **kwargs)
        if handler is not None and not issubclass(handler.handler_class, web.ErrorHandler):
            return handler
        for app in list(self.apps.values()):
            found = app.find_handler(request, **kwargs)
            if found is not None and not issubclass(found.handler_class, web.ErrorHandler):
                return found
        return handler


class _Index(web.RequestHandler):
    """Links to the plots, the way ``bokeh serve`` lists its applications (sources/bokeh_apps.py)."""

    def initialize(self, router: _Router) -> None:
        self.router = router

    def get(self) -> None:
        links = "".join(
            f'<li><a href="{html.escape(path[1:])}">{html.escape(name)}</a></li>'
            for path, name in self.router.names.items()
        )
        self.write(f"<!DOCTYPE html><title>Published plots</title><ul>{links}</ul>")


class BokehHost:
    """The kernel's Bokeh server: started on first use, one application per published plot."""

    def __init__(self) -> None:
        self._loop: IOLoop | None = None
        self._router = _Router()
        self.port = 0

    def start(self) -> None:
        if self._loop is not None:
            return
        # The server thread's messages would land in whichever cell's output is current.
        server_log = logging.getLogger("bokeh.server")
        server_log.addHandler(logging.NullHandler())
        server_log.propagate = False
        ready: Future[int] = Future()
        thread = threading.Thread(target=self._run, args=(ready,), name="dashdock-publish", daemon=True)
        thread.start()
        self.port = ready.result(START_TIMEOUT)

    def add(self, path: str, name: str, view: Mirror | PanelView) -> None:
        self._call(lambda: self._add(path, name, view))

    def remove(self, path: str) -> None:
        self._call(lambda: self._remove(path))

    def _run(self, ready: Future[int]) -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        self._loop = IOLoop.current()
        try:
            server = HTTPServer(self._router, xheaders=False)
            server.listen(0, address="127.0.0.1")
            port = next(iter(server._sockets.values())).getsockname()[1]
        except Exception as exc:
            ready.set_exception(exc)
            return
        ready.set_result(port)
        self._loop.start()

    def _call(self, work: Any) -> None:
        assert self._loop is not None, "start() first"
        done: Future[None] = Future()

        def run() -> None:
            try:
                work()
                done.set_result(None)
            except Exception as exc:
                done.set_exception(exc)

        self._loop.add_callback(run)
        done.result(START_TIMEOUT)

    def _add(self, path: str, name: str, view: Mirror | PanelView) -> None:
        from bokeh.application import Application
        from bokeh.application.handlers.function import FunctionHandler
        from bokeh.server.tornado import BokehTornado

        self._remove(path)
        # The proxy relays the websocket with the dashboard's own host as its origin.
        app = BokehTornado(
            {path: Application(FunctionHandler(view.fill))},
            extra_websocket_origins=[f"127.0.0.1:{self.port}", f"localhost:{self.port}"],
            absolute_url="",
        )
        app.initialize(IOLoop.current())
        app.start()
        self._router.apps[path] = app
        self._router.names[path] = name

    def _remove(self, path: str) -> None:
        self._router.names.pop(path, None)
        app = self._router.apps.pop(path, None)
        if app is not None:
            app.stop()
