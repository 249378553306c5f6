"""The dashboards this server knows: user-added URLs (persisted), their health and plot catalogs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from .catalog import Plot, parse_catalog
from .errors import UserFacingError
from .targets import Allowlist, DashboardURL, Target, TargetError, parse_dashboard_url
from .upstream import UpstreamClient, UpstreamError
from .workers import Worker, judge, parse_worker_table

# How deep a typed URL may sit below the dashboard root (``/proxy/8787/status`` is 3).
_MAX_ROOT_SEARCH = 6


class SourceError(UserFacingError):
    """Adding or using a source failed."""


@dataclass
class Health:
    status: str = "unknown"  # "up", "down" or "unknown"
    message: str = ""
    checked: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message, "checked": self.checked}


@dataclass
class Source:
    """A dashboard: the target to connect to and the path of the dashboard root on it."""

    id: str
    name: str
    kind: str  # "url" (added by a user), "cluster" (managed), "kernel" (a notebook's client)
    dashboard: DashboardURL
    health: Health = field(default_factory=Health)
    lost: int = 0  # how often an open plot lost its dashboard connection (a restart, a crash)

    @property
    def target(self) -> Target:
        return self.dashboard.target

    @property
    def root_path(self) -> str:
        return self.dashboard.path

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "url": self.dashboard.url,
            "health": self.health.to_json(),
            "lost": self.lost,
        }


def source_id_for(url: str) -> str:
    """Stable id of a dashboard URL, so re-adding it (or restoring a layout) finds the same source."""
    return hashlib.sha1(url.encode()).hexdigest()[:12]


def _root_candidates(path: str) -> list[str]:
    """'/a/b/status' -> ['/a/b/status', '/a/b', '/a', '']: a page of a dashboard or the root itself."""
    segments = [segment for segment in path.split("/") if segment]
    candidates = ["/" + "/".join(segments[:end]) if end else "" for end in range(len(segments), -1, -1)]
    return candidates[:_MAX_ROOT_SEARCH]


class SourceRegistry:
    """Sources by id. User-added sources are saved to ``store`` so they survive a server restart."""

    def __init__(
        self, client: UpstreamClient, allowlist: Allowlist, store: Path | None, log: logging.Logger
    ) -> None:
        self._client = client
        self._allowlist = allowlist
        self._store = store
        self._log = log
        self._sources: dict[str, Source] = {}
        self._save_lock = asyncio.Lock()

    def list(self) -> list[Source]:
        return list(self._sources.values())

    def get(self, source_id: str) -> Source:
        try:
            return self._sources[source_id]
        except KeyError:
            raise SourceError(404, "There is no source with this id.") from None

    def knows_target(self, target: Target) -> bool:
        return any(source.target == target for source in self._sources.values())

    async def add_url(self, text: str, name: str | None = None) -> tuple[Source, bool]:
        """Find the dashboard a typed URL belongs to and register it; returns (source, created)."""
        try:
            typed = parse_dashboard_url(text)
        except TargetError as exc:
            raise SourceError(400, str(exc)) from exc
        if not self._allowlist.allows(typed.target):
            raise SourceError(
                403,
                f"{typed.target.netloc} is not an allowed dashboard host. "
                "An administrator can allow it with c.DashdockApp.allowed_targets.",
            )
        root = await self._find_root(typed)
        source_id = source_id_for(root.url)
        existing = self._sources.get(source_id)
        if existing is not None:
            if name:
                existing.name = name
                await self._save()
            return existing, False
        source = Source(source_id, name or root.target.netloc, "url", root, Health("up", "", time.time()))
        self._sources[source_id] = source
        await self._save()
        return source, True

    def point(self, source_id: str, name: str, kind: str, dashboard_url: str) -> Source:
        """Create a source the server runs or found (a managed cluster, a notebook's client; trusted,
        never saved), or move it to another dashboard. A move counts as a loss for its open
        plots, so their panes reload onto it."""
        dashboard = parse_dashboard_url(dashboard_url)
        root = DashboardURL(dashboard.target, dashboard.path.removesuffix("/status"))
        source = self._sources.get(source_id)
        if source is None:
            source = Source(source_id, name, kind, root, Health("up", "", time.time()))
            self._sources[source_id] = source
        elif source.dashboard != root:
            source.dashboard = root
            source.lost += 1
            self._mark(source, "unknown", "")
        source.name = name
        return source

    def unregister(self, source_id: str) -> None:
        self._sources.pop(source_id, None)

    async def remove(self, source_id: str) -> None:
        source = self.get(source_id)
        if source.kind == "cluster":
            raise SourceError(409, "This is a managed cluster's dashboard: shut the cluster down instead.")
        if source.kind == "kernel":
            raise SourceError(
                409, "This is a notebook's Dask client: it goes when the client or its kernel closes."
            )
        del self._sources[source_id]
        await self._save()

    async def plots(self, source_id: str) -> list[Plot]:
        source = self.get(source_id)
        try:
            document = await self._client.get_json(source.dashboard.url + "/individual-plots.json")
            plots = parse_catalog(document)
        except (UpstreamError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, UpstreamError) else "It did not list its plots."
            self._mark(source, "down", reason)
            raise SourceError(502, f"The dashboard of {source.name} is not available: {reason}") from exc
        self._mark(source, "up", "")
        return plots

    async def workers(self, source_id: str) -> list[Worker]:
        """The source's workers, from the scheduler's worker table, each judged by the allowlist."""
        source = self.get(source_id)
        try:
            page = await self._client.get_text(source.dashboard.url + "/info/main/workers.html")
        except UpstreamError as exc:
            if not exc.unreachable:
                raise SourceError(
                    502, f"The scheduler of {source.name} does not list its workers: {exc.reason}"
                ) from exc
            self._mark(source, "down", exc.reason)
            raise SourceError(502, f"The dashboard of {source.name} is not available: {exc.reason}") from exc
        return judge(parse_worker_table(page), self._allowlist)

    async def check_health(self, source_id: str) -> Source:
        """Ask the scheduler's cheap ``/health`` endpoint whether it is up."""
        source = self.get(source_id)
        try:
            await self._client.get_text(source.dashboard.url + "/health")
        except UpstreamError as exc:
            self._mark(source, "down", exc.reason)
        else:
            self._mark(source, "up", "")
        return source

    async def check_all(self) -> None:
        await asyncio.gather(*(self.check_health(source_id) for source_id in list(self._sources)))

    def note_lost(self, source_id: str) -> None:
        """A relay lost its dashboard while the browser still listened: the scheduler went away."""
        source = self._sources.get(source_id)
        if source is not None:
            source.lost += 1
            self._mark(source, "down", "The connection to the dashboard was lost.")

    def _mark(self, source: Source, status: str, message: str) -> None:
        source.health = Health(status, message, time.time())

    async def _find_root(self, typed: DashboardURL) -> DashboardURL:
        for candidate in _root_candidates(typed.path):
            root = DashboardURL(typed.target, candidate)
            try:
                document = await self._client.get_json(root.url + "/individual-plots.json")
            except UpstreamError as exc:
                if exc.unreachable:
                    raise SourceError(502, f"Could not reach {typed.target.netloc}: {exc.reason}") from exc
                continue
            if isinstance(document, dict) and parse_catalog(document):
                return root
        raise SourceError(
            422, f"{typed.target.netloc} answers, but not as a Dask dashboard (it lists no plots)."
        )

    async def load(self) -> None:
        """Read the saved user-added sources; a broken file is logged and ignored, never fatal."""
        if self._store is None or not self._store.exists():
            return
        try:
            saved = json.loads(await asyncio.to_thread(self._store.read_text))
            for entry in saved["sources"]:
                if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
                    raise ValueError("an entry is not {'url': str, 'name': str}")
                dashboard = parse_dashboard_url(entry["url"])
                source_id = source_id_for(dashboard.url)
                if self._allowlist.allows(dashboard.target):
                    self._sources[source_id] = Source(source_id, str(entry["name"]), "url", dashboard)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            self._log.warning("dashdock: ignoring unreadable sources file %s: %s", self._store, exc)

    async def _save(self) -> None:
        if self._store is None:
            return
        document = {
            "sources": [
                {"url": source.dashboard.url, "name": source.name}
                for source in self._sources.values()
                if source.kind == "url"
            ]
        }
        async with self._save_lock:
            try:
                await asyncio.to_thread(_write_atomically, self._store, json.dumps(document, indent=1))
            except OSError as exc:
                self._log.warning("dashdock: could not save sources to %s: %s", self._store, exc)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(text)
    temporary.replace(path)
