"""Custom metrics from a notebook: ``dashdock.metric(client, "Queue length", fn)`` and friends.

A metric is sampled on the cluster (metric_board.py), so it lives as long as the scheduler unless
it is tied to the client (``lifetime="client"``). Its plot is listed among the source's plots in
the sidebar, group "Custom", and docks like any Dask plot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import metric_board, metric_plot

WHERE = ("scheduler", "workers")
LIFETIMES = ("cluster", "client")
MIN_EVERY = 0.1
MAX_EVERY = 3600.0
MAX_NAME_CHARS = 100


@dataclass
class Metric:
    """A metric on a scheduler: what ``dashdock.metric`` returns and ``dashdock.metrics`` lists."""

    name: str
    path: str
    every: float
    where: str
    lifetime: str
    error: str = ""
    lines: list[str] = field(default_factory=list)
    _client: Any = field(default=None, repr=False, compare=False)

    def remove(self) -> bool:
        """Stop sampling and take the plot away; False when it was gone already."""
        slug = self.path.removeprefix(metric_board.PATH_PREFIX)
        return bool(self._client.run_on_scheduler(metric_board.remove_metric, slug=slug))


def metric(
    client: Any,
    name: str,
    fn: Callable[[Any], Any],
    every: float = 1.0,
    where: str = "scheduler",
    lifetime: str = "cluster",
    *,
    max_points: int = 3600,
    max_lines: int = 64,
    max_metrics: int = 32,
) -> Metric:
    """Sample ``fn`` on the cluster every ``every`` seconds and show it as a plot named ``name``.

    ``fn(dask_scheduler)`` (``where="scheduler"``) or ``fn(dask_worker)`` on each worker
    (``where="workers"``, one line per worker) returns a number, or a dict of named numbers (one
    line each). A scheduler metric runs on the scheduler's event loop: keep it quick. Calling
    again with the same name replaces the metric and keeps its open panes. Each line keeps its
    last ``max_points`` samples; a metric draws at most ``max_lines`` lines and a scheduler
    keeps at most ``max_metrics`` metrics.
    """
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise ValueError(f"A metric needs a name of 1 to {MAX_NAME_CHARS} characters.")
    if not callable(fn):
        raise TypeError("fn must be a function of the scheduler (or of a worker, with where='workers').")
    if not isinstance(every, int | float) or not MIN_EVERY <= every <= MAX_EVERY:
        raise ValueError(f"every is in seconds, from {MIN_EVERY} to {MAX_EVERY:g}.")
    if where not in WHERE:
        raise ValueError(f"where is one of {', '.join(map(repr, WHERE))}.")
    if lifetime not in LIFETIMES:
        raise ValueError(f"lifetime is one of {', '.join(map(repr, LIFETIMES))}.")
    for limit, value in (("max_points", max_points), ("max_lines", max_lines), ("max_metrics", max_metrics)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{limit} is a positive whole number.")
    _not_asynchronous(client)
    _install(client)
    spec = {
        "name": name.strip(),
        "fn": fn,
        "every": float(every),
        "where": where,
        "lifetime": lifetime,
        "client": client.id,
        "max_points": max_points,
        "max_lines": max_lines,
        "max_metrics": max_metrics,
    }
    return _handle(client.run_on_scheduler(metric_board.add_metric, spec=spec), client)


def metrics(client: Any) -> list[Metric]:
    """The metrics on the client's scheduler, whoever added them."""
    _not_asynchronous(client)
    return [_handle(described, client) for described in client.run_on_scheduler(metric_board.list_metrics)]


def _handle(described: dict[str, Any], client: Any) -> Metric:
    return Metric(**described, _client=client)


def _not_asynchronous(client: Any) -> None:
    if getattr(client, "asynchronous", False):
        raise TypeError("dashdock.metric needs a synchronous Client (the one a notebook normally has).")


def _install(client: Any) -> None:
    """The board on the client's scheduler; idempotent, so notebooks sharing a cluster share it."""
    import cloudpickle

    # The scheduler need not have dashdock: the board and its plot travel by value.
    cloudpickle.register_pickle_by_value(metric_board)
    cloudpickle.register_pickle_by_value(metric_plot)
    client.register_plugin(metric_board.MetricBoard(metric_plot.build), name=metric_board.PLUGIN_NAME)
