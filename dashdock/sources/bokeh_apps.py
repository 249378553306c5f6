"""Bokeh servers as sources: ``bokeh serve`` / ``panel serve`` and the plots a kernel publishes.

A Bokeh server lists its applications at its root: one application redirects there, several are
linked from an index page. Each application is a plot of the source, served through the same
isolated proxy and websocket relay as Dask's plots.
"""

from __future__ import annotations

import html
import re
from urllib.parse import urljoin, urlsplit

from dashdock.sources.catalog import Plot
from dashdock.sources.probe import root_candidates
from dashdock.targets import DashboardURL
from dashdock.upstream import UpstreamClient, UpstreamError

GROUP = "apps"
MAX_APPS = 100
# A link and its text: the text names the application (a published plot's own name).
_LINK = re.compile(r"""<a\b[^>]*?href\s*=\s*["']([^"'<>\s]{1,300})["'][^>]*>(.{0,400}?)</a>""", re.I | re.S)
_TAG = re.compile(r"<[^>]*>")
MAX_NAME_CHARS = 100
_APP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_NOT_APPS = {"static", "favicon.ico", "robots.txt"}
_REDIRECTS = {301, 302, 303, 307, 308}


async def bokeh_apps(client: UpstreamClient, root: DashboardURL) -> list[Plot]:
    """The applications the Bokeh server at ``root`` lists; raises ``UpstreamError`` as a probe does."""
    try:
        index = await client.get_text(root.url + "/")
    except UpstreamError as exc:
        if exc.status in _REDIRECTS and exc.location:
            only = _app_path(root, exc.location)
            return [_plot(only, only.lstrip("/"))] if only else []
        raise
    found: dict[str, str] = {}  # path -> name
    for href, text in _LINK.findall(index):
        path = _app_path(root, href)
        if path and path not in found:
            name = " ".join(html.unescape(_TAG.sub("", text)).split())
            found[path] = name if 0 < len(name) <= MAX_NAME_CHARS else path.lstrip("/")
    return [_plot(path, name) for path, name in list(found.items())[:MAX_APPS]]


async def find_bokeh_root(client: UpstreamClient, typed: DashboardURL) -> DashboardURL | None:
    """The root of the Bokeh server a typed URL (its root or an application) belongs to, if it is one."""
    for candidate in root_candidates(typed.path):
        root = DashboardURL(typed.target, candidate)
        try:
            apps = await bokeh_apps(client, root)
            if apps and _is_bokeh_page(await client.get_text(root.url + apps[0].path)):
                return root
        except UpstreamError as exc:
            if exc.unreachable:
                return None
    return None


async def bokeh_alive(client: UpstreamClient, root: DashboardURL) -> None:
    """Raise ``UpstreamError`` unless the server answers at its root (a redirect to its app is fine)."""
    try:
        await client.get_text(root.url + "/")
    except UpstreamError as exc:
        if exc.status not in _REDIRECTS:
            raise


def _is_bokeh_page(page: str) -> bool:
    return "Bokeh" in page and "static/js/bokeh" in page


def _app_path(root: DashboardURL, href: str) -> str | None:
    """'/sliders' when ``href`` names an application right below the root on the same server."""
    base = root.url + "/"
    resolved = urlsplit(urljoin(base, href))
    if (resolved.scheme, resolved.netloc) != urlsplit(base)[:2] or resolved.query:
        return None
    prefix = root.path + "/"
    if not resolved.path.startswith(prefix):
        return None
    name = resolved.path[len(prefix) :].rstrip("/")
    if not _APP_NAME.match(name) or ".." in name or name in _NOT_APPS:
        return None
    return "/" + name


def _plot(path: str, name: str) -> Plot:
    return Plot(name=name, group=GROUP, path=path)
