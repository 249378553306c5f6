"""Turn a scheduler's ``/individual-plots.json`` into plots named and grouped for people."""

from __future__ import annotations

import re
from dataclasses import dataclass

GROUPS = ("tasks", "memory", "workers", "gpu", "other")

# Words that Dask's title-casing gets wrong ("Cpu", "Gpu", ...).
_WORD_FIXES = {"cpu": "CPU", "gpu": "GPU", "rmm": "RMM", "nprocessing": "Processing"}

# First matching keyword decides the group; order matters ("gpu memory" is GPU, not memory).
_GROUP_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpu", ("gpu", "rmm")),
    ("memory", ("memory", "disk")),
    (
        "tasks",
        (
            "task",
            "progress",
            "graph",
            "groups",
            "exceptions",
            "per key",
            "per action",
            "performance",
            "profile",
        ),
    ),
    (
        "workers",
        (
            "worker",
            "cpu",
            "occupancy",
            "processing",
            "network",
            "bandwidth",
            "transfer",
            "system",
            "cluster map",
            "contention",
        ),
    ),
)

# The plots most people open first lead their group; the rest follow by name.
_FEATURED = ("Task Stream", "Progress", "Graph", "Workers Memory", "Cluster Memory", "Workers", "CPU")

# One leading slash only: "//host/x" would be a link to another host.
_PATH_RE = re.compile(r"^/(?!/)[A-Za-z0-9._/-]{1,200}$")


@dataclass(frozen=True)
class Plot:
    """One plot a dashboard offers: the name people read, its group and its path on the dashboard."""

    name: str
    group: str
    path: str


def display_name(title: str) -> str:
    """'Individual Workers Cpu Timeseries' -> 'Workers CPU Timeseries'."""
    words = title.split()
    if words and words[0].lower() == "individual":
        words = words[1:]
    return " ".join(_WORD_FIXES.get(word.lower(), word) for word in words) or title


def group_of(name: str) -> str:
    lowered = name.lower()
    for group, keywords in _GROUP_KEYWORDS:
        if any(keyword in lowered for keyword in keywords):
            return group
    return "other"


def _featured_rank(name: str) -> int:
    return _FEATURED.index(name) if name in _FEATURED else len(_FEATURED)


def parse_catalog(document: object) -> list[Plot]:
    """Read the plots JSON (``{title: path}``); entries that are not a plain dashboard path are skipped."""
    if not isinstance(document, dict):
        raise ValueError("individual-plots.json is not a JSON object")
    plots = []
    for title, path in document.items():
        if (
            not isinstance(title, str)
            or not isinstance(path, str)
            or not _PATH_RE.match(path)
            or ".." in path
        ):
            continue
        name = display_name(title)
        plots.append(Plot(name=name, group=group_of(name), path=path))
    plots.sort(key=lambda plot: (GROUPS.index(plot.group), _featured_rank(plot.name), plot.name))
    return plots
