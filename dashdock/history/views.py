"""The History view's pages over HTTP, and the scripts they load from this server.

- ``dashdock/api/history/{id}/view/{name}?start=&end=``: a page of pages.py, for the Lab's iframe
  (which sends the user's cookie for the page itself). Pages show text that any code chose (task
  keys), so each runs in a CSP sandbox, as proxied dashboards do: nothing in it can act as the user.
- ``dashdock/bokeh/static/...``: BokehJS of the bokeh installed here, so a page needs no CDN and the
  Lab works offline. ``dashdock/bokeh/page.js``: dashdock's page script (themes pages for dark Lab
  themes). A sandboxed page's requests carry no cookie, so both are served without authentication:
  they are the same public files for everyone, and only scripts and style sheets are served.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jupyter_server.auth.decorator import authorized
from jupyter_server.utils import url_path_join
from tornado import web

from dashdock.history.handlers import REPORT_POLICY, RUN_ID_ARG, HistoryAPIHandler
from dashdock.history.pages import PageAssets, PageLimits, history_page
from dashdock.history.service import HistoryService

FuncT = TypeVar("FuncT", bound=Callable[..., Any])

try:
    from jupyter_server.auth.decorator import allow_unauthenticated
except ImportError:  # jupyter_server < 2.13 leaves authentication to each handler

    def allow_unauthenticated(method: FuncT) -> FuncT:
        return method


# The URL names the content (bokeh's version, the script's hash), so it can never go stale.
IMMUTABLE = "public, max-age=31536000, immutable"
STATIC_SUFFIXES = (".js", ".css")
# Any lowercase name is routed, so an unknown page gets the API's JSON 404 (pages.py decides).
_NAME_ARG = r"(?P<name>[a-z-]{1,40})"


def bokeh_static_dir() -> Path:
    import bokeh

    return Path(bokeh.__file__).parent / "server" / "static"


def bokeh_version() -> str:
    import bokeh

    return str(bokeh.__version__)


@functools.cache
def bokehjs_versions() -> dict[str, str]:
    """``js/<file>`` -> sha512 of each local BokehJS file (read once, a few MB: call it in a thread)."""
    files = (bokeh_static_dir() / "js").glob("bokeh*.min.js")
    return {f"js/{path.name}": hashlib.sha512(path.read_bytes()).hexdigest() for path in files}


# Makes a framed page's scripts wait for BokehJS from the Lab (proxy/page/deferral.py, handed in
# by the app); None when the page links no BokehJS.
Deferral = Callable[[bytes], bytes | None]


class PageHandler(HistoryAPIHandler):
    """``.../history/{id}/view/{name}``: one page of a run's History view, sandboxed."""

    def initialize(  # type: ignore[override]
        self, history: HistoryService, script_version: str, limits: PageLimits, defer: Deferral
    ) -> None:
        super().initialize(history)
        self.script_version = script_version
        self.limits = limits
        self.defer = defer

    @web.authenticated
    @authorized
    async def get(self, run_id: str, name: str) -> None:
        run = await self.history.find(run_id)
        start, end = self.window()
        assets = PageAssets(
            bokeh_root=url_path_join(self.base_url, "dashdock/bokeh/"),
            bokeh_version=bokeh_version(),
            page_script=url_path_join(self.base_url, f"dashdock/bokeh/page.js?v={self.script_version}"),
            file_versions=await asyncio.to_thread(bokehjs_versions),
        )
        limits = self.limits
        page = await self.history.read(
            lambda store: history_page(store, run.id, name, start, end, assets, limits)
        )
        self.set_header("Content-Security-Policy", REPORT_POLICY)
        self.set_header("Cache-Control", "no-store")  # a live run's pages change
        # Jupyter's APIHandler.finish sets the type it is given, JSON unless told.
        body = page.encode()
        if self.request.headers.get("Sec-Fetch-Dest") == "iframe":
            # A History view's frame is an opaque origin too: its BokehJS comes from the Lab.
            body = self.defer(body) or body
        self.finish(body, set_content_type="text/html; charset=UTF-8")


class PageScriptHandler(web.RequestHandler):
    """``dashdock/bokeh/page.js``: dashdock's page script, for pages that send no cookie."""

    def initialize(self, body: bytes, version: str) -> None:
        self.body = body
        self.version = version

    @allow_unauthenticated
    def get(self) -> None:
        self.set_header("Content-Type", "text/javascript; charset=UTF-8")
        self.set_header("X-Content-Type-Options", "nosniff")
        if self.get_query_argument("v", "") == self.version:
            self.set_header("Cache-Control", IMMUTABLE)
        else:
            self.set_header("Cache-Control", "no-cache")
        self.finish(self.body)


class BokehStaticHandler(web.StaticFileHandler):
    """``dashdock/bokeh/static/{path}``: bokeh's own static directory, its scripts and style sheets only."""

    @allow_unauthenticated
    async def get(self, path: str, include_body: bool = True) -> None:
        if not path.endswith(STATIC_SUFFIXES) or any(part in ("", ".", "..") for part in path.split("/")):
            raise web.HTTPError(404)
        await super().get(path, include_body)

    @allow_unauthenticated
    async def head(self, path: str) -> None:
        await self.get(path, include_body=False)

    def validate_absolute_path(self, root: str, absolute_path: str) -> str | None:
        # Beyond tornado's check: no link inside the directory may lead out of it.
        real_root = os.path.realpath(root)
        if not os.path.realpath(absolute_path).startswith(real_root + os.sep):
            raise web.HTTPError(404)
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("X-Content-Type-Options", "nosniff")
        version = self.get_query_argument("v", "")
        # The page that links a file hashed them first (in a thread), so this reads a cache.
        if version == bokeh_version() or version == bokehjs_versions().get(path):
            self.set_header("Cache-Control", IMMUTABLE)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.finish(f"{status_code}: {self._reason}")


def routes(
    history: HistoryService, page_script: bytes, defer: Deferral, limits: PageLimits | None = None
) -> list[tuple[str, type[web.RequestHandler], dict[str, object]]]:
    """The History view's routes; ``page_script`` is dashdock's page script and ``defer`` its
    deferral of a framed page's scripts (proxy/page/)."""
    version = hashlib.sha256(page_script).hexdigest()[:16]
    return [
        (
            rf"/dashdock/api/history/{RUN_ID_ARG}/view/{_NAME_ARG}",
            PageHandler,
            {"history": history, "script_version": version, "limits": limits or PageLimits(), "defer": defer},
        ),
        (r"/dashdock/bokeh/page\.js", PageScriptHandler, {"body": page_script, "version": version}),
        (r"/dashdock/bokeh/static/(.*)", BokehStaticHandler, {"path": str(bokeh_static_dir())}),
    ]
