"""Relay of a dashboard's HTTP and websockets under ``{base_url}dashdock/proxy/{target}/{path}``.

``{target}`` is a source id (the registry decides where it points, so panes follow a source
that moves) or a literal ``host:port`` that a source or the allowlist permits. The relay
authenticates every request and upgrade before it opens anything upstream, streams bodies
with backpressure, forwards both Bokeh subprotocols, and closes each websocket side with the other.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import aiohttp
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import ensure_async, url_path_join
from tornado import web
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketHandler
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
from .panes import PaneRegistry
from .registry import SourceError, SourceRegistry
from .targets import Allowlist, Target, TargetError, parse_target_segment
from .upstream import UpstreamClient, as_http_error
from .ws_relay import WebSocketRelayMixin

_SOURCE_ID_RE = re.compile(r"^[a-z0-9-]{1,64}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


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
    source_id: str | None  # the registered source, when the path named one

    @property
    def upstream_url(self) -> str:
        return self.target.origin + self.upstream_root + self.path


class ProxyHandler(WebSocketRelayMixin, JupyterHandler, WebSocketHandler):
    """One handler for both protocols: the Bokeh page and its ``/ws`` share a URL prefix."""

    auth_resource = "dashdock"

    def initialize(
        self,
        registry: SourceRegistry,
        client: UpstreamClient,
        allowlist: Allowlist,
        proxy: ProxySettings,
        bokeh_js: LocalBokehJS,
        panes: PaneRegistry,
    ) -> None:
        self._registry = registry
        self._panes = panes
        self._bokeh_js = bokeh_js
        self._client = client
        self._allowlist = allowlist
        self._proxy = proxy

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
        if not await ensure_async(
            self.authorizer.is_authorized(self, self.current_user, action, self.auth_resource)
        ):
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
            return Route(source.target, source.root_path, proxy_prefix, path, source.id)
        try:
            target = parse_target_segment(segment)
        except TargetError as exc:
            raise web.HTTPError(400, str(exc)) from exc
        if not (self._registry.knows_target(target) or self._allowlist.allows(target)):
            raise web.HTTPError(
                403, f"{target.netloc} is not an allowed target; see c.DashdockApp.allowed_targets."
            )
        return Route(target, "", proxy_prefix, path, None)

    @property
    def route(self) -> Route:
        return self._route

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
        encoding, body = asset.body_for(self.request.headers.get("Accept-Encoding", ""))
        if encoding:
            self.set_header("Content-Encoding", encoding)
        self.finish(body)

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
                self.log.info(
                    "dashdock: upstream %s failed mid-response: %s", route.target.netloc, type(exc).__name__
                )
                self.request.connection.close()  # type: ignore[union-attr]
                return
            raise as_http_error(route.target, exc) from None

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
                raise web.HTTPError(
                    502, "The dashboard redirected to another host; dashdock does not follow it."
                )
            self.set_header("Location", rewritten)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """A short page that a pane can show; the message is escaped and never echoes the request."""
        exc_info = kwargs.get("exc_info")
        message = self._reason
        if exc_info and isinstance(exc_info[1], web.HTTPError) and exc_info[1].log_message:
            message = (
                exc_info[1].log_message % exc_info[1].args if exc_info[1].args else exc_info[1].log_message
            )
        self.clear_header("Content-Type")
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header(
            "Content-Security-Policy", FRAME_POLICY + "; default-src 'none'; style-src 'unsafe-inline'"
        )
        self.finish(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dashdock</title></head>"
            "<body style='font-family: sans-serif; padding: 1em'>"
            f"<h3>dashdock: {status_code} {html.escape(self._reason)}</h3>"
            f"<p class='jp-dashdock-error'>{html.escape(message)}</p></body></html>"
        )
