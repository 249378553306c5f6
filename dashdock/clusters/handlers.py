"""``{base_url}dashdock/api/clusters``: start, scale, adapt, restart and shut down managed clusters."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.clusters.limits import parse_adapt, parse_count
from dashdock.clusters.manager import ClusterManager
from dashdock.errors import Invalid
from dashdock.http import CLUSTER_ID_ARG, DEFAULT_MAX_BODY, ApiHandler


class _ClustersAPIHandler(ApiHandler):
    def initialize(self, clusters: ClusterManager, max_body: int = DEFAULT_MAX_BODY) -> None:
        super().initialize(max_body)
        self.clusters = clusters


class ClustersHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The clusters, and the limits every request to start or resize one is held to."""
        await self.clusters.refresh()
        self.finish_json(
            {
                "clusters": [cluster.to_json() for cluster in self.clusters.list()],
                "limits": self.clusters.limits.to_json(),
            }
        )

    @web.authenticated
    @authorized
    async def post(self) -> None:
        body = self.read_json_body()
        name = body.get("name")
        if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 200):
            raise Invalid("'name' must be a string of 1 to 200 characters.")
        workers = parse_count(body["workers"], "workers") if body.get("workers") is not None else None
        adapt = parse_adapt(body["adapt"]) if body.get("adapt") is not None else None
        if workers is not None and adapt is not None:
            raise Invalid("Give either 'workers' or 'adapt', not both.")
        cluster = await self.clusters.start(name, workers, adapt)
        self.finish_json(cluster.to_json(), 201)


class ClusterHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, cluster_id: str) -> None:
        cluster = self.clusters.get(cluster_id)
        if cluster.status == "running":
            await cluster.command("info")
        self.finish_json(cluster.to_json())

    @web.authenticated
    @authorized
    async def patch(self, cluster_id: str) -> None:
        """``{"workers": n}`` scales to n workers; ``{"adapt": {"minimum": a, "maximum": b}}`` adapts."""
        body = self.read_json_body()
        self.clusters.get(cluster_id)
        if body.get("workers") is not None and body.get("adapt") is None:
            cluster = await self.clusters.scale(cluster_id, parse_count(body["workers"], "workers"))
        elif body.get("adapt") is not None and body.get("workers") is None:
            bounds = parse_adapt(body["adapt"])
            cluster = await self.clusters.adapt(cluster_id, bounds["minimum"], bounds["maximum"])
        else:
            raise Invalid("Give either 'workers' or 'adapt'.")
        self.finish_json(cluster.to_json())

    @web.authenticated
    @authorized
    async def delete(self, cluster_id: str) -> None:
        await self.clusters.stop(cluster_id)
        self.set_status(204)
        self.finish()


class ClusterRestartHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def post(self, cluster_id: str) -> None:
        """A fresh cluster of the same size; its source (and the panes on it) follow it."""
        cluster = await self.clusters.restart(cluster_id)
        self.finish_json(cluster.to_json())


def routes(clusters: ClusterManager, max_body: int) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"clusters": clusters, "max_body": max_body}
    return [
        (r"/dashdock/api/clusters", ClustersHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}", ClusterHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}/restart", ClusterRestartHandler, services),
    ]
