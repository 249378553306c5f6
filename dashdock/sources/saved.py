"""User-added sources kept across restarts: the sources file as the registry uses it.

Read once when the server starts, then changed one source at a time, in request order (an add and
a rename or removal that follows it land in that order). Never fatal: a file that cannot be kept
is reported in ``warnings`` and in the answer to the change, and the server goes on without it.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path

from dashdock.sources.model import DisabledSource, Source, saved_id_for
from dashdock.sources.store import Row, SourcesStore, StoreError
from dashdock.targets import Allowlist, TargetError, parse_dashboard_url


class SavedSources:
    def __init__(self, path: Path | None, log: logging.Logger) -> None:
        self._store = SourcesStore(path, saved_id_for) if path is not None else None
        # Why changes cannot be kept now; nothing is written then. Before ``read`` the file may still
        # hold an earlier version's JSON to import, which a write must not preempt.
        self._unsaved_reason = "the sources file has not been read yet" if path is not None else ""
        self._log = log
        self._lock = asyncio.Lock()
        self.warnings: list[str] = []  # for people: what happened to the file

    async def read(self) -> list[Row]:
        """The saved entries; a file that cannot be read at all is moved aside and people are told."""
        if self._store is None:
            return []
        # Holding the lock: a source added while the server starts is written after this.
        async with self._lock:
            try:
                rows, notes = await asyncio.to_thread(self._store.open)
                self._unsaved_reason = ""
            except StoreError as exc:
                self._unsaved_reason = str(exc)
                self.warnings.append(f"Sources added now will not be kept after a server restart: {exc}")
                self._log.warning("dashdock: cannot keep sources: %s", exc)
                return []
        for note in notes:
            self._log.warning("dashdock: %s", note)
        self.warnings += notes
        return rows

    async def save(self, source: Source) -> str:
        """Keep one source in the file; returns why it could not be, for people, or ""."""
        return await self._write(lambda store: store.put(source.id, source.entry()), removing=False)

    async def forget(self, source_id: str) -> str:
        return await self._write(lambda store: store.delete(source_id), removing=True)

    async def _write(self, change: Callable[[SourcesStore], None], removing: bool) -> str:
        if self._store is None:
            return ""
        store = self._store
        async with self._lock:
            if self._unsaved_reason:
                # A removal has nothing to take out: no source of this run came from that file.
                return "" if removing else self._unsaved_reason
            try:
                await asyncio.to_thread(change, store)
            except StoreError as exc:
                self._log.warning("dashdock: could not save sources: %s", exc)
                return str(exc)
        return ""


def restore(row: Row, allowlist: Allowlist) -> Source | DisabledSource:
    """A saved entry as a source, or, when it cannot be used now, as a disabled one with the reason."""
    try:
        entry = json.loads(row.entry)
    except ValueError:
        return _disabled(row.id, row.entry, "", "This saved entry is not readable.")
    url, name = (entry.get("url"), entry.get("name")) if isinstance(entry, dict) else (None, None)
    name = name if isinstance(name, str) and name else ""
    if not isinstance(url, str):
        return _disabled(row.id, name or row.entry, "", "This saved entry has no dashboard URL.")
    try:
        dashboard = parse_dashboard_url(url)
    except TargetError as exc:
        return _disabled(row.id, name or url, url, f"The saved URL cannot be used: {exc}")
    name = name or dashboard.target.netloc
    if not allowlist.allows(dashboard.target):
        return _disabled(
            row.id,
            name,
            dashboard.url,
            f"{dashboard.target.netloc} is no longer an allowed dashboard host. It is kept and comes "
            "back when c.DashdockApp.allowed_targets allows it again (after a server restart).",
        )
    source = Source(row.id, name, "url", dashboard)
    source.alerts = entry.get("alerts") is not False
    source.flavour = "bokeh" if entry.get("flavour") == "bokeh" else "dask"
    return source


def _disabled(source_id: str, name: str, url: str, reason: str) -> DisabledSource:
    # A long or binary-looking entry would make an unreadable row in the sidebar.
    shown = name if len(name) <= 80 else name[:79] + "…"
    return DisabledSource(source_id, shown, url, reason)
