"""``{base_url}dashdock/api/clusters``: start, scale, adapt, restart and shut down clusters.

Two providers share the API: ``local`` clusters this server runs (manager.py) and the user's
dask-gateway clusters (gateway.py), told apart by id; restart is for local clusters only. Each
handler is one call to the ``Clusters`` facade (facade.py), which parses and dispatches.
"""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.clusters.facade import Clusters
from dashdock.http import CLUSTER_ID_ARG, DEFAULT_MAX_BODY, ApiHandler


class _ClustersAPIHandler(ApiHandler):
    def initialize(self, clusters: Clusters, max_body: int = DEFAULT_MAX_BODY) -> None:
        super().initialize(max_body)
        self.clusters = clusters


class ClustersHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The clusters, and the limits every request to start or resize one is held to."""
        self.finish_json((await self.clusters.list(self.log)).to_json())

    @web.authenticated
    @authorized
    async def post(self) -> None:
        self.finish_json((await self.clusters.create(self.read_json_body())).to_json(), 201)


class ClusterHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, cluster_id: str) -> None:
        self.finish_json((await self.clusters.get(cluster_id)).to_json())

    @web.authenticated
    @authorized
    async def patch(self, cluster_id: str) -> None:
        """``{"workers": n}`` scales to n workers; ``{"adapt": {"minimum": a, "maximum": b}}`` adapts."""
        self.finish_json((await self.clusters.resize(cluster_id, self.read_json_body())).to_json())

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
        self.finish_json((await self.clusters.restart(cluster_id)).to_json())


class ClusterFormHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, provider: str) -> None:
        """The fields of the "New cluster" form of a provider (see form.py)."""
        fields = await self.clusters.form(provider)
        self.finish_json({"provider": provider, "fields": [field.to_json() for field in fields]})


def routes(clusters: Clusters, max_body: int) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"clusters": clusters, "max_body": max_body}
    return [
        (r"/dashdock/api/clusters", ClustersHandler, services),
        (r"/dashdock/api/clusters/forms/(local|gateway)", ClusterFormHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}", ClusterHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}/restart", ClusterRestartHandler, services),
    ]
