"""Relay of a dashboard's HTTP and websockets under ``{base_url}dashdock/proxy/{target}/{path}``.

``{target}`` is a source id (the registry decides where it points, so panes follow a source
that moves) or a literal ``host:port`` that a source or the allowlist permits. The relay
authenticates every request and upgrade before it opens anything upstream, streams bodies
with backpressure, forwards both Bokeh subprotocols, and closes each websocket side with the other.
"""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import dataclass
from typing import Any

import aiohttp
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import ensure_async, url_path_join
from tornado import web
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, WebSocketHandler
from yarl import URL

from .bokeh_static import IMMUTABLE, LocalBokehJS, StaticAsset
from .headers import (
    FRAME_POLICY,
    confine_cookie,
    passed_response_headers,
    rewrite_location,
    upstream_query,
    upstream_request_headers,
)
from .registry import SourceError, SourceRegistry
from .targets import Allowlist, Target, TargetError, parse_target_segment
from .upstream import UpstreamClient

_SOURCE_ID_RE = re.compile(r"^[a-z0-9-]{1,64}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# Close codes that may be sent on the wire (RFC 6455 7.4); others become 1011 (server error).
_SENDABLE_CLOSE_CODES = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011})


@dataclass(frozen=True)
class ProxySettings:
    """Limits of the relay, from the extension's traits."""

    connect_timeout: float
    read_timeout: float
    websocket_max_message_size: int


@dataclass(frozen=True)
class Route:
    """Where one proxied request goes."""

    target: Target
    upstream_root: str  # path of the dashboard root on the target ("" for the host root)
    proxy_prefix: str  # this server's path that stands for upstream_root
    path: str  # raw (still percent-encoded) path below the root

    @property
    def upstream_url(self) -> str:
        return self.target.origin + self.upstream_root + self.path


class ProxyHandler(JupyterHandler, WebSocketHandler):
    """One handler for both protocols: the Bokeh page and its ``/ws`` share a URL prefix."""

    auth_resource = "dashdock"

    def initialize(
        self,
        registry: SourceRegistry,
        client: UpstreamClient,
        allowlist: Allowlist,
        proxy: ProxySettings,
        bokeh_js: LocalBokehJS,
    ) -> None:
        self._registry = registry
        self._bokeh_js = bokeh_js
        self._client = client
        self._allowlist = allowlist
        self._proxy = proxy
        self._upstream_ws: aiohttp.ClientWebSocketResponse | None = None
        self._pump: asyncio.Task[None] | None = None

    # -- routing and authentication ------------------------------------------------------

    @property
    def _is_upgrade(self) -> bool:
        return self.request.headers.get("Upgrade", "").lower() == "websocket"

    async def prepare(self) -> None:  # type: ignore[override]
        # A websocket upgrade without a user gets 403 (never a login redirect, never a 101),
        # and that happens here, before anything upstream is opened.
        await super().prepare(_redirect_to_login=not self._is_upgrade)
        if self._finished:
            return
        if self.current_user is None:
            raise web.HTTPError(403)
        action = "read" if self.request.method in ("GET", "HEAD", "OPTIONS") else "write"
        if not await ensure_async(self.authorizer.is_authorized(self, self.current_user, action, self.auth_resource)):
            raise web.HTTPError(403)
        self._route = self._resolve_route()

    def _resolve_route(self) -> Route:
        root_prefix = url_path_join(self.base_url, "dashdock/proxy/")
        raw_path = self.request.path
        if not raw_path.startswith(root_prefix):
            raise web.HTTPError(404)
        segment, _, below = raw_path[len(root_prefix) :].partition("/")
        proxy_prefix = root_prefix + segment
        path = "/" + below
        if _SOURCE_ID_RE.match(segment):
            try:
                source = self._registry.get(segment)
            except SourceError as exc:
                raise web.HTTPError(404, reason="Unknown source") from exc
            return Route(source.target, source.root_path, proxy_prefix, path)
        try:
            target = parse_target_segment(segment)
        except TargetError as exc:
            raise web.HTTPError(400, str(exc)) from exc
        if not (self._registry.knows_target(target) or self._allowlist.allows(target)):
            raise web.HTTPError(
                403, f"{target.netloc} is not an allowed target; see c.DashdockApp.allowed_targets."
            )
        return Route(target, "", proxy_prefix, path)

    def _upstream_url(self) -> URL:
        query = upstream_query(self.request.query)
        return URL(self._route.upstream_url + (f"?{query}" if query else ""), encoded=True)

    # -- HTTP ------------------------------------------------------------------------------

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self._is_upgrade:
            await self._open_websocket()
            return
        asset = await self._bokeh_js.lookup(self._route.path, self.request.query)
        if asset is not None:
            self._serve_local(asset)
        else:
            await self._relay_http()

    def _serve_local(self, asset: StaticAsset) -> None:
        self.set_header("Content-Type", "text/javascript; charset=UTF-8")
        self.set_header("Cache-Control", IMMUTABLE)
        self.set_header("Vary", "Accept-Encoding")
        if "gzip" in self.request.headers.get("Accept-Encoding", ""):
            self.set_header("Content-Encoding", "gzip")
            self.finish(asset.gzipped)
        else:
            self.finish(asset.raw)

    async def head(self, *args: Any) -> None:
        await self._relay_http()

    async def post(self, *args: Any) -> None:
        await self._relay_http()

    async def put(self, *args: Any) -> None:
        await self._relay_http()

    async def patch(self, *args: Any) -> None:
        await self._relay_http()

    async def delete(self, *args: Any) -> None:
        await self._relay_http()

    async def _relay_http(self) -> None:
        route = self._route
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._proxy.connect_timeout, sock_read=self._proxy.read_timeout
        )
        method = self.request.method or "GET"
        body = self.request.body if method in _BODY_METHODS else None
        try:
            async with self._client.session.request(
                method,
                self._upstream_url(),
                headers=upstream_request_headers(self.request.headers),
                data=body,
                allow_redirects=False,
                timeout=timeout,
            ) as response:
                self._start_response(response)
                if method == "HEAD" or response.status in (204, 304):
                    return
                async for chunk in response.content.iter_any():
                    self.write(chunk)
                    await self.flush()
        except StreamClosedError:
            return  # the browser went away; leaving the block closes the upstream response
        except (TimeoutError, aiohttp.ClientError) as exc:
            if self._headers_written:
                # Mid-body: the status is gone, so the only honest signal is a cut connection.
                self.log.info("dashdock: upstream %s failed mid-response: %s", route.target.netloc, type(exc).__name__)
                self.request.connection.close()  # type: ignore[union-attr]
                return
            raise _upstream_http_error(route.target, exc) from None

    def _start_response(self, response: aiohttp.ClientResponse) -> None:
        route = self._route
        self.set_status(response.status, response.reason)
        self.clear_header("Content-Type")
        for name, value in passed_response_headers(response.headers):
            self.add_header(name, value)
        self.set_header("Content-Security-Policy", FRAME_POLICY)
        for raw in response.headers.getall("Set-Cookie", []):
            cookie = confine_cookie(raw, route.proxy_prefix)
            if cookie is not None:
                self.add_header("Set-Cookie", cookie)
        location = response.headers.get("Location")
        if location is not None:
            rewritten = rewrite_location(
                location, route.target, route.upstream_root, str(response.url), route.proxy_prefix
            )
            if rewritten is None:
                raise web.HTTPError(502, "The dashboard redirected to another host; dashdock does not follow it.")
            self.set_header("Location", rewritten)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """A short page that a pane can show; the message is escaped and never echoes the request."""
        exc_info = kwargs.get("exc_info")
        message = self._reason
        if exc_info and isinstance(exc_info[1], web.HTTPError) and exc_info[1].log_message:
            message = exc_info[1].log_message % exc_info[1].args if exc_info[1].args else exc_info[1].log_message
        self.clear_header("Content-Type")
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header("Content-Security-Policy", FRAME_POLICY + "; default-src 'none'; style-src 'unsafe-inline'")
        self.finish(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dashdock</title></head>"
            "<body style='font-family: sans-serif; padding: 1em'>"
            f"<h3>dashdock: {status_code} {html.escape(self._reason)}</h3>"
            f"<p class='jp-dashdock-error'>{html.escape(message)}</p></body></html>"
        )

    # -- websockets --------------------------------------------------------------------------

    @property
    def max_message_size(self) -> int:
        return self._proxy.websocket_max_message_size

    def get_compression_options(self) -> dict[str, Any] | None:
        return None  # plots stream many small messages; deflate would cost latency for little gain

    async def _open_websocket(self) -> None:
        # Refuse a foreign Origin (cross-site websocket hijacking) before connecting upstream.
        if not self.check_origin(self.request.headers.get("Origin", "")):
            raise web.HTTPError(403, "Cross-origin websocket refused.")
        protocols = [p.strip() for p in self.request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        route = self._route
        try:
            self._upstream_ws = await self._client.session.ws_connect(
                self._upstream_url(),
                protocols=protocols,
                headers={"Origin": route.target.origin, **upstream_request_headers(self.request.headers)},
                max_msg_size=0,
                autoclose=False,
                autoping=True,
                compress=0,
                timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=5.0),
            )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise _upstream_http_error(route.target, exc) from None
        await WebSocketHandler.get(self)

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return self._upstream_ws.protocol if self._upstream_ws is not None else None

    def open(self, *args: Any, **kwargs: Any) -> None:
        self.set_nodelay(True)  # Bokeh sends a message as several small frames; don't let Nagle hold them
        self._pump = asyncio.create_task(self._relay_upstream_messages())

    async def on_message(self, message: str | bytes) -> None:
        # Awaiting the upstream send makes tornado wait before reading the next browser message.
        upstream = self._upstream_ws
        if upstream is None or upstream.closed:
            return
        try:
            if isinstance(message, bytes):
                await upstream.send_bytes(message)
            else:
                await upstream.send_str(message)
        except (ConnectionError, aiohttp.ClientError):
            self.close(1011, "dashboard connection lost")

    async def _relay_upstream_messages(self) -> None:
        upstream = self._upstream_ws
        assert upstream is not None
        try:
            async for message in upstream:
                if message.type == aiohttp.WSMsgType.TEXT:
                    await self.write_message(message.data)
                elif message.type == aiohttp.WSMsgType.BINARY:
                    await self.write_message(message.data, binary=True)
                else:
                    break
        except (WebSocketClosedError, StreamClosedError, aiohttp.ClientError, ConnectionError):
            pass
        finally:
            code = upstream.close_code
            self.close(code if code in _SENDABLE_CLOSE_CODES else 1011 if code else 1000, "dashboard closed")
            await upstream.close()

    def on_close(self) -> None:
        upstream = self._upstream_ws
        if upstream is not None and not upstream.closed:
            asyncio.ensure_future(upstream.close())
        # The relay task ends by itself once the upstream socket is closed.


def _upstream_http_error(target: Target, exc: BaseException) -> web.HTTPError:
    if isinstance(exc, TimeoutError) or isinstance(exc, aiohttp.ServerTimeoutError):
        return web.HTTPError(504, f"The dashboard at {target.netloc} did not answer in time.")
    if isinstance(exc, aiohttp.WSServerHandshakeError):
        return web.HTTPError(502, f"The dashboard at {target.netloc} refused the websocket (HTTP {exc.status}).")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return web.HTTPError(502, f"The dashboard at {target.netloc} could not be reached. Is the scheduler running?")
    return web.HTTPError(502, f"The dashboard at {target.netloc} sent a malformed answer.")
