"""The base of the proxy's handlers: routing, the HTTP relay, websocket upgrades, error pages.

One handler serves both protocols, since a Bokeh page and its ``/ws`` share a URL prefix. The
two URL families (link_handler.py, view_handler.py) differ in how a request is authenticated and
what it may do; relaying is the same. The relay authenticates every request and upgrade (in the
subclass's ``prepare``) before it opens anything upstream, streams bodies with backpressure,
forwards both Bokeh subprotocols, and closes each websocket side with the other.
"""

from __future__ import annotations

import html
from typing import Any

import aiohttp
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web
from tornado.iostream import IOStream, StreamClosedError
from yarl import URL

from dashdock.errors import NotAllowed, Unavailable
from dashdock.http import DomainErrors
from dashdock.ids import is_pane_id
from dashdock.panes.state import PANE_QUERY_KEY
from dashdock.proxy.bokehjs.serve import IMMUTABLE, LocalBokehJS, StaticAsset
from dashdock.proxy.capabilities import Capabilities
from dashdock.proxy.drawn import DrawnPlot, DrawnPlots, drawn_route
from dashdock.proxy.headers import (
    ERROR_PAGE_POLICY,
    confine_cookie,
    confinement_policy,
    content_security_policies,
    passed_response_headers,
    query_without_credentials,
    readable_picture,
    rewrite_location,
    upstream_query,
    upstream_request_headers,
)
from dashdock.proxy.page.script import with_script
from dashdock.proxy.routing import Route, resolve_route
from dashdock.proxy.scrub import BodyScrubber, carries, clean_location, is_text, secret_forms
from dashdock.proxy.services import ProxyServices
from dashdock.proxy.session_tokens import SessionTokens
from dashdock.proxy.websocket.relay import RelayRequest, WebSocketRelay
from dashdock.proxy.websocket.upgrade import SUPPORTED_VERSION, UnsupportedVersion, checked_subprotocols
from dashdock.proxy.websocket.upstream import accept_value
from dashdock.sources.registry import SourceRegistry
from dashdock.targets import Allowlist
from dashdock.upstream import UpstreamClient, relay_failure

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_HEAD_BYTES = 64 * 1024  # of a page gathered before it is sent on (its head, normally a few KiB)
MAX_PAGE_BYTES = 256 * 1024  # of a page gathered whole (a Bokeh page is a few KiB: its data comes later)


class RelayHandler(DomainErrors, JupyterHandler):
    """One handler for both protocols: the Bokeh page and its ``/ws`` share a URL prefix."""

    auth_resource = "dashdock"
    # Where the request goes: resolved by each subclass's ``prepare`` before anything is relayed.
    _route: Route

    def initialize(self, services: ProxyServices) -> None:
        self._registry: SourceRegistry = services.registry
        self._bokeh_js: LocalBokehJS = services.bokeh_js
        self._client: UpstreamClient = services.client
        self._allowlist: Allowlist = services.allowlist
        self._proxy = services.settings
        self._websockets: WebSocketRelay = services.websockets
        self._capabilities: Capabilities = services.capabilities
        self._tokens: SessionTokens = services.tokens
        self._plots: DrawnPlots | None = services.drawn
        self._drawn: DrawnPlot | None = None  # set when the route goes to dashdock's plot server

    # -- routing ---------------------------------------------------------------------------

    @property
    def _is_upgrade(self) -> bool:
        return self.request.headers.get("Upgrade", "").lower() == "websocket"

    def _refuse_service_worker(self) -> None:
        # A service worker registered from a proxied script could serve any page under its
        # scope; opaque origins cannot register one, and its script is never served either.
        if "Service-Worker" in self.request.headers:
            raise NotAllowed("dashdock never serves a service worker script.")

    def _path_below(self, prefix: str) -> tuple[str, str]:
        """The target segment and the rest of the raw path after ``{base_url}{prefix}``."""
        root_prefix = url_path_join(self.base_url, prefix)
        raw_path = self.request.path
        if not raw_path.startswith(root_prefix):
            raise web.HTTPError(404)
        segment, _, below = raw_path[len(root_prefix) :].partition("/")
        return segment, below

    async def _resolve_route(self, segment: str, proxy_prefix: str, path: str, page: bool) -> Route:
        """Where ``path`` goes; a ``page`` a pane shows waits until it is known where it is drawn."""
        route = resolve_route(self._registry, self._allowlist, segment, proxy_prefix, path)
        drawn = await drawn_route(route, self._plots, page)
        if drawn is None:
            return route
        route, self._drawn = drawn
        return route

    def _view_url(self, segment: str, below: str) -> str:
        """Where a page of ``segment`` is served, with a capability minted for the current user."""
        capability = self._capabilities.mint(segment, self.current_user.username)
        query = query_without_credentials(self.request.query)
        url = url_path_join(self.base_url, "dashdock/view", segment, capability) + "/" + below
        return url + (f"?{query}" if query else "")

    async def _upstream(self) -> tuple[URL, dict[str, str]]:
        """Where the request goes and the headers it takes, with the credentials of the dashboard's
        server when the user gave some (sources/credentials.py): added here, and cleaned out of
        what comes back (scrub.py)."""
        query = upstream_query(self.request.query)
        headers = upstream_request_headers(self.request.headers)
        if self._drawn is not None:  # dashdock's plot server: the run it draws, and its secret
            guard = self._client.credential_guard
            if guard is not None and not await guard(self._route.target.origin):
                # The recorder ended and someone else listens on its port: nothing goes there.
                raise Unavailable("dashdock's plot server is not running; reload the pane.")
            query = self._drawn.query + (f"&{query}" if query else "")
            name, secret = self._drawn.header
            # Uncompressed, so the answer can be checked for the secret (scrub.py).
            headers = {**headers, name: secret, "Accept-Encoding": "identity"}
            return URL(self._route.upstream_url + f"?{query}", encoded=True), headers
        url = self._route.upstream_url + (f"?{query}" if query else "")
        url, headers = await self._client.with_credentials(url, headers)
        return URL(url, encoded=True), headers

    def _credential_forms(self) -> tuple[list[bytes], str | None]:
        """How the held credential may be spelled in an answer, and its query name if it is one."""
        if self._drawn is not None:  # the plot server's secret never reaches a page either
            return secret_forms(self._drawn.header[1]), None
        credential = self._client.credential_for(self._route.target.origin + "/")
        if credential is None:
            return [], None
        return secret_forms(credential.value), credential.name if credential.kind == "query" else None

    def _scrubber(self, response: aiohttp.ClientResponse) -> BodyScrubber | None:
        """What cleans this response's body, or None when it passes as it is (not text)."""
        if not is_text(response.content_type):
            return None
        forms, _ = self._credential_forms()
        if "Content-Encoding" in response.headers and response.headers["Content-Encoding"] != "identity":
            if forms:  # asked for uncompressed (upstream.py): what cannot be checked does not pass
                raise Unavailable(
                    f"The dashboard at {self._route.target.netloc} sent a compressed page although "
                    "asked not to; dashdock cannot check it for the credentials it holds."
                )
            return None
        route = self._route
        return BodyScrubber(forms, self._tokens, route.target.origin + route.upstream_root)

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
        hosts = [self.request.host, self.request.headers.get("X-Forwarded-Host", "").split(",")[0].strip()]
        self.add_header("Content-Security-Policy", confinement_policy(hosts, self._route.proxy_prefix))
        # A view URL is a capability: it must not leave in a Referer.
        self.set_header("Referrer-Policy", "no-referrer")

    async def _relay_http(self) -> None:
        route = self._route
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._proxy.connect_timeout, sock_read=self._proxy.read_timeout
        )
        method = self.request.method or "GET"
        body = self.request.body if method in _BODY_METHODS else None
        url, headers = await self._upstream()
        try:
            async with self._client.session.request(
                method,
                url,
                headers=headers,
                data=body,
                allow_redirects=False,
                timeout=timeout,
            ) as response:
                scrubber = self._scrubber(response)
                self._start_response(response, rewritten=scrubber is not None)
                if method == "HEAD" or response.status in (204, 304):
                    return
                tag = self._page_script_tag(response)
                if tag is not None:
                    await self._relay_page(response, tag, scrubber)
                    return
                async for chunk in response.content.iter_any():
                    self.write(scrubber.feed(chunk) if scrubber is not None else chunk)
                    await self.flush()
                if scrubber is not None:
                    self.write(scrubber.finish())
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
            raise relay_failure(route.target, exc) from None

    def _page_script_tag(self, response: aiohttp.ClientResponse) -> bytes | None:
        """The script tag to add to this response, or None to relay it as it is (the default)."""
        return None

    async def _relay_page(
        self, response: aiohttp.ClientResponse, tag: bytes, scrubber: BodyScrubber | None
    ) -> None:
        """An HTML page with ``tag`` put into its first chunk, streamed as the dashboard sends it.

        A page whose head ``_rewrite_head`` changes has its head gathered first (up to
        ``MAX_HEAD_BYTES``, then it goes as it is), so that a link is never split between chunks.
        A page whose scripts ``_rewrite_page`` defers is gathered whole (up to ``MAX_PAGE_BYTES``,
        then it goes unchanged but for the head): deferring part of a page would break it.
        """
        self.clear_header("Content-Length")  # the page grows by the tag
        held: bytearray | None = bytearray()
        whole = self._rewrites_page()
        head = self._rewrites_head()
        async for received in response.content.iter_any():
            chunk = scrubber.feed(received) if scrubber is not None else received
            if held is None:
                self.write(chunk)
            else:
                held += chunk
                if not held:  # all of it held back by the scrubber: wait for more
                    continue
                if whole and len(held) < MAX_PAGE_BYTES:
                    continue
                if head and not whole and b"</head>" not in held.lower() and len(held) < MAX_HEAD_BYTES:
                    continue
                self.write(with_script(self._rewrite_head(bytes(held)), tag))
                held = None
            await self.flush()
        rest = scrubber.finish() if scrubber is not None else b""
        if held is not None:  # the whole page, short or empty: it still gets the script
            page = self._rewrite_head(bytes(held + rest))
            self.write(with_script(self._rewrite_page(page) if whole else page, tag))
        elif rest:
            self.write(rest)

    def _rewrites_page(self) -> bool:
        """Whether ``_rewrite_page`` changes this response's page (view_handler.py)."""
        return False

    def _rewrite_page(self, page: bytes) -> bytes:
        """A whole page, changed on its way to the browser."""
        return page

    def _rewrites_head(self) -> bool:
        """Whether ``_rewrite_head`` changes this route's pages (view_handler.py); most it does not."""
        return False

    def _rewrite_head(self, head: bytes) -> bytes:
        """What a page's head needs changed to work through the proxy."""
        return head

    def _start_response(self, response: aiohttp.ClientResponse, rewritten: bool) -> None:
        """Status and headers; a header or cookie that carries the held credential is dropped, a
        redirect loses it. ``rewritten``: the body changes on the way (no Content-Length)."""
        route = self._route
        forms, query_name = self._credential_forms()
        self.set_status(response.status, response.reason)
        self.clear_header("Content-Type")
        for name, value in passed_response_headers(response.headers):
            if not carries(value, forms) and not (rewritten and name.lower() == "content-length"):
                self.add_header(name, value)
        self._set_sandbox(response.headers.getall("Content-Security-Policy", []))
        if readable_picture(response.headers.get("Content-Type", "")):
            self.set_header("Access-Control-Allow-Origin", "*")
        for raw in response.headers.getall("Set-Cookie", []):
            cookie = confine_cookie(raw, route.proxy_prefix)
            if cookie is not None and not carries(raw, forms):
                self.add_header("Set-Cookie", cookie)
        location = response.headers.get("Location")
        if location is not None:
            upstream_url = str(response.url)
            if query_name is not None:  # the request's own URL had the credential added
                upstream_url = clean_location(upstream_url, forms, query_name)
            moved = rewrite_location(
                location, route.target, route.upstream_root, upstream_url, route.proxy_prefix
            )
            if moved is None:
                raise Unavailable("The dashboard redirected to another host; dashdock does not follow it.")
            self.set_header("Location", clean_location(moved, forms, query_name))

    # -- websockets ------------------------------------------------------------------------

    async def _open_websocket(self) -> None:
        # Refuse a foreign Origin (cross-site websocket hijacking) before connecting upstream.
        # tornado 6.6 adds a Sec-Fetch-Site check to its own websocket upgrade; this relay answers
        # the upgrade itself, so it runs that check here.
        origin = self.request.headers.get("Origin", "")
        if not self.check_origin(origin) or self._check_cross_origin(self.check_origin) is not None:
            raise NotAllowed("Cross-origin websocket refused.")
        try:
            protocols = checked_subprotocols(self.request.headers)
        except UnsupportedVersion:
            self.set_status(426, "Upgrade Required")
            self.set_header("Sec-WebSocket-Version", SUPPORTED_VERSION)
            self.finish()
            return
        pane_id = self.get_query_argument(PANE_QUERY_KEY, "")
        url, headers = await self._upstream()
        # A page holds a stand-in for its Bokeh session token (session_tokens.py): the dashboard
        # gets its own token back, and only the dashboard it was minted for.
        dashboard = self._route.target.origin + self._route.upstream_root
        protocols = [self._tokens.original(protocol, dashboard) for protocol in protocols]
        request = RelayRequest(
            target=self._route.target,
            request_target=url.raw_path_qs,
            subprotocols=protocols,
            headers=headers,
            pane_id=pane_id if is_pane_id(pane_id) else None,
            source_id=self._route.source_id,
            path=self._route.path,
            drawn=self._drawn is not None,
        )
        await self._websockets.open(request, self._accept_upgrade)

    def _accept_upgrade(self, subprotocol: str | None) -> IOStream:
        """Answer the browser's upgrade with the subprotocol the dashboard chose; returns its stream."""
        self.clear_header("Content-Type")
        self.set_status(101)
        self.set_header("Upgrade", "websocket")
        self.set_header("Connection", "Upgrade")
        self.set_header("Sec-WebSocket-Accept", accept_value(self.request.headers["Sec-WebSocket-Key"]))
        if subprotocol is not None:
            self.set_header("Sec-WebSocket-Protocol", subprotocol)
        self.finish()
        # Synchronously after finish(), as tornado's websocket does: HTTP processing stops here.
        return self.detach()

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
