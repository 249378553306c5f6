"""Which schedulers the history may record: those every part of the server knows a source by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class KnowsSchedulers(Protocol):
    """A part that knows sources by their scheduler (the registry, kernels' clients, clusters)."""

    def schedulers(self) -> dict[str, str]: ...


def recordable_schedulers(*parts: KnowsSchedulers) -> Callable[[], dict[str, str]]:
    """Source id -> scheduler address, asked of ``parts`` at each sync (later parts win a tie)."""

    def schedulers() -> dict[str, str]:
        found: dict[str, str] = {}
        for part in parts:
            found.update(part.schedulers())
        return found

    return schedulers
