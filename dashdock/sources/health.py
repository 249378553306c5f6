"""Health checks of many sources at a cost that does not grow with their number.

The sidebar asks for fresh health every few seconds (``GET sources?check=1``). Checking every
source on every poll would cost a connection per source per poll: ten thousand sources meant ten
thousand sockets at once. Instead each poll checks at most ``budget`` sources, those that need it
most (down or never checked first, then the longest unchecked), skips sources whose check is still
running, and waits at most ``deadline`` seconds; slower checks finish in the background and show
at the next poll. With fewer sources than the budget (the usual case) every poll checks them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol


class _Health(Protocol):
    status: str
    checked: float


class _Source(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def health(self) -> _Health: ...


class HealthRounds:
    """Chooses and runs the checks of one poll; ``check`` asks one source's ``/health``."""

    def __init__(self, check: Callable[[str], Awaitable[object]], budget: int, deadline: float) -> None:
        self._check = check
        self._budget = budget
        self._deadline = deadline
        self._running: dict[str, asyncio.Task[object]] = {}

    async def poll(self, sources: Iterable[_Source]) -> None:
        waiting = [source for source in sources if source.id not in self._running]
        # Down and unknown sources first (is one back?), then the least recently checked.
        waiting.sort(key=lambda source: (source.health.status == "up", source.health.checked))
        for source in waiting[: max(0, self._budget - len(self._running))]:
            task = asyncio.ensure_future(self._check(source.id))
            self._running[source.id] = task
            task.add_done_callback(self._forget(source.id))
        if self._running:
            await asyncio.wait(list(self._running.values()), timeout=self._deadline)

    def _forget(self, source_id: str) -> Callable[[object], None]:
        """A done callback: the check of ``source_id`` no longer runs."""

        def forget(_: object) -> None:
            self._running.pop(source_id, None)

        return forget

    def cancel(self) -> None:
        for task in list(self._running.values()):
            task.cancel()
