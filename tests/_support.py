"""Test helpers: a recording upstream server and a small client for the Jupyter server under test.

The recording server is a real tornado HTTP + websocket server on 127.0.0.1 in its own thread,
so it keeps running across the per-test event loops of pytest-jupyter. It records every request
and websocket upgrade it receives, which is how tests see what a dashboard gets through the proxy.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import tornado.httpserver
import tornado.testing
import tornado.web
import tornado.websocket
from tornado.httpclient import HTTPClientError, HTTPRequest, HTTPResponse
from tornado.simple_httpclient import SimpleAsyncHTTPClient
from tornado.websocket import WebSocketClientConnection, websocket_connect

PLOTS_JSON = {"Individual Echo": "/echo", "Individual Task Stream": "/individual-task-stream"}


@dataclass
class Seen:
    """One request (or websocket upgrade) that reached the recording server."""

    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes
    websocket: bool = False

    def everything(self) -> str:
        """All that the dashboard could read from this request, as one string to search."""
        lines = [f"{self.method} {self.path}?{self.query}"]
        lines += [f"{name}: {value}" for name, value in self.headers]
        lines.append(self.body.decode("latin-1"))
        return "\n".join(lines)

    def header(self, name: str) -> str | None:
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        return values[0] if values else None


class _Recording:
    upstream: RecordingUpstream

    def record(self, request: Any, websocket: bool = False) -> None:
        self.upstream.add(
            Seen(
                method=request.method,
                path=request.path,
                query=request.query,
                headers=list(request.headers.get_all()),
                body=request.body or b"",
                websocket=websocket,
            )
        )


class _EchoHandler(_Recording, tornado.web.RequestHandler):
    """Answers anything with a JSON description of what it received."""

    def initialize(self, upstream: RecordingUpstream) -> None:
        self.upstream = upstream

    def prepare(self) -> None:
        self.record(self.request)

    def _answer(self) -> None:
        self.set_header("Content-Type", "application/json")
        # Deliberately no value that starts with "/": this JSON must never look like a plot list.
        self.finish(json.dumps({"received": f"{self.request.method} {self.request.path}"}))

    def get(self, *args: Any) -> None:
        self._answer()

    def post(self, *args: Any) -> None:
        self._answer()

    def put(self, *args: Any) -> None:
        self._answer()

    def patch(self, *args: Any) -> None:
        self._answer()

    def delete(self, *args: Any) -> None:
        self._answer()

    def head(self, *args: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish()


class _PlotsHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        self.finish(PLOTS_JSON)


# A scheduler's worker table, as a hostile scheduler could write it: a worker on a host outside the
# allowlist, a link that tries to smuggle another host into the target, and one with no dashboard.
FORGED_WORKER_TABLE = """<table><tbody>
<tr><td><a href="../worker/tcp%3A//10.0.0.7%3A4000.html">tcp://10.0.0.7:4000</a></td><td>far</td>
<td>4</td><td data-sort="8000000000">8 GB</td><td></td><td></td><td>0</td><td>0</td>
<td><a href="../../proxy/8788/10.0.0.7/status">dashboard</a></td></tr>
<tr><td><a href="../worker/tcp%3A//127.0.0.1%3A4001.html">tcp://127.0.0.1:4001</a></td><td>sly</td>
<td>1</td><td data-sort="1">1 B</td><td></td><td></td><td>0</td><td>0</td>
<td><a href="../../proxy/80/127.0.0.1@10.0.0.8/status">dashboard</a></td></tr>
<tr><td><a href="../worker/tcp%3A//127.0.0.1%3A4002.html">tcp://127.0.0.1:4002</a></td><td>plain</td>
<td>2</td><td data-sort="2">2 B</td><td></td><td></td><td>0</td><td>0</td><td> </td></tr>
</tbody></table>"""


class _WorkerTableHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        self.finish(FORGED_WORKER_TABLE)


class _SetCookieHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        self.add_header("Set-Cookie", "dash=1; Path=/; Domain=127.0.0.1")
        self.add_header("Set-Cookie", "other=2; Domain=example.com; Path=/sub; HttpOnly")
        self.finish("cookies")


class _RedirectHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        self.redirect(self.get_argument("to"), status=302)


class _FramingHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("Content-Security-Policy", "frame-ancestors 'none'")
        self.finish("<html><body>framed</body></html>")


# Response headers a hostile dashboard sends to widen its reach; none may pass the proxy as sent.
HOSTILE_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Credentials": "true",
    "Strict-Transport-Security": "max-age=31536000; includeSubDomains",
    "Service-Worker-Allowed": "/",
    "X-Frame-Options": "ALLOWALL",
    "X-Evil": "1",
    "WWW-Authenticate": 'Basic realm="Jupyter"',
    "Refresh": "0; url=/lab",
    "Link": "</sw.js>; rel=serviceworker",
    "Content-Security-Policy": "script-src 'self'; frame-ancestors *; report-uri http://10.0.0.1/r",
    "Content-Security-Policy-Report-Only": "default-src 'none'",
    "Cache-Control": "max-age=60",
    "ETag": '"evil"',
}


class _HostileHeadersHandler(_EchoHandler):
    def get(self, *args: Any) -> None:
        for name, value in HOSTILE_HEADERS.items():
            self.set_header(name, value)
        self.finish("<html><body>hostile</body></html>")


class _HostilePictureHandler(_EchoHandler):
    """A picture whose dashboard asks for credentialed reads by any site."""

    def get(self, *args: Any) -> None:
        self.set_header("Content-Type", "image/png")
        self.set_header("Access-Control-Allow-Origin", "https://evil.example")
        self.set_header("Access-Control-Allow-Credentials", "true")
        self.finish(b"\x89PNG\r\n\x1a\n")


class _StreamHandler(_EchoHandler):
    """Sends a first chunk, then holds the rest back until the test says the first chunk arrived."""

    async def get(self, *args: Any) -> None:
        self.write("first-chunk;")
        await self.flush()
        released = await wait_for(self.upstream.first_chunk_seen, 10)
        self.finish("released" if released else "held back: the proxy buffered the first chunk")


class _WebSocketHandler(_Recording, tornado.websocket.WebSocketHandler):
    """Echoes messages; 'close' makes it close the connection; records upgrades and closes."""

    def initialize(self, upstream: RecordingUpstream) -> None:
        self.upstream = upstream

    def check_origin(self, origin: str) -> bool:
        return True

    async def get(self, *args: Any, **kwargs: Any) -> None:
        self.record(self.request, websocket=True)
        await super().get(*args, **kwargs)

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return subprotocols[0] if subprotocols else None

    def on_message(self, message: str | bytes) -> None:
        if message == "close":
            self.close(1000, "asked to")
            return
        self.write_message(message, binary=isinstance(message, bytes))

    def on_close(self) -> None:
        self.upstream.websocket_closed.set()


class RecordingUpstream:
    """A real HTTP + websocket server on 127.0.0.1 that records what it receives."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: list[Seen] = []
        self.websocket_closed = threading.Event()
        self.first_chunk_seen = threading.Event()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: tornado.httpserver.HTTPServer | None = None
        self._thread = threading.Thread(target=self._run, name="recording-upstream", daemon=True)
        self.port = 0

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.netloc}"

    @property
    def seen(self) -> list[Seen]:
        with self._lock:
            return list(self._seen)

    def add(self, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
        self.websocket_closed.clear()
        self.first_chunk_seen.clear()

    def start(self) -> RecordingUpstream:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        options = {"upstream": self}
        app = tornado.web.Application(
            [
                # A dashboard at the root, and a second one under /sub/dash (as behind another proxy).
                (r"(?:/sub/dash)?/individual-plots\.json", _PlotsHandler, options),
                (r"/info/main/workers\.html", _WorkerTableHandler, options),
                (r"/set-cookie", _SetCookieHandler, options),
                (r"(?:/sub/dash)?/redirect", _RedirectHandler, options),
                (r"/framing", _FramingHandler, options),
                (r"/hostile-headers", _HostileHeadersHandler, options),
                (r"/statics/images/numpy\.png", _HostilePictureHandler, options),
                (r"/stream", _StreamHandler, options),
                (r"/ws", _WebSocketHandler, options),
                (r"/.*", _EchoHandler, options),
            ],
            websocket_max_message_size=64 * 1024 * 1024,
        )
        sock, self.port = tornado.testing.bind_unused_port(address="127.0.0.1")
        self._server = tornado.httpserver.HTTPServer(app, max_body_size=64 * 1024 * 1024)
        self._server.add_socket(sock)
        self._ready.set()
        self._loop.run_forever()
        self._server.stop()
        # Close kept-alive connections too, so clients see a dashboard that is gone, not one that hangs.
        self._loop.run_until_complete(asyncio.wait_for(self._server.close_all_connections(), 10))
        self._loop.close()


class WarningsLog(logging.Handler):
    """Keeps the messages of warnings (and worse) that a logger emits."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def closed_loopback_port() -> socket.socket:
    """A bound loopback socket that does not listen: connecting to its port is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@dataclass
class Jupyter:
    """The Jupyter server under test, seen from a client on 127.0.0.1."""

    client: SimpleAsyncHTTPClient
    base_url: str
    port: int
    token: str
    dashdock_warnings: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def path(self, path: str) -> str:
        """An absolute path on the server; ``path`` is relative to the base URL, sent as written."""
        return self.base_url + path.lstrip("/")

    def url(self, path: str) -> str:
        return self.origin + self.path(path)

    async def fetch(
        self,
        path: str,
        method: str = "GET",
        body: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
        absolute: bool = False,
        decompress: bool = True,
    ) -> HTTPResponse:
        """Send a request exactly as written (no escaping); never follows redirects or raises on status.

        With ``decompress`` (the default) it accepts gzip and hands back the decoded body, as a browser does.
        """
        all_headers = dict(headers or {})
        if auth:
            all_headers.setdefault("Authorization", f"token {self.token}")
        if body is None and method in ("POST", "PUT", "PATCH"):
            body = b""
        url = self.origin + path if absolute else self.url(path)
        request = HTTPRequest(
            url,
            method=method,
            body=body,
            headers=all_headers,
            follow_redirects=False,
            request_timeout=30,
            allow_nonstandard_methods=method == "DELETE" and body is not None,
            decompress_response=decompress,
        )
        return await self.client.fetch(request, raise_error=False)

    async def proxied(
        self,
        path: str,
        method: str = "GET",
        body: str | bytes | None = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
        decompress: bool = True,
        absolute: bool = False,
    ) -> HTTPResponse:
        """Request a proxied page as a browser follows a proxy link: the link (``dashdock/proxy/...``)
        redirects to the page's view URL, where the request is sent as a page would send it, with
        ``headers`` but without Jupyter's token. An answer that is not that redirect (a refusal, an
        error) is returned as it is."""
        link = await self.fetch(path, headers=headers, auth=auth, absolute=absolute)
        location = link.headers.get("Location", "")
        if link.code != 302 or "/dashdock/view/" not in location:
            return link
        return await self.fetch(
            location, method, body, headers=headers, auth=False, absolute=True, decompress=decompress
        )

    async def api(
        self, method: str, path: str, payload: Any = None, *, raw: str | None = None, auth: bool = True
    ) -> tuple[int, Any]:
        """Call ``dashdock/api/{path}``; returns (status, decoded JSON body or None)."""
        body = raw if raw is not None else (json.dumps(payload) if payload is not None else None)
        response = await self.fetch(f"dashdock/api/{path}", method=method, body=body, auth=auth)
        text = response.body.decode() if response.body else ""
        return response.code, (json.loads(text) if text else None)

    async def add_source(self, url: str) -> dict[str, Any]:
        code, source = await self.api("POST", "sources", {"url": url})
        assert code in (200, 201), source
        return source

    async def login_cookie(self) -> str:
        """Log in with the token as a browser does (``?token=``); returns the Cookie header value."""
        response = await self.fetch(f"api/status?token={self.token}", auth=False)
        assert response.code == 200
        pairs = [raw.split(";", 1)[0] for raw in response.headers.get_list("Set-Cookie")]
        login = [pair for pair in pairs if pair.startswith("username-")]
        assert login, f"no login cookie in {pairs}"
        return login[0]

    async def websocket(
        self,
        path: str,
        headers: dict[str, str] | None = None,
        subprotocols: list[str] | None = None,
        auth: bool = True,
        absolute: bool = False,
    ) -> WebSocketClientConnection:
        all_headers = dict(headers or {})
        if auth:
            all_headers.setdefault("Authorization", f"token {self.token}")
        request = HTTPRequest(
            f"ws://127.0.0.1:{self.port}{path if absolute else self.path(path)}",
            headers=all_headers,
            request_timeout=30,
        )
        return await websocket_connect(request, subprotocols=subprotocols, max_message_size=64 * 1024 * 1024)


async def websocket_refusal(jupyter: Jupyter, path: str, **kwargs: Any) -> int:
    """Try an upgrade that must be refused; returns the HTTP status it got."""
    try:
        connection = await jupyter.websocket(path, **kwargs)
    except HTTPClientError as exc:
        return exc.code
    connection.close()
    return 101


def sandbox_policies(response: HTTPResponse) -> list[str]:
    """A proxied response's content security policies but the one that confines its requests to
    its own view URL (checked by test_isolation.py), which names the server's port."""
    return [
        policy
        for policy in response.headers.get_list("Content-Security-Policy")
        if "/dashdock/view/" not in policy
    ]


def view_root(response: HTTPResponse) -> str:
    """The view prefix, ``{base_url}dashdock/view/{target}/{capability}``, a proxied page was served under."""
    match = re.match(r"^(.*?/dashdock/view/[^/]+/[^/]+)", urlsplit(response.effective_url).path)
    assert match, f"not served under a view URL: {response.effective_url}"
    return match[1]


# What every proxied response carries: an opaque origin that Lab may frame.
SANDBOX_POLICY = "sandbox allow-scripts allow-popups allow-downloads; frame-ancestors 'self'"


def resolve(page_url: str, reference: str) -> str:
    return urljoin(page_url, reference)


async def wait_for(event: threading.Event, seconds: float = 10) -> bool:
    """Wait (without blocking the server's loop) for something another thread does; a generous bound."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if event.is_set():
            return True
        await asyncio.sleep(0.01)
    return event.is_set()
