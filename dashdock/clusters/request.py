"""Requests to the clusters API, parsed once: a size (workers or adaptive bounds) and a new cluster."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dashdock.clusters.limits import parse_adapt, parse_count
from dashdock.errors import Invalid


@dataclass(frozen=True)
class Size:
    """A fixed number of workers, or adaptive bounds, or neither (the configured default)."""

    workers: int | None = None
    adapt: dict[str, int] | None = None


@dataclass(frozen=True)
class NewCluster:
    """``POST clusters``: where it runs, its name (local only), size and the form's values."""

    provider: str
    name: str | None
    size: Size
    options: object


def parse_size(body: dict[str, Any], *, required: bool) -> Size:
    """``{"workers": n}`` or ``{"adapt": {"minimum": a, "maximum": b}}``; with ``required``
    (a resize) exactly one of them, else at most one."""
    workers, adapt = body.get("workers"), body.get("adapt")
    if required and (workers is None) == (adapt is None):
        raise Invalid("Give either 'workers' or 'adapt'.")
    size = Size(
        parse_count(workers, "workers") if workers is not None else None,
        parse_adapt(adapt) if adapt is not None else None,
    )
    if size.workers is not None and size.adapt is not None:
        raise Invalid("Give either 'workers' or 'adapt', not both.")
    return size


def parse_new_cluster(body: dict[str, Any]) -> NewCluster:
    name = body.get("name")
    if name is not None and (not isinstance(name, str) or not 0 < len(name) <= 200):
        raise Invalid("'name' must be a string of 1 to 200 characters.")
    size = parse_size(body, required=False)
    provider = body.get("provider", "local")
    if provider not in ("local", "gateway"):
        raise Invalid("'provider' must be 'local' or 'gateway'.")
    return NewCluster(provider, name, size, body.get("options"))
