"""A scheduler's task groups as Dask's Task Groups graph reads them, from the ``task_groups`` part of
its plot state (kernel/plot_state.py, asked for only while that plot is watched), checked.

Each group names the groups it depends on; a name that is not among the groups read is left out
of the dependencies, so the graph's layout only ever sees groups it draws.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from distributed.scheduler import ALL_TASK_STATES

from dashdock.live.mirror_state import checked_count, checked_seconds

MAX_GROUPS = 1000  # as kernel/plot_state.py's MAX_PREFIXES
MAX_TYPES = 64


@dataclass(frozen=True)
class GroupPrefix:
    name: str


@dataclass(eq=False)
class MirroredGroup:
    """What the Task Groups graph reads of a group."""

    name: str
    prefix: GroupPrefix
    states: dict[str, int]
    nbytes_total: int
    duration: float
    types: set[str]
    dependencies: set[MirroredGroup] = field(default_factory=set)


def read_groups(given: object) -> dict[str, MirroredGroup] | None:
    """The checked groups; None when the answer has none (the plot was not watched)."""
    if not isinstance(given, Mapping):
        return None
    groups: dict[str, MirroredGroup] = {}
    named: dict[str, object] = {}
    for name, raw in list(given.items())[:MAX_GROUPS]:
        if not isinstance(name, str) or not isinstance(raw, Mapping):
            continue
        states = raw.get("states")
        counts = states if isinstance(states, Mapping) else {}
        types = raw.get("types")
        groups[name] = MirroredGroup(
            name=name,
            prefix=GroupPrefix(str(raw.get("prefix", ""))),
            states={str(state): checked_count(counts.get(state)) for state in ALL_TASK_STATES},
            nbytes_total=checked_count(raw.get("nbytes_total")),
            duration=checked_seconds(raw.get("duration")),
            types={str(t) for t in types[:MAX_TYPES]} if isinstance(types, (list, tuple)) else set(),
        )
        named[name] = raw.get("dependencies")
    for name, group in groups.items():
        listed = named[name]
        for dependency in listed[:MAX_GROUPS] if isinstance(listed, (list, tuple)) else ():
            found = groups.get(dependency) if isinstance(dependency, str) else None
            if found is not None:
                group.dependencies.add(found)
    return groups
