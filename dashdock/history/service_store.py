"""The history store as the server offers it: opened once at start, waited for meanwhile, read in threads.

The server answers requests before its extensions have finished starting: a request that comes
while the store is being opened waits for it (``OPEN_WAIT``) rather than hear "turned off". Every
read runs in a worker thread, so the store is never read on the server's event loop. The
recorder process, and what it records, are the service's (service.py).

A store found damaged while read ("database disk image is malformed") is set aside and a fresh one
opened, as opening does; the request answers a JSON error saying so, and ``problem`` keeps saying
it for GET history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

from dashdock.errors import Failed, NotFound, Unavailable
from dashdock.history.model import Alert, Run
from dashdock.history.store import HistoryStore
from dashdock.sqlite import is_damage

# How long a request waits for the store while the server opens it at its start.
OPEN_WAIT = 30.0

T = TypeVar("T")
P = ParamSpec("P")


class ServedStore:
    """The store the service opened (or why it could not), read in worker threads."""

    def __init__(self, enabled: bool, path: Path, log: logging.Logger) -> None:
        self.enabled = enabled
        self.path = path
        self._log = log
        self.store: HistoryStore | None = None
        self.problem: str | None = None  # why the store cannot be read, for the user
        self.replacements = 0  # how often a damaged store was replaced while the server ran
        # Set once the service's start() is done (the store opened, or found it cannot be).
        self._started = asyncio.Event()
        self._replacing = asyncio.Lock()  # one request replaces a store found damaged
        # Whether a damaged store is set aside here: not while another server records into it.
        self.replaces = True

    async def open(self) -> bool:
        """Open the store in a thread; False when it cannot be (``problem`` says why)."""
        try:
            self.store = await asyncio.to_thread(HistoryStore.open, self.path)
        except OSError as exc:
            self.problem = f"The history store {self.path} cannot be opened: {exc}"
            self._log.warning("dashdock: %s", self.problem)
            return False
        if self.store.warning:  # a damaged file was moved aside: the user is told too
            self.problem = self.store.warning
            self._log.warning("dashdock: %s", self.store.warning)
        return True

    async def _in_thread(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call`` in a worker thread; an SQLite error becomes one for people (and damage is mended)."""
        try:
            return await asyncio.to_thread(call, *args, **kwargs)
        except sqlite3.Error as exc:
            if isinstance(exc, sqlite3.DatabaseError) and is_damage(exc):
                raise await self._damaged(exc) from exc
            raise Failed(f"The history store {self.path} could not be read: {exc}") from exc

    async def _damaged(self, exc: sqlite3.Error) -> Failed:
        """The store read damaged: moved aside and a fresh one opened (once, however many requests
        saw it); the error the request answers."""
        damaged = self.store
        if not self.replaces:
            mends = "the server recording into it sets it aside"
            return Failed(f"The history store {self.path} is damaged ({exc}); {mends}.")
        async with self._replacing:
            if damaged is not None and self.store is damaged:
                self._log.warning("dashdock: the history store %s is damaged: %s", self.path, exc)
                try:
                    self.store = await asyncio.to_thread(damaged.replaced, str(exc))
                    self.problem = self.store.warning
                    self.replacements += 1  # the recorder, which writes the old file, is restarted
                except OSError as error:
                    self.store = None
                    self.problem = f"The history store {self.path} is damaged and cannot be replaced: {error}"
                self._log.warning("dashdock: %s", self.problem)
        return Failed(self.problem or f"The history store {self.path} is damaged ({exc}).")

    def started(self) -> None:
        """The service has started: requests stop waiting for the store."""
        self._started.set()

    async def require(self) -> HistoryStore:
        if self.enabled and not self._started.is_set():
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                await asyncio.wait_for(self._started.wait(), OPEN_WAIT)
            if not self._started.is_set():
                raise Unavailable("The history store is still being opened; try again in a moment.")
        if self.store is None:
            raise NotFound(self.problem or "History is turned off (c.DashdockApp.history = False).")
        return self.store

    def end_orphaned_runs(self, recording: Collection[str]) -> None:
        """Runs left open by a recorder that is gone end now: they are not live any more.

        ``recording``: the ids of the runs the recorder records. Blocks: call it in a thread.
        """
        store = self.store
        if store is None:
            return
        for run in store.runs():
            if run.live and run.id not in recording:
                store.end_run(run.id, time.time())

    async def enforce_retention(self, max_bytes: int, max_age: float) -> list[str]:
        """Delete the oldest runs beyond the size and age limits; the ids of those deleted."""
        store = await self.require()
        return await self._in_thread(store.enforce_retention, max_bytes, max_age, time.time())

    async def runs(self) -> list[Run]:
        store = await self.require()
        return await self._in_thread(store.runs)

    async def alerts(self, source: str | None, since: float | None, limit: int) -> list[Alert]:
        store = await self.require()
        return await self._in_thread(store.alerts, source, since, limit)

    async def find(self, run_or_source_id: str) -> Run:
        """A run by its id, or the newest run of a source (a live source's run goes by the source's id)."""
        runs = await self.runs()
        for run in runs:
            if run.id == run_or_source_id:
                return run
        of_source = [run for run in runs if run.source == run_or_source_id]
        if not of_source:
            raise NotFound(f"No recorded run {run_or_source_id}.")
        return max(of_source, key=lambda run: run.start)

    async def delete_run(self, run_id: str) -> None:
        store = await self.require()
        await self._in_thread(store.delete_run, run_id)

    async def read(self, produce: Callable[[HistoryStore], T]) -> T:
        """Run a reading function against the store in a worker thread."""
        store = await self.require()
        return await self._in_thread(produce, store)

    async def stream(self, produce: Callable[[HistoryStore], Iterator[bytes]]) -> AsyncIterator[bytes]:
        """The chunks of an export, each made in a worker thread; stops when the consumer does."""
        store = await self.require()
        chunks = produce(store)
        try:
            while (chunk := await self._in_thread(next, chunks, None)) is not None:
                yield chunk
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                await asyncio.to_thread(close)
