"""What a poll of the sources gets: all of them, or only what changed since its previous poll.

The sidebar polls ``GET sources?check=1`` every few seconds. Sending every source each time costs
the server a JSON document that grows with the number of sources (10,000 sources: 1.8 MB and
about 50 ms of the event loop per poll), so a poll that names the version it last saw
(``since``) gets the ids of all sources, in order, and only the sources whose visible state
changed after it. A version is ``{epoch}.{counter}``: the epoch is drawn when the server starts, so
a poll from before a restart gets everything again.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterable
from typing import Protocol

EPOCH = secrets.token_hex(4)
_counter = itertools.count(1)
_current = 0


def next_version() -> int:
    """A new version for a source whose visible state changed."""
    global _current
    _current = next(_counter)
    return _current


class _Described(Protocol):
    def to_json(self) -> dict[str, object]: ...


class _Listed(_Described, Protocol):
    id: str
    version: int


def listing(
    usable: Iterable[_Listed], disabled: Iterable[_Described], warnings: list[str], since: str | None
) -> dict[str, object]:
    """The answer to a poll; ``since`` is the version the poller last saw, if any."""
    usable = list(usable)
    disabled = list(disabled)
    version = f"{EPOCH}.{_current}"
    seen = _seen_counter(since)
    # Disabled sources are few and never change while the server runs: they always come whole.
    if seen is None:
        sources = [source.to_json() for source in usable]
        return {
            "version": version,
            "sources": sources + [s.to_json() for s in disabled],
            "warnings": warnings,
        }
    changed = [source.to_json() for source in usable if source.version > seen]
    return {
        "version": version,
        "ids": [source.id for source in usable],
        "sources": changed + [source.to_json() for source in disabled],
        "warnings": warnings,
    }


def _seen_counter(since: str | None) -> int | None:
    if not since:
        return None
    epoch, _, counter = since.partition(".")
    if epoch != EPOCH or not counter.isdigit() or int(counter) > _current:
        return None
    return int(counter)
