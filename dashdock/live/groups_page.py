"""Dask's Task Groups page, laid out in an order that puts every group after its dependencies.

Dask's ``TaskGroupGraph`` places each group one column right of its rightmost dependency, taking
the groups in the order ``dask.order`` gives them. With this Dask, that order can put a group
before one it depends on (the demo's ``sum`` before ``slow_increment``), and the layout then fails
with a ``KeyError``: Dask's own page stays empty, and ours failed to open. Here the same placement
runs over a dependency-respecting order: ``dask.order``'s own whenever it is one (so the page is
Dask's, group for group), otherwise the groups taken as soon as their dependencies are placed,
lowest ``dask.order`` rank first. A group left in a cycle is placed from what is placed already.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import dask
from distributed.dashboard.components.scheduler import TaskGroupGraph, individual_doc

Layout = tuple[dict[str, dict[str, int]], dict[str, dict[str, Any]]]


def placing_order(dependencies: Mapping[str, set[str]], rank: Mapping[str, int]) -> list[str]:
    """The groups, each after its dependencies where it can be: among those whose dependencies are
    all placed, the lowest ``rank`` first; then what a cycle held back, by rank."""
    waiting = {name: set(deps) & dependencies.keys() for name, deps in dependencies.items()}
    dependents: dict[str, list[str]] = {name: [] for name in dependencies}
    for name, deps in waiting.items():
        for dep in deps:
            dependents[dep].append(name)
    ready = [(rank[name], name) for name, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    placed: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        placed.append(name)
        for dependent in dependents[name]:
            waiting[dependent].discard(name)
            if not waiting[dependent]:
                heapq.heappush(ready, (rank[dependent], dependent))
    done = set(placed)
    return placed + sorted((name for name in dependencies if name not in done), key=rank.__getitem__)


def place(order: Iterable[str], dependencies: Mapping[str, set[str]]) -> Layout:
    """Dask's placement: a group sits one column right of its rightmost placed dependency, at the
    height of its highest one (one row up when several all sit on the same row); a group with none
    starts a new row in the first column; a taken spot moves it up."""
    column: dict[str, int] = {}
    row: dict[str, int] = {}
    taken: set[tuple[int, int]] = set()
    nodes: dict[str, dict[str, int]] = {}
    arrows: dict[str, dict[str, Any]] = {}
    for name in order:
        before = [dep for dep in dependencies[name] if dep in column]
        if before:
            x = 1 + max(column[dep] for dep in before)
            rows = {row[dep] for dep in before}
            y = max(rows) + (1 if len(before) > 1 and len(rows) == 1 else 0)
        else:
            x, y = 0, (1 + max(row.values()) if row else 0)
        while (x, y) in taken:
            y += 1
        taken.add((x, y))
        column[name], row[name] = x, y
        nodes[name] = {"x": x, "y": y}
        arrows[name] = {"nstart": dependencies[name], "nend": [name] * len(dependencies[name])}
    return nodes, arrows


class OrderedTaskGroupGraph(TaskGroupGraph):
    """Dask's component, with the layout above."""

    def update_layout(self) -> Layout:
        groups = self.scheduler.task_groups
        dependencies = {
            name: {dep.name for dep in group.dependencies if dep.name != name}  # Dask drops a self-loop too
            for name, group in groups.items()
        }
        ranked = dask.order.order(dsk=dict.fromkeys(groups, 1), dependencies=dependencies)
        rank = {str(name): position for name, position in ranked.items()}
        return place(placing_order(dependencies, rank), dependencies)


def groups_page() -> Callable[..., None]:
    """The page function for ``/individual-groups``: Dask's, with the component above."""
    return individual_doc(OrderedTaskGroupGraph, 200)
