"""``{base_url}dashdock/bokehjs/{file}?v={sha512}``: the local BokehJS, for the Lab itself.

A pane's page runs in an opaque origin, whose cache the browser does not keep: the Lab fetches
BokehJS here instead, in its own origin, where the cache works (immutable: the URL names the
content), and hands it to the page (src/ui/bokehjs.ts, proxy/page/loader.js). Only the files of
the bokeh installed here, with exactly the hash asked for, are served; anything else is a 404,
and the page then loads the file from its dashboard as it named it.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import JupyterHandler
from tornado import web

from dashdock.proxy.bokehjs.serve import IMMUTABLE, LocalBokehJS


class LabBokehJSHandler(JupyterHandler):
    auth_resource = "dashdock"

    def initialize(self, bokeh_js: LocalBokehJS) -> None:
        self._bokeh_js = bokeh_js

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        asset = await self._bokeh_js.lookup(f"/static/js/{name}", self.request.query)
        if asset is None:
            raise web.HTTPError(404, "No such BokehJS file here.")
        self.set_header("Content-Type", "text/javascript; charset=UTF-8")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", IMMUTABLE)
        self.set_header("Vary", "Accept-Encoding")
        # Nothing here is a page: opened as one, it runs nothing and can frame nothing.
        self.set_header("Content-Security-Policy", "sandbox; default-src 'none'")
        encoding, body = asset.body_for(self.request.headers.get("Accept-Encoding", ""))
        if encoding:
            self.set_header("Content-Encoding", encoding)
        self.finish(body)


def route(bokeh_js: LocalBokehJS) -> tuple[str, type[LabBokehJSHandler], dict[str, object]]:
    return (r"/dashdock/bokehjs/(bokeh(?:-[a-z]+)?\.min\.js)", LabBokehJSHandler, {"bokeh_js": bokeh_js})
