"""``{base_url}dashdock/proxy/{target}/{path}``: the link form of a dashboard page.

Authenticated by Jupyter (panes, kernels' ``dashboard_link``, worker pages, Dask's "Launch
dashboard"). A page request is answered with a redirect to its view URL (view_handler.py), never
with the dashboard's content, which must not run with the user's session. Websocket upgrades are
relayed here for programs that hold Jupyter's token; a browser page's foreign Origin is refused.
A navigation started by another site or a proxied page (a popup) is asked to confirm first
(navigation.py).
"""

from __future__ import annotations

from typing import Any

from jupyter_server.utils import ensure_async, url_path_join
from tornado import web

from dashdock.proxy.navigation import CONFIRMATION_POLICY, confirmation_page, started_elsewhere
from dashdock.proxy.relay_handler import RelayHandler


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
        self._route = await self._resolve_route(
            segment,
            url_path_join(self.base_url, "dashdock/proxy", segment),
            "/" + below,
            page=False,  # a page here is only redirected to its view URL, which waits
        )

    async def get(self, *args: Any, **kwargs: Any) -> None:
        if self._is_upgrade:
            await self._open_websocket()
        elif started_elsewhere(self.request.headers):
            self._ask_first()
        else:
            self._redirect_to_view()

    async def head(self, *args: Any) -> None:
        self._redirect_to_view()

    def _ask_first(self) -> None:
        """A navigation another site (or a proxied page) started: the user confirms it first, so
        that no page can make this server open a dashboard, with its credentials, by itself."""
        self.set_header("Cache-Control", "no-store")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("Content-Security-Policy", CONFIRMATION_POLICY)
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(confirmation_page(self._route.target.netloc, self.request.uri or ""))

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
