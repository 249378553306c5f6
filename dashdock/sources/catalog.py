"""Turn a scheduler's ``/individual-plots.json`` into plots named and grouped for people."""

from __future__ import annotations

import re
from dataclasses import dataclass

# In the sidebar's order: a notebook's metrics, a Bokeh server's apps, then Dask's plots by kind.
GROUPS = ("custom", "apps", "tasks", "memory", "workers", "gpu", "other")
# Where a scheduler lists the metrics notebooks added (dashdock/kernel/metric_board.py).
METRICS_LISTING = "/dashdock-metrics.json"
MAX_CUSTOM_NAME = 100

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

# What each of Dask's plots shows, in one sentence, for the sidebar's tooltips.
_DESCRIPTIONS = {
    "Task Stream": "When each task ran, on which worker thread, coloured by task prefix.",
    "Progress": "How many tasks of each prefix are done, in memory, waiting or erred.",
    "Graph": "The task graph being computed, each task coloured by its state.",
    "Groups": "The graph of task groups, each coloured by how far it has progressed.",
    "Group Progress": "Tasks done per task group over time.",
    "Exceptions": "The errors tasks raised, with their tracebacks.",
    "Compute Time Per Key": "Where compute time went, by task prefix.",
    "Aggregate Time Per Action": "Time the workers spent computing, transferring and spilling.",
    "Fine Performance Metrics": "Where the workers' time went, by activity and task prefix.",
    "Profile": "A statistical profile of the code the tasks ran, as a flame graph.",
    "Profile Server": "A statistical profile of the scheduler's own work, as a flame graph.",
    "Workers Memory": "Memory each worker uses: managed by Dask, unmanaged, spilled.",
    "Cluster Memory": "Memory the whole cluster uses: managed by Dask, unmanaged, spilled.",
    "Workers Memory Timeseries": "The cluster's memory use over time.",
    "Workers Disk": "Disk each worker reads and writes.",
    "Workers Disk Timeseries": "Disk reads and writes over time.",
    "Memory By Key": "Memory held by task results, by task prefix.",
    "Workers": "A table of the workers: CPU, memory, tasks and network.",
    "CPU": "CPU use of each worker.",
    "Workers CPU Timeseries": "The cluster's CPU use over time.",
    "Processing": "How many tasks each worker is processing.",
    "Occupancy": "How many seconds of work are queued on each worker.",
    "Workers Network": "Network bytes each worker sends and receives.",
    "Workers Network Timeseries": "Network traffic of the cluster over time.",
    "Workers Transfer Bytes": "Bytes each worker is transferring to others.",
    "Bandwidth Types": "Measured transfer bandwidth, by type of data.",
    "Bandwidth Workers": "Measured transfer bandwidth between pairs of workers.",
    "Scheduler System": "CPU, memory and network of the scheduler's process.",
    "Contention": "How long the scheduler's event loop and workers' threads waited.",
    "Cluster Map": "The scheduler, the workers and the transfers between them, live.",
    "GPU Memory": "GPU memory each worker uses (needs NVIDIA GPUs on the workers).",
    "GPU Utilization": "GPU utilization of each worker (needs NVIDIA GPUs on the workers).",
    "RMM Memory": "Memory held by RAPIDS' memory manager on each worker (needs NVIDIA GPUs on the workers).",
}

# For a plot a later Dask adds: what its group is about.
_GROUP_DESCRIPTIONS = {
    "tasks": "A view of the tasks the cluster runs.",
    "memory": "A view of the memory or disk the workers use.",
    "workers": "A view of the workers and their system resources.",
    "gpu": "A view of the workers' GPUs (needs NVIDIA GPUs on the workers).",
    "other": "A plot of the Dask dashboard.",
    "custom": "A metric added from a notebook with dashdock.metric.",
}

# One leading slash only: "//host/x" would be a link to another host.
_PATH_RE = re.compile(r"^/(?!/)[A-Za-z0-9._/-]{1,200}$")


@dataclass(frozen=True)
class Plot:
    """One plot a dashboard offers: the name people read, its group and its path on the dashboard."""

    name: str
    group: str
    path: str

    @property
    def description(self) -> str:
        """What the plot shows, in one sentence."""
        return describe(self.name, self.group)


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


def describe(name: str, group: str) -> str:
    """One sentence saying what the plot ``name`` of ``group`` shows; by group for a plot we do not know."""
    return _DESCRIPTIONS.get(name) or _GROUP_DESCRIPTIONS.get(group, _GROUP_DESCRIPTIONS["other"])


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


def parse_custom(document: object) -> list[Plot]:
    """Read a scheduler's custom metrics (``{name: path}``), named as their notebook named them."""
    if not isinstance(document, dict):
        raise ValueError("dashdock-metrics.json is not a JSON object")
    plots = [
        Plot(name=name.strip(), group="custom", path=path)
        for name, path in document.items()
        if isinstance(name, str)
        and 0 < len(name.strip()) <= MAX_CUSTOM_NAME
        and isinstance(path, str)
        and _PATH_RE.match(path)
        and ".." not in path
    ]
    return sorted(plots, key=lambda plot: plot.name.lower())
