"""What "New cluster" creates: dashdock's traits first, then the ``labextension`` section of Dask's config.

So dask-labextension users' existing configuration keeps working unchanged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from dashdock.clusters.limits import ClusterLimits, usable_cores

_LOCAL_CLUSTER_NAMES = frozenset(
    {"distributed.LocalCluster", "dask.distributed.LocalCluster", "distributed.deploy.local.LocalCluster"}
)


@dataclass(frozen=True)
class ClusterFactory:
    """What "New cluster" creates: a class by dotted path, its arguments, and its default size."""

    cluster_class: str = "distributed.LocalCluster"
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    adapt: dict[str, int] | None = None

    def within(self, limits: ClusterLimits, log: logging.Logger) -> ClusterFactory:
        """This factory with its default size inside ``limits`` (see ``configured_size``)."""
        workers, adapt = limits.configured_size(self.workers, self.adapt, "the default cluster size", log)
        kwargs = dict(self.kwargs)
        if self.cluster_class in _LOCAL_CLUSTER_NAMES:
            given = kwargs.get("n_workers")
            if isinstance(given, int) and given > limits.max_workers:
                kwargs["n_workers"], _ = limits.configured_size(given, None, "cluster_kwargs.n_workers", log)
            elif given is None and workers is None and adapt is None and limits.max_workers < usable_cores():
                # Left to itself a LocalCluster starts up to one worker per core: more than allowed.
                workers = limits.max_workers
                log.info("dashdock: a new cluster gets max_workers (%d) workers, under one a core", workers)
        return replace(self, workers=workers, adapt=adapt, kwargs=kwargs)

    def spec(
        self, workers: int | None, adapt: dict[str, int] | None, chosen: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """What the cluster host creates; ``chosen``: the values of the "New cluster" form."""
        kwargs = {**self.kwargs, **(chosen or {})}
        if adapt is None and workers is None:
            workers, adapt = self.workers, self.adapt
        if self.cluster_class in _LOCAL_CLUSTER_NAMES:
            # Loopback and a free dashboard port: reachable by the proxy, and many clusters side by side.
            kwargs.setdefault("host", "127.0.0.1")
            kwargs.setdefault("dashboard_address", "127.0.0.1:0")
            # Worker processes serve no dashboard unless asked; the worker selector lists their pages.
            kwargs.setdefault("worker_dashboard_address", "127.0.0.1:0")
            if kwargs.get("processes") is False:
                # Workers in the host's process would speak inproc://, which cannot bind a loopback
                # host ("Scheduler failed to start") and which the server could not reach anyway.
                kwargs.setdefault("protocol", "tcp")
            if workers is not None:
                kwargs["n_workers"] = workers  # started at that size rather than resized after
            elif adapt is not None:
                kwargs["n_workers"] = adapt["minimum"]
        return {
            "class": self.cluster_class,
            "args": list(self.args),
            "kwargs": kwargs,
            "workers": workers,
            "adapt": adapt,
        }


def configured_factory(
    cluster_class: str | None,
    args: list[Any] | None,
    kwargs: dict[str, Any] | None,
    workers: int | None,
    adapt: dict[str, int] | None,
) -> ClusterFactory:
    """The factory from the traits (``None``: not set), each falling back to Dask's config."""
    import dask.config  # light: distributed's own (heavy) import is not needed to read settings

    section = dask.config.get("labextension", default={}) or {}
    factory = section.get("factory") or {}
    defaults = section.get("default") or {}
    configured_class = ".".join(p for p in (factory.get("module"), factory.get("class")) if p) or None
    return ClusterFactory(
        cluster_class=cluster_class or configured_class or "distributed.LocalCluster",
        args=tuple(args if args is not None else factory.get("args") or ()),
        kwargs=dict(kwargs if kwargs is not None else factory.get("kwargs") or {}),
        workers=workers if workers is not None else defaults.get("workers"),
        adapt=adapt if adapt is not None else defaults.get("adapt"),
    )


def configured_initial_clusters(initial: list[Any] | None) -> list[object]:
    """Clusters to start with the server: the trait, else ``labextension.initial`` of Dask's config."""
    if initial is not None:
        return list(initial)
    import dask.config

    return list(dask.config.get("labextension.initial", default=[]) or [])
