"""The sources a server is configured with (``initial_sources``), added as it starts.

A dashboard that is not up yet (a cluster starting with the server, a busy one) is asked again
for a while; a URL that can never be a source is logged at once. Nothing here delays the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

from dashdock.errors import DashdockError, NeedsCredentials, NotADashboard, TimedOut, Unavailable
from dashdock.sources.model import Source

# A dashboard given in initial_sources that is not up yet is asked again this often, this long.
RETRY = 2.0
WAIT = 120.0

InitialSource = str | dict[str, str]  # a URL, or {"url", "name"}


class Adds(Protocol):
    """What adds a source by URL (the registry)."""

    async def add_url(
        self, text: str, name: str | None = None, *, save: bool = True
    ) -> tuple[Source, bool]: ...


async def add_initial(registry: Adds, entries: list[InitialSource], log: logging.Logger) -> None:
    """Add every entry, each on its own schedule."""
    await asyncio.gather(*(_add_one(registry, entry, log) for entry in entries))


async def _add_one(registry: Adds, entry: InitialSource, log: logging.Logger) -> None:
    url, name = (entry, None) if isinstance(entry, str) else (entry.get("url", ""), entry.get("name"))
    deadline = time.monotonic() + WAIT
    while True:
        try:
            # Not saved: the configuration adds it at every start, and it goes when it leaves that.
            source, _ = await registry.add_url(url, name or None, save=False)
            log.info("dashdock: source %s registered", source.name)
            return
        except NeedsCredentials as exc:  # the Lab asks for them when the user adds it
            log.warning("dashdock: initial source not added: %s", exc.reason)
            return
        except (Unavailable, TimedOut, NotADashboard) as exc:
            if time.monotonic() > deadline:
                log.warning("dashdock: initial source not added: %s", exc.reason)
                return
        except DashdockError as exc:
            log.warning("dashdock: initial source not added: %s", exc.reason)
            return
        await asyncio.sleep(RETRY)
