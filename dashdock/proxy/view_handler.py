"""``{base_url}dashdock/view/{target}/{capability}/{path}``: where a dashboard's pages are served.

Authenticated by the capability in the path (capabilities.py), not by Jupyter's cookie, and every
response runs in an opaque origin (a CSP sandbox). A page loads its scripts, JSON and websocket by
relative URLs, so they all carry the capability.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import aiohttp
from jupyter_server.utils import ensure_async, url_path_join

from dashdock.errors import NotAllowed
from dashdock.proxy.bokehjs.serve import IMMUTABLE, StaticAsset
from dashdock.proxy.capabilities import Check, Verdict
from dashdock.proxy.navigation import started_elsewhere
from dashdock.proxy.page.deferral import defer_scripts
from dashdock.proxy.page.script import (
    PAGE_SCRIPT_PATH,
    page_script,
    page_script_gzipped,
    page_script_version,
    script_tag,
    with_proxied_static,
)
from dashdock.proxy.page.spare import SPARE_BOKEHJS, SPARE_PAGE_PATH, spare_page
from dashdock.proxy.relay_handler import RelayHandler

FuncT = TypeVar("FuncT", bound=Callable[..., Any])

try:
    from jupyter_server.auth.decorator import allow_unauthenticated
except ImportError:  # jupyter_server < 2.13 leaves authentication to each handler

    def allow_unauthenticated(method: FuncT) -> FuncT:
        return method


# Every page loads it again (an opaque origin caches nothing): compressed, a third of its size.
_PAGE_SCRIPT = StaticAsset("page.js", page_script_version(), page_script(), {"gzip": page_script_gzipped()})


_SPENT = "This view link was used by its page already; open the plot again from JupyterLab."


def _is_public_asset(path: str) -> bool:
    """BokehJS, Dask's and dashdock's page scripts: the same for every page and every user."""
    return path == PAGE_SCRIPT_PATH or path.startswith(("/static/", "/statics/"))


class ViewHandler(RelayHandler):
    """``dashdock/view/{target}/{capability}/{path}``: a dashboard's pages, in an opaque origin.

    The capability, not Jupyter's cookie, authenticates: a proxied page cannot send the user's
    credentials. A cookie that does come along must belong to the user the capability was minted
    for. An expired capability is renewed for a top-level or frame navigation by a signed-in user
    (a tab left open for hours, a server restart), and refused otherwise. A capability serves one
    page load: its first websocket spends it (capabilities.py).
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
        # A page load whose websocket is open already: its link serves the page's public scripts,
        # and a navigation of the user's own (a link clicked in the page, a reload) gets a new one.
        spent = self._capabilities.spent(check) and not _is_public_asset("/" + rest)
        if check.verdict is not Verdict.VALID or spent:
            if user is not None and (self._may_renew() or (spent and self._navigates_own_page(check))):
                if await ensure_async(self.authorizer.is_authorized(self, user, "read", self.auth_resource)):
                    self.set_header("Cache-Control", "no-store")
                    self.set_header("Referrer-Policy", "no-referrer")
                    self.redirect(self._view_url(segment, rest), status=302)
                    return
            if spent:
                raise NotAllowed(_SPENT)
            if check.verdict is Verdict.EXPIRED:
                raise NotAllowed("This view link has expired; open the plot again from JupyterLab.")
            raise NotAllowed("This is not a valid view link; open the plot from JupyterLab.")
        # A signed-in browser sends its login cookie along: it must be the session the link was
        # minted for. (A request with Jupyter's token has the user's rights anyway.) A request that
        # names credentials which are not this user's (another hub user's token) is refused too:
        # pages never send any (they run in an opaque origin).
        if (
            user is not None
            and not self.token_authenticated
            and self._capabilities.user_tag(user.username) != check.user_tag
        ) or (user is None and "Authorization" in self.request.headers):
            raise NotAllowed("This view link belongs to another user.")
        if (self._is_upgrade or self.request.method not in ("GET", "HEAD")) and not self.check_origin():
            raise NotAllowed("A request from another site is refused.")
        # A page load connects once: a second websocket with its link is someone else's.
        if self._is_upgrade and not self._capabilities.spend(check):
            raise NotAllowed(_SPENT)
        self._route = await self._resolve_route(
            segment,
            url_path_join(self.base_url, "dashdock/view", segment, capability),
            "/" + rest,
            page=not self._is_upgrade,
        )

    def _may_renew(self) -> bool:
        # Only a navigation the user or the Lab started: a page (a popup of a proxied page, another
        # site) cannot have this server mint a link and open the dashboard (navigation.py).
        navigation = self.request.headers.get("Sec-Fetch-Mode") == "navigate"
        if not navigation or self.request.method != "GET" or self._is_upgrade:
            return False
        return not started_elsewhere(self.request.headers)

    def _navigates_own_page(self, check: Check) -> bool:
        """A navigation by the signed-in user the spent link was minted for: the page's own links
        (which its opaque origin marks as started elsewhere) and reloads. Only a browser signed in
        as that user sends the cookie this needs, so a link sent elsewhere opens nothing there."""
        navigation = self.request.headers.get("Sec-Fetch-Mode") == "navigate"
        if not navigation or self.request.method != "GET" or self._is_upgrade or self.token_authenticated:
            return False
        user = self.current_user
        return user is not None and self._capabilities.user_tag(user.username) == check.user_tag

    def check_origin(self, origin_to_satisfy_tornado: str = "") -> bool:
        # Pages here are sandboxed, so their websockets come from the opaque origin "null".
        origin = self.request.headers.get("Origin")
        return origin is None or origin == "null" or self._origin_matches_host(origin)

    def check_xsrf_cookie(self) -> None:
        """The capability in the path does what the XSRF token does: a foreign page cannot know it."""

    @allow_unauthenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self._route.path == PAGE_SCRIPT_PATH:
            self._serve_page_script()
        elif self._route.path == SPARE_PAGE_PATH:
            await self._serve_spare_page()
        else:
            await self._serve()

    def _serve_page_script(self) -> None:
        self.set_header("Content-Type", "text/javascript; charset=UTF-8")
        self.set_header("Cache-Control", IMMUTABLE)  # its URL carries its version
        self.set_header("Vary", "Accept-Encoding")
        self._set_sandbox([])
        encoding, body = _PAGE_SCRIPT.body_for(self.request.headers.get("Accept-Encoding", ""))
        if encoding:
            self.set_header("Content-Encoding", encoding)
        self.finish(body)

    async def _serve_spare_page(self) -> None:
        assets = await self._bokeh_js.local(SPARE_BOKEHJS)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.set_header("Cache-Control", "no-store")  # it names this view's capability
        self._set_sandbox([])
        self.finish(spare_page(self._route.proxy_prefix, [(asset.name, asset.version) for asset in assets]))

    def _page_script_tag(self, response: aiohttp.ClientResponse) -> bytes | None:
        """Every dashboard page shown here gets dashdock's page script (proxy/page/)."""
        is_page = response.status == 200 and response.content_type == "text/html"
        # A compressed page is relayed as it is: it stays a working page, only unthemed.
        if not is_page or "Content-Encoding" in response.headers:
            return None
        return script_tag(self._route.proxy_prefix)

    def _rewrites_page(self) -> bool:
        # In a frame (a Lab pane, an inline plot), BokehJS can come from the Lab (page/deferral.py);
        # a tab has no Lab to give it, and its browser cache works.
        return self.request.method == "GET" and self.request.headers.get("Sec-Fetch-Dest") == "iframe"

    def _rewrite_page(self, page: bytes) -> bytes:
        return defer_scripts(page) or page

    def _rewrites_head(self) -> bool:
        # A Bokeh server's pages link BokehJS root-absolutely; Dask's link it relatively.
        source = self._registry.find(self._route.source_id) if self._route.source_id else None
        return source is not None and source.flavour == "bokeh"

    def _rewrite_head(self, head: bytes) -> bytes:
        if not self._rewrites_head():
            return head
        return with_proxied_static(head, self._route.upstream_root, self._route.proxy_prefix)

    @allow_unauthenticated
    async def head(self, *args: Any) -> None:
        if self._route.path == SPARE_PAGE_PATH:
            # How the Lab checks that a spare's view link still holds before it uses the spare.
            self.set_header("Cache-Control", "no-store")
            self.finish()
            return
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
