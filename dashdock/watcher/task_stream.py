"""Reading a scheduler's task stream without ever losing a task silently.

The scheduler's task stream is a ring buffer with an append counter (``get_task_stream_index``).
Each read asks for the records from one before the cursor; when the first one returned is the
record read last, nothing was lost (and the counter need not be asked). When it is not, the
buffer overflowed, and a second read starting where the newest returned record can be at the
earliest finds where it really is: its offset is exactly how many tasks were missed, which the
recorder writes as a gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashdock.watcher.scheduler import Scheduler, fingerprint


class Restarted(Exception):
    """The scheduler's counter went back: it is another scheduler now, behind the same address."""


class TaskStreamReader:
    """The records a scheduler finished since the last read, and how many of them were lost."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.cursor: int | None = None  # task-stream index of the next record to read
        self.last: tuple[object, ...] | None = None  # fingerprint of the record at cursor - 1
        self.longest = 0  # most records one read returned: the buffer holds at least this many

    async def begin(self) -> None:
        """Reading begins at the oldest record the scheduler still holds: a computation that started
        before the recorder attached (a cluster computing the moment it answered) is recorded from
        its first task, up to the buffer's length (Dask keeps the last 100,000); what it dropped
        before is counted as missed. Asking also makes a scheduler that kept no task stream start one
        (dashdock starts it with each cluster and client it knows of)."""
        await self.scheduler.task_stream_index()
        self.cursor = 0

    async def read(self) -> tuple[list[Mapping[str, Any]], int]:
        """New task-stream records since the last read, and how many were missed."""
        if self.last is not None and self.cursor is not None:
            # One call while nothing is lost: the records from the one read last, which comes first.
            # Reads for open drawn pages come ten times a second, and each call costs the
            # scheduler a message. Anything else (none, another first) is checked on the counter.
            following = self._following(await self.scheduler.task_stream(self.cursor - 1))
            if following is not None:
                return following, 0
        index = await self.scheduler.task_stream_index()
        if self.cursor is None:  # the scheduler did not answer begin(): from the buffer's start too
            self.cursor = 0
        if index < self.cursor:
            raise Restarted(
                f"The scheduler at {self.scheduler.comm.address} was restarted (its task stream began again)."
            )
        if index == self.cursor:
            return [], 0
        if self.last is not None:
            records = await self.scheduler.task_stream(self.cursor - 1)
            following = self._following(records)
            if following is not None:
                return following, 0
            # The record read last is gone: the buffer overflowed and returned its whole content.
            self.longest = max(self.longest, len(records))
            return await self._locate(list(records), index)
        records = await self.scheduler.task_stream(self.cursor)
        if len(records) < index - self.cursor:
            # Fewer than had finished before we asked: the buffer dropped the oldest.
            self.longest = max(self.longest, len(records))
            return await self._locate(list(records), index)
        # Otherwise they start at the cursor, unless the buffer overflowed between our two calls,
        # which takes more tasks finishing within milliseconds than it holds.
        self.cursor += len(records)
        return self._took(list(records)), 0

    def _following(self, records: list[Mapping[str, Any]]) -> list[Mapping[str, Any]] | None:
        """The records after the one read last, when ``records`` begin with it; else None."""
        if not records or fingerprint(records[0]) != self.last:
            return None
        assert self.cursor is not None
        new = list(records[1:])
        self.cursor += len(new)
        return self._took(new)

    def _took(self, new: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        if new:
            self.last = fingerprint(new[-1])
            self.longest = max(self.longest, len(new))
        return new

    async def _locate(self, new: list[Mapping[str, Any]], index: int) -> tuple[list[Mapping[str, Any]], int]:
        """Where records returned from an unknown start are, so the missed ones are counted exactly.

        They are the indices [end - len(new), end). A second read from ``index - 1`` (``index`` was
        read before the first, so ``end >= index``) starts exactly there when it is shorter than
        the buffer, which holds at least ``longest`` records; the newest record's offset in it
        gives ``end``. Failing that, the counter read now bounds it: what lies between is counted
        as missed and never recorded, so recorded + missed still equals the tasks that ran.
        """
        assert self.cursor is not None
        if new:
            check = await self.scheduler.task_stream(index - 1)
            newest = fingerprint(new[-1])
            if len(check) < self.longest:
                for offset, record in enumerate(check):
                    if fingerprint(record) == newest:
                        end = index + offset
                        more = list(check[offset + 1 :])
                        missed = end - len(new) - self.cursor
                        self.cursor = end + len(more)
                        return self._took(new + more), missed
        now_index = await self.scheduler.task_stream_index()
        missed = max(0, now_index - self.cursor - len(new))
        self.cursor, self.last = now_index, None
        if new:
            self.longest = max(self.longest, len(new))
        return new, missed
