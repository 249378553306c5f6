"""REST API under ``{base_url}dashdock/api/``: sources, their plots, and the state of panes.

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

from dashdock.clusters.manager import ClusterError, ClusterManager, parse_adapt, parse_count
from dashdock.errors import UserFacingError
from dashdock.panes.state import ALLOWED_INTERVALS, PaneRegistry, PaneState
from dashdock.sources.listing import listing
from dashdock.sources.registry import SourceError, SourceRegistry
from dashdock.sources.workers import WORKER_PAGES
from dashdock.targets import is_text


@web.stream_request_body
class _DashdockAPIHandler(APIHandler):
    """The body is received as a stream so that one larger than ``max_body`` is refused (413) from
    its Content-Length, before it is read, and a chunked one as soon as it passes the limit."""

    auth_resource = "dashdock"

    def initialize(
        self, registry: SourceRegistry, panes: PaneRegistry, clusters: ClusterManager, max_body: int
    ) -> None:
        self.registry = registry
        self.panes = panes
        self.clusters = clusters
        self._max_body = max_body
        self._body = bytearray()

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if self._finished:
            return
        length = self.request.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > self._max_body:
            # tornado closes the connection after this answer instead of reading the refused body.
            raise web.HTTPError(
                413,
                f"The request body is larger than {self._max_body:,} bytes (c.DashdockApp.max_request_body).",
            )
        self.request.connection.set_max_body_size(self._max_body)  # type: ignore[union-attr]

    def data_received(self, chunk: bytes) -> None:
        self._body += chunk

    def read_json_body(self) -> dict[str, Any]:
        try:
            body = json.loads(bytes(self._body) or b"{}")
        except (ValueError, RecursionError):
            raise web.HTTPError(400, "The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise web.HTTPError(400, "The request body must be a JSON object.")
        return body

    def plot_url(self, source_id: str, path: str) -> str:
        return url_path_join(self.base_url, "dashdock/proxy", source_id) + path


def _http_error(exc: UserFacingError) -> web.HTTPError:
    return web.HTTPError(exc.status, exc.reason.replace("%", "%%"))


class SourcesHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The sources, usable ones first, then saved ones that are disabled (``"disabled": reason``),
        and ``warnings`` about the sources file; with ``?check=1`` the health of those that need it
        most is checked first (health.py); with ``?since=<version>`` only what changed (listing.py)."""
        if self.get_query_argument("check", "0") == "1":
            await self.registry.check_all()
        since = self.get_query_argument("since", None)
        answer = listing(self.registry.list(), self.registry.disabled(), self.registry.warnings, since)
        self.finish(json.dumps(answer))

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.read_json_body()
        url, name = body.get("url"), body.get("name")
        if not isinstance(url, str):
            raise web.HTTPError(400, "'url' must be a string, such as http://127.0.0.1:8787.")
        if name is not None and not (isinstance(name, str) and len(name) <= 200 and is_text(name)):
            raise web.HTTPError(400, "'name' must be text of at most 200 characters.")
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
        if (disabled := self.registry.find_disabled(source_id)) is not None:
            self.finish(json.dumps(disabled.to_json()))
            return
        try:
            source = await self.registry.check_health(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        self.finish(json.dumps(source.to_json()))

    @web.authenticated
    @authorized
    async def delete(self, source_id: str) -> None:
        """204, or 200 with ``{"warning": ...}`` when the sources file could not be changed."""
        try:
            warning = await self.registry.remove(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        if warning:
            self.finish(json.dumps({"warning": warning}))
            return
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


class WorkersHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, source_id: str) -> None:
        """A source's workers and, for those the proxy may reach, their dashboard pages."""
        try:
            workers = await self.registry.workers(source_id)
        except SourceError as exc:
            raise _http_error(exc) from exc
        listed = []
        for worker in workers:
            entry = worker.to_json()
            target = worker.dashboard.netloc if worker.dashboard and worker.reachable else None
            entry["pages"] = (
                [
                    {"name": name, "path": path, "url": self.plot_url(target, path)}
                    for name, path in WORKER_PAGES
                ]
                if target
                else []
            )
            listed.append(entry)
        self.finish(json.dumps({"workers": listed}))


class PanesHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        self.finish(json.dumps({"panes": [self.panes.to_json(pane) for pane in self.panes.known_panes()]}))


class PaneHandler(_DashdockAPIHandler):
    """A pane's relay state: ``{"paused": bool, "interval": 0 | 1 | 5}`` (seconds between updates)."""

    @web.authenticated
    @authorized
    async def get(self, pane_id: str) -> None:
        self.finish(json.dumps(self.panes.to_json(pane_id)))

    @web.authenticated
    @authorized
    async def patch(self, pane_id: str) -> None:
        body = self.read_json_body()
        state = self.panes.state(pane_id)
        paused, interval = body.get("paused", state.paused), body.get("interval", state.interval)
        if not isinstance(paused, bool):
            raise web.HTTPError(400, "'paused' must be true or false.")
        if (
            isinstance(interval, bool)
            or not isinstance(interval, int | float)
            or interval not in ALLOWED_INTERVALS
        ):
            raise web.HTTPError(400, "'interval' must be one of 0 (live), 1 or 5 seconds.")
        self.panes.set_state(pane_id, PaneState(paused=paused, interval=float(interval)))
        self.finish(json.dumps(self.panes.to_json(pane_id)))


class ClustersHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The clusters, and the limits every request to start or resize one is held to."""
        await self.clusters.refresh()
        self.finish(
            json.dumps(
                {
                    "clusters": [cluster.to_json() for cluster in self.clusters.list()],
                    "limits": self.clusters.limits.to_json(),
                }
            )
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.read_json_body()
        name = body.get("name")
        if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 200):
            raise web.HTTPError(400, "'name' must be a string of 1 to 200 characters.")
        try:
            workers = parse_count(body["workers"], "workers") if body.get("workers") is not None else None
            adapt = parse_adapt(body["adapt"]) if body.get("adapt") is not None else None
            if workers is not None and adapt is not None:
                raise ClusterError(400, "Give either 'workers' or 'adapt', not both.")
            cluster = await self.clusters.start(name, workers, adapt)
        except ClusterError as exc:
            raise _http_error(exc) from exc
        self.set_status(201)
        self.finish(json.dumps(cluster.to_json()))


class ClusterHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, cluster_id: str) -> None:
        try:
            cluster = self.clusters.get(cluster_id)
            if cluster.status == "running":
                await cluster.command("info")
        except ClusterError as exc:
            raise _http_error(exc) from exc
        self.finish(json.dumps(cluster.to_json()))

    @web.authenticated
    @authorized
    async def patch(self, cluster_id: str) -> None:
        """``{"workers": n}`` scales to n workers; ``{"adapt": {"minimum": a, "maximum": b}}`` adapts."""
        body = self.read_json_body()
        try:
            self.clusters.get(cluster_id)
            if body.get("workers") is not None and body.get("adapt") is None:
                cluster = await self.clusters.scale(cluster_id, parse_count(body["workers"], "workers"))
            elif body.get("adapt") is not None and body.get("workers") is None:
                bounds = parse_adapt(body["adapt"])
                cluster = await self.clusters.adapt(cluster_id, bounds["minimum"], bounds["maximum"])
            else:
                raise web.HTTPError(400, "Give either 'workers' or 'adapt'.")
        except ClusterError as exc:
            raise _http_error(exc) from exc
        self.finish(json.dumps(cluster.to_json()))

    @web.authenticated
    @authorized
    async def delete(self, cluster_id: str) -> None:
        try:
            await self.clusters.stop(cluster_id)
        except ClusterError as exc:
            raise _http_error(exc) from exc
        self.set_status(204)
        self.finish()


class ClusterRestartHandler(_DashdockAPIHandler):
    @web.authenticated
    @authorized
    async def post(self, cluster_id: str) -> None:
        """A fresh cluster of the same size; its source (and the panes on it) follow it."""
        try:
            cluster = await self.clusters.restart(cluster_id)
        except ClusterError as exc:
            raise _http_error(exc) from exc
        self.finish(json.dumps(cluster.to_json()))


_CLUSTER_ID = r"(?P<cluster_id>[a-z0-9-]{1,64})"
_SOURCE_ID = r"(?P<source_id>[a-z0-9-]{1,64})"
_PANE_ID = r"(?P<pane_id>[A-Za-z0-9_-]{1,80})"

API_ROUTES = [
    (r"/dashdock/api/sources", SourcesHandler),
    (rf"/dashdock/api/sources/{_SOURCE_ID}", SourceHandler),
    (rf"/dashdock/api/sources/{_SOURCE_ID}/plots", PlotsHandler),
    (rf"/dashdock/api/sources/{_SOURCE_ID}/workers", WorkersHandler),
    (r"/dashdock/api/panes", PanesHandler),
    (rf"/dashdock/api/panes/{_PANE_ID}", PaneHandler),
    (r"/dashdock/api/clusters", ClustersHandler),
    (rf"/dashdock/api/clusters/{_CLUSTER_ID}", ClusterHandler),
    (rf"/dashdock/api/clusters/{_CLUSTER_ID}/restart", ClusterRestartHandler),
]
