"""What the clusters API answers: a cluster (``ICluster`` in src/api/types.ts), built in one place.

Both providers describe their clusters as a ``ClusterView``; its ``to_json`` is the wire shape.
A gateway cluster just submitted and a gateway cluster just resized answer less (``Submitted``,
``Resized``): the gateway knows no more yet.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from dashdock.clusters.limits import ClusterLimits

Provider = Literal["local", "gateway"]
Status = Literal["starting", "running", "closing", "stopped"]


@dataclass(frozen=True)
class ClusterView:
    """One cluster as the API lists it (``ICluster``); ``None``: the server cannot tell (yet)."""

    id: str
    name: str
    provider: Provider
    status: Status
    scheduler: str | None
    dashboard: str | None
    workers: int | None
    threads: int | None
    memory: int | None
    adapt: dict[str, int] | None
    tasks: int | None  # unfinished tasks on its scheduler, as last asked
    source: str | None  # the source id of its dashboard, once running
    # The workers asked for, which join a moment later (None: the cluster does not say).
    requested: int | None = None
    # Results its workers hold in memory, as last asked, which shutting down loses (None: unknown).
    held: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Submitted:
    """A gateway cluster just created: it has a name, and a size only once it runs."""

    id: str
    name: str
    provider: Provider
    status: Status

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Resized:
    """A gateway cluster scaled or adapted; ``warning``: what it did instead (its limit), else ''."""

    id: str
    warning: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "warning": self.warning} if self.warning else {"id": self.id}


@dataclass(frozen=True)
class GatewayState:
    """The configured gateway as the listing shows it, and why listing its clusters failed ('')."""

    address: str | None
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"address": self.address, "error": self.error}


@dataclass(frozen=True)
class ClusterListing:
    """What ``GET clusters`` answers (``IClusterListing``)."""

    clusters: list[ClusterView]
    limits: ClusterLimits
    gateway: GatewayState | None

    def to_json(self) -> dict[str, Any]:
        return {
            "clusters": [cluster.to_json() for cluster in self.clusters],
            "limits": self.limits.to_json(),
            "gateway": self.gateway.to_json() if self.gateway is not None else None,
        }
