"""Relay of a dashboard's HTTP and websockets, behind two kinds of URL.

- ``{base_url}dashdock/proxy/{target}/{path}``, the link form (panes, kernels' ``dashboard_link``,
  worker pages): authenticated by Jupyter. A page request is answered with a redirect to its view
  URL, never with the dashboard's content, which must not run with the user's session. Websocket
  upgrades are relayed for programs that hold Jupyter's token (a browser page's foreign Origin is
  refused).
- ``{base_url}dashdock/view/{target}/{capability}/{path}``, where pages are served: authenticated by
  the capability in the path (capabilities.py), not by Jupyter's cookie, and every response runs
  in an opaque origin (a CSP sandbox). A page loads its scripts, JSON and websocket by relative
  URLs, so they all carry the capability.

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

from dashdock.panes.state import PaneRegistry
from dashdock.proxy.bokehjs.serve import IMMUTABLE, LocalBokehJS, StaticAsset
from dashdock.proxy.capabilities import Capabilities, Verdict
from dashdock.proxy.headers import (
    ERROR_PAGE_POLICY,
    confine_cookie,
    content_security_policies,
    passed_response_headers,
    query_without_credentials,
    rewrite_location,
    upstream_query,
    upstream_request_headers,
)
from dashdock.proxy.websocket.relay import WebSocketRelayMixin
from dashdock.sources.registry import SourceError, SourceRegistry
from dashdock.targets import Allowlist, Target, TargetError, parse_target_segment
from dashdock.upstream import UpstreamClient, as_http_error

try:
    from jupyter_server.auth.decorator import allow_unauthenticated
except ImportError:  # jupyter_server < 2.13 leaves authentication to each handler

    def allow_unauthenticated(method: Any) -> Any:  # type: ignore[no-redef]
        return method


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


class RelayHandler(WebSocketRelayMixin, JupyterHandler, WebSocketHandler):
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
        capabilities: Capabilities,
    ) -> None:
        self._registry = registry
        self._panes = panes
        self._bokeh_js = bokeh_js
        self._client = client
        self._allowlist = allowlist
        self._proxy = proxy
        self._capabilities = capabilities

    # -- routing ---------------------------------------------------------------------------

    @property
    def _is_upgrade(self) -> bool:
        return self.request.headers.get("Upgrade", "").lower() == "websocket"

    def _refuse_service_worker(self) -> None:
        # A service worker registered from a proxied script could serve any page under its
        # scope; opaque origins cannot register one, and its script is never served either.
        if "Service-Worker" in self.request.headers:
            raise web.HTTPError(403, "dashdock never serves a service worker script.")

    def _path_below(self, prefix: str) -> tuple[str, str]:
        """The target segment and the rest of the raw path after ``{base_url}{prefix}``."""
        root_prefix = url_path_join(self.base_url, prefix)
        raw_path = self.request.path
        if not raw_path.startswith(root_prefix):
            raise web.HTTPError(404)
        segment, _, below = raw_path[len(root_prefix) :].partition("/")
        return segment, below

    def _resolve_route(self, segment: str, proxy_prefix: str, path: str) -> Route:
        if _SOURCE_ID_RE.match(segment):
            try:
                source = self._registry.get(segment)
            except SourceError as exc:  # unknown (404) or saved but unusable now (409, with why)
                raise web.HTTPError(exc.status, exc.reason.replace("%", "%%")) from exc
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

    def _view_url(self, segment: str, below: str) -> str:
        """Where a page of ``segment`` is served, with a capability minted for the current user."""
        capability = self._capabilities.mint(segment, self.current_user.username)
        query = query_without_credentials(self.request.query)
        url = url_path_join(self.base_url, "dashdock/view", segment, capability) + "/" + below
        return url + (f"?{query}" if query else "")

    @property
    def route(self) -> Route:
        return self._route

    def _upstream_url(self) -> URL:
        query = upstream_query(self.request.query)
        return URL(self._route.upstream_url + (f"?{query}" if query else ""), encoded=True)

    # -- HTTP ------------------------------------------------------------------------------

    async def _serve(self) -> None:
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
        self._set_sandbox([])
        encoding, body = asset.body_for(self.request.headers.get("Accept-Encoding", ""))
        if encoding:
            self.set_header("Content-Encoding", encoding)
        self.finish(body)

    def _set_sandbox(self, upstream_policies: list[str]) -> None:
        self.clear_header("Content-Security-Policy")
        for policy in content_security_policies(upstream_policies):
            self.add_header("Content-Security-Policy", policy)
        # A view URL is a capability: it must not leave in a Referer.
        self.set_header("Referrer-Policy", "no-referrer")

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
        self._set_sandbox(response.headers.getall("Content-Security-Policy", []))
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
        self.set_header("Content-Security-Policy", ERROR_PAGE_POLICY)
        self.set_header("Referrer-Policy", "no-referrer")
        self.finish(
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dashdock</title></head>"
            "<body style='font-family: sans-serif; padding: 1em'>"
            f"<h3>dashdock: {status_code} {html.escape(self._reason)}</h3>"
            f"<p class='jp-dashdock-error'>{html.escape(message)}</p></body></html>"
        )


class ProxyHandler(RelayHandler):
    """``dashdock/proxy/{target}/{path}``: Jupyter-authenticated links to a dashboard.

    A page is answered with a redirect to its view URL; only websockets are relayed here.
    """

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
        self._refuse_service_worker()
        segment, below = self._path_below("dashdock/proxy/")
        self._segment, self._below = segment, below
        self._route = self._resolve_route(
            segment, url_path_join(self.base_url, "dashdock/proxy", segment), "/" + below
        )

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self._is_upgrade:
            await self._open_websocket()
        else:
            self._redirect_to_view()

    async def head(self, *args: Any) -> None:
        self._redirect_to_view()

    def _redirect_to_view(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        self.redirect(self._view_url(self._segment, self._below), status=302)

    async def post(self, *args: Any) -> None:
        self._only_pages()

    async def put(self, *args: Any) -> None:
        self._only_pages()

    async def patch(self, *args: Any) -> None:
        self._only_pages()

    async def delete(self, *args: Any) -> None:
        self._only_pages()

    def _only_pages(self) -> None:
        raise web.HTTPError(
            405, "Proxy links only open pages; a page's own requests go to its dashdock/view/ URL."
        )


class ViewHandler(RelayHandler):
    """``dashdock/view/{target}/{capability}/{path}``: a dashboard's pages, in an opaque origin.

    The capability, not Jupyter's cookie, authenticates: a proxied page cannot send the user's
    credentials. A cookie that does come along must belong to the user the capability was minted
    for. An expired capability is renewed for a top-level or frame navigation by a signed-in user
    (a tab left open for hours, a server restart), and refused otherwise.
    """

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare(_redirect_to_login=False)
        if self._finished:
            return
        self._refuse_service_worker()
        segment, below = self._path_below("dashdock/view/")
        capability, _, rest = below.partition("/")
        check = self._capabilities.check(capability, segment)
        user = self.current_user
        if check.verdict is not Verdict.VALID:
            if self._may_renew() and user is not None:
                if await ensure_async(self.authorizer.is_authorized(self, user, "read", self.auth_resource)):
                    self.set_header("Cache-Control", "no-store")
                    self.set_header("Referrer-Policy", "no-referrer")
                    self.redirect(self._view_url(segment, rest), status=302)
                    return
            if check.verdict is Verdict.EXPIRED:
                raise web.HTTPError(403, "This view link has expired; open the plot again from JupyterLab.")
            raise web.HTTPError(403, "This is not a valid view link; open the plot from JupyterLab.")
        # A signed-in browser sends its login cookie along: it must be the session the link was
        # minted for. (A request with Jupyter's token has the user's rights anyway.)
        if (
            user is not None
            and not self.token_authenticated
            and self._capabilities.user_tag(user.username) != check.user_tag
        ):
            raise web.HTTPError(403, "This view link belongs to another user.")
        if self.request.method not in ("GET", "HEAD") and not self.check_origin():
            raise web.HTTPError(403, "A request from another site is refused.")
        self._route = self._resolve_route(
            segment, url_path_join(self.base_url, "dashdock/view", segment, capability), "/" + rest
        )

    def _may_renew(self) -> bool:
        navigation = self.request.headers.get("Sec-Fetch-Mode") == "navigate"
        return navigation and self.request.method == "GET" and not self._is_upgrade

    def check_origin(self, origin_to_satisfy_tornado: str = "") -> bool:
        # Pages here are sandboxed, so their websockets come from the opaque origin "null".
        origin = self.request.headers.get("Origin")
        return origin is None or origin == "null" or self._origin_matches_host(origin)

    def check_xsrf_cookie(self) -> None:
        """The capability in the path does what the XSRF token does: a foreign page cannot know it."""

    @allow_unauthenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        await self._serve()

    @allow_unauthenticated
    async def head(self, *args: Any) -> None:
        await self._relay_http()

    @allow_unauthenticated
    async def post(self, *args: Any) -> None:
        await self._relay_http()

    @allow_unauthenticated
    async def put(self, *args: Any) -> None:
        await self._relay_http()

    @allow_unauthenticated
    async def patch(self, *args: Any) -> None:
        await self._relay_http()

    @allow_unauthenticated
    async def delete(self, *args: Any) -> None:
        await self._relay_http()
