"""The recorder process as the server runs it: started under its cap, spoken to over pipes, and
started again after dying, a bounded number of times, waiting longer each time.

What the recorder's runs mean for the sources (service.py) is not here: only the process.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
from typing import Any

from dashdock.history.settings import HistorySettings

# A recorder that keeps dying is not started again for ever: the user gets the reason instead.
MAX_RESTARTS = 5
# Seconds before restart n (1, 2, 4, ... up to the last); a recorder that lived this long since its
# last start has its count of restarts forgotten.
RESTART_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0)
RESTARTS_FORGOTTEN_AFTER = 600.0


class RecorderProcess:
    """One recorder subprocess at a time, and when the next may start."""

    def __init__(self, settings: HistorySettings, log: logging.Logger) -> None:
        self.settings = settings
        self._log = log
        self.process: asyncio.subprocess.Process | None = None
        self._restarts = 0
        self._started_at = 0.0  # monotonic time the current recorder was started
        self._restart_at: float | None = None  # when a recorder that died may be started again
        self.problem: str | None = None  # a recorder that kept dying, for the user

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def given_up(self) -> bool:
        return self._restarts > MAX_RESTARTS

    @property
    def died_unnoticed(self) -> bool:
        """It exited, and ``died`` has not been told yet."""
        return self.process is not None and not self.running and self._restart_at is None

    def may_start(self) -> bool:
        """Not given up, and the back-off after the last death is over."""
        if self.given_up:
            return False
        if self._restart_at is not None:
            if time.monotonic() < self._restart_at:
                return False
            self._restart_at = None
        return True

    async def start(self, computation_seconds: float) -> asyncio.subprocess.Process:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dashdock.watcher",
            str(self.settings.store),
            f"--computation-seconds={computation_seconds}",
            f"--max-alerts={self.settings.max_alerts}",
            f"--max-memory={self.settings.recorder_max_memory}",
            *(["--plots"] if self.settings.draw_plots else []),
            *([] if self.settings.install_plugin else ["--no-install"]),
            f"--live-tick={self.settings.live_tick}",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # Fewer malloc arenas: each reserves 64 MiB of address space, which the cap counts.
            # The C library's malloc for Python's objects: what closed pages used can be given
            # back to the system (live/give_back.py).
            env={**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONMALLOC": "malloc"},
        )
        self._started_at = time.monotonic()
        return self.process

    def died(self) -> str:
        """Count the death and plan the restart; returns why it died, for the user."""
        code = self.process.returncode if self.process is not None else None
        cap = self.settings.recorder_max_memory
        why = f"exit code {code}" + (f"; its memory cap is {cap // 2**20} MiB" if cap else "")
        self._log.warning("dashdock: the history recorder stopped (%s); it is started again", why)
        if time.monotonic() - self._started_at >= RESTARTS_FORGOTTEN_AFTER:
            self._restarts = 0
        self._restarts += 1
        if self.given_up:
            if self.problem is None:
                self.problem = "The history recorder stopped working; see the server log."
                self._log.error("dashdock: the history recorder exited %d times; not restarted", MAX_RESTARTS)
        else:
            wait = RESTART_BACKOFF[min(self._restarts, len(RESTART_BACKOFF)) - 1]
            self._restart_at = time.monotonic() + wait
        return why

    def send(self, command: dict[str, Any]) -> None:
        if self.process is None or self.process.stdin is None or not self.running:
            return
        self.process.stdin.write(json.dumps(command).encode() + b"\n")

    def forget(self) -> None:
        """The recorder was quit on purpose: the next may start at once, and it is no death."""
        if self.process is not None and not self.running:
            self.process = None

    async def quit(self, timeout: float) -> None:
        """Ask it to end its runs and exit; killed when it does not within ``timeout``."""
        if self.process is None or not self.running:
            return
        try:
            self.send({"op": "quit"})
        except OSError:
            pass
        try:
            await asyncio.wait_for(self.process.wait(), timeout)
        except TimeoutError:
            self.process.kill()
