"""The clusters of this server built from the extension's traits: its own (LocalCluster, or the
configured class) and, when one is configured, the user's Dask Gateway's, behind one facade."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from dashdock.clusters.config import configured_factory
from dashdock.clusters.facade import Clusters
from dashdock.clusters.gateway import GatewayClusters
from dashdock.clusters.gateway_client import GatewaySettings
from dashdock.clusters.limits import ClusterLimits
from dashdock.clusters.manager import ClusterManager
from dashdock.sources.registry import SourceRegistry


class ClusterTraits(Protocol):
    """The extension's traits the clusters read (DashdockApp declares them)."""

    @property
    def cluster_class(self) -> str | None: ...
    @property
    def cluster_args(self) -> list[Any] | None: ...
    @property
    def cluster_kwargs(self) -> dict[str, Any] | None: ...
    @property
    def default_workers(self) -> int | None: ...
    @property
    def default_adapt(self) -> dict[str, Any] | None: ...
    @property
    def max_workers(self) -> int: ...
    @property
    def max_clusters(self) -> int: ...
    @property
    def cluster_start_timeout(self) -> float: ...
    @property
    def gateway_address(self) -> str | None: ...
    @property
    def gateway_proxy_address(self) -> str | None: ...
    @property
    def gateway_public_address(self) -> str | None: ...
    @property
    def gateway_auth(self) -> str | None: ...
    @property
    def gateway_timeout(self) -> float: ...


def clusters_of(traits: ClusterTraits, registry: SourceRegistry, log: logging.Logger) -> Clusters:
    factory = configured_factory(
        traits.cluster_class,
        traits.cluster_args,
        traits.cluster_kwargs,
        traits.default_workers,
        traits.default_adapt,
    )
    limits = ClusterLimits(max_workers=traits.max_workers, max_clusters=traits.max_clusters)
    local = ClusterManager(factory, limits, registry, traits.cluster_start_timeout, log)
    gateway = GatewaySettings(
        traits.gateway_address,
        traits.gateway_proxy_address,
        traits.gateway_public_address,
        traits.gateway_auth,
        traits.gateway_timeout,
    )
    return Clusters(local, GatewayClusters(gateway, registry, limits, log) if gateway.configured else None)
