"""How big a managed cluster may be and how many may run: requests are refused, configuration clamped.

A request over a limit is refused with a message naming the trait that sets it; a size from the
configuration, which nobody is there to be refused, is clamped with a warning in the log.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from dashdock.errors import Invalid


def usable_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the whole host's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def parse_count(value: object, what: str) -> int:
    """A number of workers from JSON: a whole number, 0 or more (not a bool, float, NaN or string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise Invalid(f"'{what}' must be a whole number of workers, 0 or more.")
    return value


def parse_adapt(value: object) -> dict[str, int]:
    """Adaptive bounds from JSON: ``{"minimum": a, "maximum": b}``, minimum 0 when left out."""
    if not isinstance(value, dict):
        raise Invalid('\'adapt\' must be an object {"minimum": n, "maximum": m}.')
    minimum = parse_count(value.get("minimum", 0), "adapt.minimum")
    maximum = parse_count(value.get("maximum"), "adapt.maximum")
    if minimum > maximum:
        raise Invalid(
            "The minimum number of workers cannot be larger than the maximum "
            "('adapt.minimum' > 'adapt.maximum')."
        )
    return {"minimum": minimum, "maximum": maximum}


@dataclass(frozen=True)
class ClusterLimits:
    """How many workers one cluster may have (its adaptive maximum included) and how many
    clusters may run at once; a user who needs more raises the trait the message names."""

    max_workers: int
    max_clusters: int

    def to_json(self) -> dict[str, int]:
        return {"max_workers": self.max_workers, "max_clusters": self.max_clusters}

    def check(self, workers: int | None, adapt: dict[str, int] | None) -> None:
        """Refuse a requested size over ``max_workers``: the person asking reads the answer."""
        if workers is not None and workers > self.max_workers:
            raise self._over("workers")
        if adapt is not None and adapt["maximum"] > self.max_workers:
            raise self._over("adapt.maximum")

    def _over(self, what: str) -> Invalid:
        return Invalid(
            f"'{what}' asks for more than this server's limit of {self.max_workers} workers per "
            "cluster. Ask for fewer, or raise the limit with c.DashdockApp.max_workers.",
        )

    def configured_size(
        self, workers: object, adapt: object, what: str, log: logging.Logger
    ) -> tuple[int | None, dict[str, int] | None]:
        """A size from the configuration, which nobody is there to be refused: a malformed number
        is ignored and one over ``max_workers`` is clamped to it, each with a warning in the log.
        Workers and adapt are read apart, as dask-labextension does (adapt wins when both are set).
        """
        count, bounds = None, None
        try:
            count = parse_count(workers, "workers") if workers is not None else None
        except Invalid as exc:
            log.warning("dashdock: %s: %s It is ignored.", what, exc.reason)
        try:
            bounds = parse_adapt(adapt) if adapt is not None else None
        except Invalid as exc:
            log.warning("dashdock: %s: %s It is ignored.", what, exc.reason)
        if count is not None and count > self.max_workers:
            log.warning(
                "dashdock: %s asks for %d workers, over max_workers (%d): it gets %d. "
                "Raise c.DashdockApp.max_workers to allow more.",
                what,
                count,
                self.max_workers,
                self.max_workers,
            )
            count = self.max_workers
        if bounds is not None and bounds["maximum"] > self.max_workers:
            log.warning(
                "dashdock: %s adapts up to %d workers, over max_workers (%d): it adapts up to %d. "
                "Raise c.DashdockApp.max_workers to allow more.",
                what,
                bounds["maximum"],
                self.max_workers,
                self.max_workers,
            )
            bounds = {"minimum": min(bounds["minimum"], self.max_workers), "maximum": self.max_workers}
        return count, bounds
