"""When a source's scheduler may be recorded: a run is begun at most once a minute per scheduler.

A run the recorder ended (its scheduler stopped answering, its address cannot be read) is not begun
again for ``RETRY_AFTER``, else a source whose scheduler is gone would leave an empty run every few
seconds. Nor is a run of the same scheduler begun again that soon after the last began: a
dashboard whose health flaps, or whose info page spells its scheduler's address another way each
time (addresses.py), would make a run, and raise its alerts again, at every sync (issue 40). A
scheduler that really changed (another address: a restarted cluster) is recorded at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from dashdock.history.addresses import scheduler_key

RETRY_AFTER = 60.0


class RunPacing:
    """What the service remembers of each source's runs to decide whether another may begin."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.paused: set[str] = set()  # sources the user stopped recording
        self._ended: dict[str, float] = {}  # source id -> when the recorder last ended its run
        self._begun: dict[str, tuple[float, str | None]] = {}  # source id -> (when, scheduler_key)

    def may_begin(self, source_id: str, scheduler: str | None = None) -> bool:
        if source_id in self.paused:
            return False
        now = self._clock()
        ended = self._ended.get(source_id)
        if ended is not None and now - ended < RETRY_AFTER:
            return False
        since, began = self._begun.get(source_id, (float("-inf"), None))
        return not (began == scheduler_key(scheduler) and now - since < RETRY_AFTER)

    def began(self, source_id: str, scheduler: str) -> None:
        self._begun[source_id] = (self._clock(), scheduler_key(scheduler))

    def ended(self, source_id: str) -> None:
        """The recorder ended the source's run: its scheduler is not looked for again for a while."""
        self._ended[source_id] = self._clock()

    def restarted(self, source_id: str) -> None:
        """The run ended because its scheduler was restarted: the new one is recorded at once."""
        self._begun.pop(source_id, None)

    def resume(self, source_id: str) -> None:
        """Recorded again at once: the user switched recording back on."""
        self.paused.discard(source_id)
        self._ended.pop(source_id, None)
        self._begun.pop(source_id, None)

    def again_now(self, source_ids: list[str]) -> None:
        """The recorder itself went (died, or restarted on a new store): its runs resume at once."""
        self._begun.clear()
        for source_id in source_ids:
            self._ended.pop(source_id, None)
