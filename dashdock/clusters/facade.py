"""``Clusters``: the one door of the clusters API to both providers.

A provider is the server's own clusters (``ClusterManager``, manager.py) or the user's dask-gateway
clusters (``GatewayClusters``, gateway.py); both answer ``ClusterProvider``. The facade parses each
request once (request.py), dispatches it by cluster id (the gateway's ids are those it knows, every
other id is the server's) or by the provider asked for, and answers the wire shapes of view.py.
Restarting, and describing one cluster, are for the server's own clusters only.
"""

from __future__ import annotations

import builtins
import logging
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from dashdock.clusters.form import FormField
from dashdock.clusters.gateway import GatewayClusters
from dashdock.clusters.limits import ClusterLimits
from dashdock.clusters.manager import ClusterManager
from dashdock.clusters.request import NewCluster, Size, parse_new_cluster, parse_size
from dashdock.clusters.view import ClusterListing, ClusterView, GatewayState, Resized, Submitted
from dashdock.errors import DashdockError, Invalid


class ClusterProvider(Protocol):
    """What the clusters API asks of a provider."""

    def owns(self, cluster_id: str) -> bool: ...

    async def listed(self) -> tuple[list[ClusterView], str]:
        """Its clusters, and a note when they are not current ('' when they are)."""
        ...

    async def form(self) -> list[FormField]: ...

    async def create(self, request: NewCluster) -> ClusterView | Submitted: ...

    async def resize(self, cluster_id: str, size: Size) -> ClusterView | Resized: ...

    async def stop(self, cluster_id: str) -> None: ...


class Clusters:
    """List, create, describe, scale, adapt, restart and stop clusters of either provider."""

    def __init__(self, local: ClusterManager, gateway: GatewayClusters | None) -> None:
        self.local = local
        self.gateway = gateway

    @property
    def limits(self) -> ClusterLimits:
        return self.local.limits

    async def list(self, log: logging.Logger) -> ClusterListing:
        """The clusters, and the limits every request to start or resize one is held to.

        A gateway that fails leaves the server's clusters listed, and the listing says why."""
        clusters, _ = await self.local.listed()
        state = None
        if self.gateway is not None:
            state = GatewayState(_without_userinfo(self.gateway.address))
            try:
                listed, note = await self.gateway.listed()
                clusters += listed
                state = GatewayState(state.address, note)
            except DashdockError as exc:
                state = GatewayState(state.address, exc.reason)
            except Exception:  # a defect of ours, or of dask-gateway: the server's clusters still show
                log.exception("dashdock: listing the Dask Gateway's clusters failed")
                state = GatewayState(
                    state.address, "Listing the Dask Gateway's clusters failed (see the server's log)."
                )
        return ClusterListing(clusters, self.limits, state)

    async def create(self, body: dict[str, Any]) -> ClusterView | Submitted:
        """``POST clusters``: ``{"provider", "name", "workers" | "adapt", "options"}``."""
        request = parse_new_cluster(body)
        return await self._provider(request.provider).create(request)

    async def get(self, cluster_id: str) -> ClusterView:
        return await self.local.described(cluster_id)

    async def resize(self, cluster_id: str, body: dict[str, Any]) -> ClusterView | Resized:
        """``PATCH clusters/{id}``: ``{"workers": n}`` or ``{"adapt": {"minimum": a, "maximum": b}}``."""
        provider = self._owner(cluster_id)  # an unknown id is a 404 before its body is read
        return await provider.resize(cluster_id, parse_size(body, required=True))

    async def scale(self, cluster_id: str, workers: int) -> ClusterView | Resized:
        return await self._owner(cluster_id).resize(cluster_id, Size(workers=workers))

    async def adapt(self, cluster_id: str, minimum: int, maximum: int) -> ClusterView | Resized:
        size = Size(adapt={"minimum": minimum, "maximum": maximum})
        return await self._owner(cluster_id).resize(cluster_id, size)

    async def restart(self, cluster_id: str) -> ClusterView:
        """A fresh cluster of the same size; its source (and the panes on it) follow it."""
        return await self.local.restarted(cluster_id)

    async def stop(self, cluster_id: str) -> None:
        await self._owner(cluster_id).stop(cluster_id)

    async def form(self, provider: str) -> builtins.list[FormField]:
        """The fields of the "New cluster" form of a provider (see form.py)."""
        return await self._provider(provider).form()

    def schedulers(self) -> dict[str, str]:
        """Source id -> scheduler address of the server's own clusters (the history records them)."""
        return self.local.schedulers()

    def gateway_settings(self) -> dict[str, str | None] | None:
        """The gateway's settings as Dask's config names them, for kernels; ``None``: no gateway."""
        return self.gateway.settings.dask_config() if self.gateway is not None else None

    async def start_configured(self, requests: builtins.list[object], log: logging.Logger) -> None:
        await self.local.start_configured(requests, log)

    async def close(self) -> None:
        """Every cluster of the server's stopped; the gateway's left running, its client closed."""
        await self.local.close_all()
        if self.gateway is not None:
            await self.gateway.close()

    def _owner(self, cluster_id: str) -> ClusterProvider:
        """The gateway's clusters are those it knows; any other id is the server's, or a 404."""
        if self.gateway is not None and self.gateway.owns(cluster_id):
            return self.gateway
        self.local.get(cluster_id)
        return self.local

    def _provider(self, provider: str) -> ClusterProvider:
        if provider != "gateway":
            return self.local
        if self.gateway is None:
            raise Invalid(
                "No Dask Gateway is configured: set c.DashdockApp.gateway_address "
                "(or DASK_GATEWAY__ADDRESS, as dask-gateway reads it)."
            )
        return self.gateway


def _without_userinfo(address: str | None) -> str | None:
    """The gateway's address as the browser may see it: without a user and password in it."""
    if not address:
        return address
    parts = urlsplit(address)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))
