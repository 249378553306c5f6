"""One Jupyter server records into a history file at a time.

Two servers of one user (a second ``jupyter lab``, the demo started twice) share the default file
in Jupyter's data directory. Each would start a recorder for the sources it knows and, when it
starts, end the runs it finds open as left by a recorder that died: the other server's live runs,
which then went on growing as ended runs. The server that holds an exclusive lock on
``<file>.recording`` records; another reads what it recorded, says why it records nothing, and
takes over once the lock is free. (Not ``<file>.lock``: every process opening the store takes that
one for a moment, and held for a server's life it kept the server's own recorder out.) The
operating system drops the lock with its process, however that ends, so a server started after a
crash records (and ends the runs left open, as before).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks here; every server records, as before
    fcntl = None  # type: ignore[assignment]

# What the holder writes about itself, for the message another server shows.
MAX_HOLDER_TEXT = 200


class RecordingLock:
    """The lock on a history file's recording, held from ``acquire`` until ``release``."""

    def __init__(self, store: Path) -> None:
        self.path = store.with_name(store.name + ".recording")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> str | None:
        """Take the lock if it is free: None when this server holds it now, else who does (in
        words). Blocks briefly on the file system: call it in a thread."""
        if self._fd is not None or fcntl is None:
            return None
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None  # no lock file where the store is: opening the store says what is wrong
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, MAX_HOLDER_TEXT, 0).decode(errors="replace").strip()
            os.close(fd)
            return holder or "another process"
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()}, since {time.strftime('%Y-%m-%d %H:%M')}".encode(), 0)
        self._fd = fd
        return None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops its lock
            self._fd = None


class RecordingOwner:
    """Whether this server records into ``store``: ``elsewhere`` says why not, for the user."""

    def __init__(self, store: Path, retry_every: float) -> None:
        self.store = store
        self.elsewhere: str | None = None
        self._lock = RecordingLock(store)
        self._retry_every = retry_every

    @property
    def held(self) -> bool:
        return self._lock.held

    async def claim(self) -> bool:
        """Take the file's recording if it is free; else ``elsewhere`` says who has it."""
        holder = await asyncio.to_thread(self._lock.acquire)
        self.elsewhere = (
            None
            if holder is None
            else f"Another Jupyter server ({holder}) records into {self.store}: this one shows what "
            "it recorded but records nothing until that server stops. To record from both, give this "
            "one a file of its own (c.DashdockApp.history_file)."
        )
        return holder is None

    async def when_free(self) -> None:
        """Returns once this server holds the recording, trying every ``retry_every`` seconds:
        nothing signals a lock let go of in another process, and a thread blocked on it would hold
        up this server's own exit."""
        while not await self.claim():  # noqa: ASYNC110
            await asyncio.sleep(self._retry_every)

    def release(self) -> None:
        self._lock.release()
