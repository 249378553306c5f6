"""Work run every few seconds, or at once for a caller that needs its next run's result.

The history service compares what should be recorded with what is every ``SYNC_INTERVAL``; a page
that needs to know whether its source is recorded (service.py, ``drawn_when_known``) asks for the
next comparison now and waits for it, rather than for the interval.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable


class Periodic:
    """Runs its work every ``interval`` seconds, and sooner when ``next_run`` asks."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._wake = asyncio.Event()
        self._next: asyncio.Future[None] | None = None  # resolved when the next run has finished

    async def run_forever(self, work: Callable[[], Awaitable[None]]) -> None:
        """Runs ``work`` (which must not raise) until cancelled."""
        while True:
            self._wake.clear()
            # This run answers whoever waited for the next one; later callers wait for the one after.
            done, self._next = self._next, None
            try:
                await work()
            finally:
                if done is not None and not done.done():
                    done.set_result(None)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)

    async def next_run(self, timeout: float) -> None:
        """Returns when a run begun after this call has finished, or after ``timeout`` seconds; that
        run begins now (once the one under way, if any, has finished)."""
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        waited = self._next
        self._wake.set()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(waited), timeout)
