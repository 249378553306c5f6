"""A small authenticating reverse proxy in front of a Dask dashboard, as sites put one (tests only).

Every request (pages, scripts, JSON, the websocket) needs ``Authorization: Bearer <token>``, or
``?access=<token>``; anything else gets 401. It runs on a thread of its own with its own loop, so
the synchronous browser tests can use it too.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any
from urllib.parse import parse_qsl, urlencode

from tornado import httpclient, web, websocket
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

_PASSED_HEADERS = ("Content-Type", "Cache-Control", "Location")


class _Proxy(websocket.WebSocketHandler):
    def initialize(self, guard: AuthProxy) -> None:
        self.guard = guard
        self.upstream = guard.upstream
        self.seen = guard.seen
        self.upstream_ws: websocket.WebSocketClientConnection | None = None

    def _allowed(self) -> bool:
        header = self.request.headers.get("Authorization", "")
        token = self.guard.token  # read each time: a test may rotate it
        return header == f"Bearer {token}" or self.get_query_argument("access", "") == token

    def _upstream_url(self, scheme: str = "http") -> str:
        query = urlencode([(k, v) for k, v in parse_qsl(self.request.query) if k != "access"])
        base = self.upstream.replace("http", scheme, 1)
        return base + self.request.path + (f"?{query}" if query else "")

    async def get(self, *args: Any, **kwargs: Any) -> None:
        self.seen.append(self.request.uri or "")
        if not self._allowed():
            self.set_status(401)
            self.finish("credentials needed")
            return
        if self.request.headers.get("Upgrade", "").lower() == "websocket":
            await super().get(*args, **kwargs)
            return
        response = await httpclient.AsyncHTTPClient().fetch(
            self._upstream_url(), raise_error=False, follow_redirects=False
        )
        self.set_status(response.code)
        for name in _PASSED_HEADERS:
            if name in response.headers:
                self.set_header(name, response.headers[name])
        self.finish(response.body or b"")

    def check_origin(self, origin: str) -> bool:
        return True

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return subprotocols[0] if subprotocols else None

    async def open(self, *args: Any, **kwargs: Any) -> None:
        protocols = [
            p.strip() for p in self.request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p
        ]
        self.upstream_ws = await websocket.websocket_connect(
            self._upstream_url("ws"), subprotocols=protocols or None, on_message_callback=self._from_upstream
        )

    def _from_upstream(self, message: str | bytes | None) -> None:
        if message is None:
            self.close()
        else:
            self.write_message(message, binary=isinstance(message, bytes))

    def on_message(self, message: str | bytes) -> None:
        if self.upstream_ws is not None:
            self.upstream_ws.write_message(message, binary=isinstance(message, bytes))

    def on_close(self) -> None:
        if self.upstream_ws is not None:
            self.upstream_ws.close()


class AuthProxy:
    """``AuthProxy(upstream, token).start()``; ``url`` is where it listens, ``seen`` what it was asked."""

    def __init__(self, upstream: str, token: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.token = token
        self.seen: list[str] = []
        self.url = ""
        self._loop: IOLoop | None = None

    def start(self) -> AuthProxy:
        ready: Future[int] = Future()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        self.url = f"http://127.0.0.1:{ready.result(10)}"
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.add_callback(self._loop.stop)

    def _run(self, ready: Future[int]) -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())
        self._loop = IOLoop.current()
        app = web.Application([(r"/.*", _Proxy, {"guard": self})])
        server = HTTPServer(app)
        server.listen(0, address="127.0.0.1")
        ready.set_result(next(iter(server._sockets.values())).getsockname()[1])
        self._loop.start()
