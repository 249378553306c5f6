"""``{base_url}dashdock/api/clusters``: start, scale, adapt, restart and shut down clusters.

Two providers share the API: ``local`` clusters this server runs (manager.py) and the user's
dask-gateway clusters (gateway.py), told apart by id; restart is for local clusters only.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.clusters.gateway import GatewayClusters
from dashdock.clusters.limits import parse_adapt, parse_count
from dashdock.clusters.manager import ClusterManager
from dashdock.errors import DashdockError, Invalid
from dashdock.http import CLUSTER_ID_ARG, DEFAULT_MAX_BODY, ApiHandler


class _ClustersAPIHandler(ApiHandler):
    def initialize(
        self, clusters: ClusterManager, gateway: GatewayClusters | None, max_body: int = DEFAULT_MAX_BODY
    ) -> None:
        super().initialize(max_body)
        self.clusters = clusters
        self.gateway = gateway


class ClustersHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The clusters, and the limits every request to start or resize one is held to."""
        await self.clusters.refresh()
        listing = [cluster.to_json() for cluster in self.clusters.list()]
        gateway = None
        if self.gateway is not None:
            # A gateway that fails leaves the local clusters listed, and says why in the listing.
            gateway = {"address": _without_userinfo(self.gateway.address), "error": ""}
            try:
                listed, gateway["error"] = await self.gateway.listed()
                listing += listed
            except DashdockError as exc:
                gateway["error"] = exc.reason
            except Exception:  # a defect of ours, or of dask-gateway: the server's clusters still show
                self.log.exception("dashdock: listing the Dask Gateway's clusters failed")
                gateway["error"] = "Listing the Dask Gateway's clusters failed (see the server's log)."
        self.finish_json({"clusters": listing, "limits": self.clusters.limits.to_json(), "gateway": gateway})

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
        provider = body.get("provider", "local")
        if provider == "gateway":
            self.finish_json(await _gateway(self.gateway).start(body.get("options"), workers, adapt), 201)
            return
        if provider != "local":
            raise Invalid("'provider' must be 'local' or 'gateway'.")
        cluster = await self.clusters.start(name, workers, adapt, body.get("options"))
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
        if self.gateway is not None and self.gateway.owns(cluster_id):
            # Over the gateway's own limit, it resizes to the limit and says so: the user reads it.
            warning = await _resize_gateway_cluster(self.gateway, cluster_id, body)
            self.finish_json({"id": cluster_id, "warning": warning} if warning else {"id": cluster_id})
            return
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
        if self.gateway is not None and self.gateway.owns(cluster_id):
            await self.gateway.stop(cluster_id)
        else:
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


class ClusterFormHandler(_ClustersAPIHandler):
    @web.authenticated
    @authorized
    async def get(self, provider: str) -> None:
        """The fields of the "New cluster" form of a provider (see form.py)."""
        if provider == "gateway":
            fields = await _gateway(self.gateway).form()
        else:
            fields = await self.clusters.form()
        self.finish_json({"provider": provider, "fields": [field.to_json() for field in fields]})


async def _resize_gateway_cluster(gateway: GatewayClusters, cluster_id: str, body: dict[str, object]) -> str:
    """Scale or adapt; returns what the gateway did instead of what was asked (its limit), else ''."""
    if body.get("workers") is not None and body.get("adapt") is None:
        return await gateway.scale(cluster_id, parse_count(body["workers"], "workers"))
    elif body.get("adapt") is not None and body.get("workers") is None:
        bounds = parse_adapt(body["adapt"])
        return await gateway.adapt(cluster_id, bounds["minimum"], bounds["maximum"])
    else:
        raise Invalid("Give either 'workers' or 'adapt'.")


def _gateway(gateway: GatewayClusters | None) -> GatewayClusters:
    if gateway is None:
        raise Invalid(
            "No Dask Gateway is configured: set c.DashdockApp.gateway_address "
            "(or DASK_GATEWAY__ADDRESS, as dask-gateway reads it)."
        )
    return gateway


def routes(
    clusters: ClusterManager, gateway: GatewayClusters | None, max_body: int
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"clusters": clusters, "gateway": gateway, "max_body": max_body}
    return [
        (r"/dashdock/api/clusters", ClustersHandler, services),
        (r"/dashdock/api/clusters/forms/(local|gateway)", ClusterFormHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}", ClusterHandler, services),
        (rf"/dashdock/api/clusters/{CLUSTER_ID_ARG}/restart", ClusterRestartHandler, services),
    ]


def _without_userinfo(address: str | None) -> str | None:
    """The gateway's address as the browser may see it: without a user and password in it."""
    if not address:
        return address
    parts = urlsplit(address)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
