"""REST API under ``{base_url}dashdock/api/``: sources and their plots.

Errors are raised as ``HTTPError``; ``APIHandler`` turns them into ``{"message": ...}`` JSON.
Mutating calls go through Jupyter's XSRF check (``APIHandler.prepare``).
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from .registry import SourceError, SourceRegistry


class _DashdockAPIHandler(APIHandler):
    auth_resource = "dashdock"

    def initialize(self, registry: SourceRegistry) -> None:
        self.registry = registry

    def read_json_body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError:
            raise web.HTTPError(400, "The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "The request body must be a JSON object.")
        return body

    def plot_url(self, source_id: str, path: str) -> str:
        return url_path_join(self.base_url, "dashdock/proxy", source_id) + path


def _http_error(exc: SourceError) -> web.HTTPError:
    return web.HTTPError(exc.status, exc.reason.replace("%", "%%"))


class SourcesHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish(json.dumps({"sources": [source.to_json() for source in self.registry.list()]}))

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.read_json_body()
        url, name = body.get("url"), body.get("name")
        if not isinstance(url, str):
            raise web.HTTPError(400, "'url' must be a string, such as http://127.0.0.1:8787.")
        if name is not None and (not isinstance(name, str) or len(name) > 200):
            raise web.HTTPError(400, "'name' must be a string of at most 200 characters.")
        try:
            source, created = await self.registry.add_url(url, name or None)
        except SourceError as exc:
            raise _http_error(exc) from exc
        self.set_status(201 if created else 200)
        self.finish(json.dumps(source.to_json()))


class SourceHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        try:
            source = await self.registry.check_health(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        self.finish(json.dumps(source.to_json()))

    @web.authenticated
    @authorized
    async def delete(self, source_id: str) -> None:
        try:
            await self.registry.remove(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        self.set_status(204)
        self.finish()


class PlotsHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        try:
            plots = await self.registry.plots(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        self.finish(
            json.dumps(
                {
                    "plots": [
                        {
                            "name": plot.name,
                            "group": plot.group,
                            "path": plot.path,
                            "url": self.plot_url(source_id, plot.path),
                        }
                        for plot in plots
                    ]
                }
            )
        )


_SOURCE_ID = r"(?P<source_id>[a-z0-9-]{1,64})"

API_ROUTES = [
    (r"/dashdock/api/sources", SourcesHandler),
    (rf"/dashdock/api/sources/{_SOURCE_ID}", SourceHandler),
    (rf"/dashdock/api/sources/{_SOURCE_ID}/plots", PlotsHandler),
]
