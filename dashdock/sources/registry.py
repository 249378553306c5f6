"""The dashboards this server knows: user-added URLs (kept in ``store``), their health and plot catalogs."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from dashdock.errors import Conflict, Invalid, NotADashboard, NotFound, Unavailable, host_not_allowed
from dashdock.ids import derived_source_id
from dashdock.sources.catalog import Plot, parse_catalog
from dashdock.sources.health import HealthRounds
from dashdock.sources.listing import next_version
from dashdock.sources.store import Row, SourcesStore, StoreError
from dashdock.sources.workers import Worker, judge, parse_worker_table
from dashdock.targets import Allowlist, DashboardURL, Target, TargetError, parse_dashboard_url
from dashdock.upstream import UnreadableDocument, UpstreamClient, UpstreamError

# How deep a typed URL may sit below the dashboard root (``/proxy/8787/status`` is 3).
_MAX_ROOT_SEARCH = 6


@dataclass
class Health:
    status: str = "unknown"  # "up", "down" or "unknown"
    message: str = ""
    checked: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "message": self.message, "checked": self.checked}


_VISIBLE_FIELDS = frozenset({"name", "kind", "dashboard", "lost", "warning"})


@dataclass
class Source:
    """A dashboard: the target to connect to and the path of the dashboard root on it."""

    id: str
    name: str
    kind: str  # "url" (added by a user), "cluster" (managed), "kernel" (a notebook's client)
    dashboard: DashboardURL
    health: Health = field(default_factory=Health)
    lost: int = 0  # how often an open plot lost its dashboard connection (a restart, a crash)
    warning: str = ""  # for people: the last change to this source could not be saved
    version: int = field(default=0, init=False, compare=False)  # of its last visible change (listing.py)

    def __post_init__(self) -> None:
        self.version = next_version()

    def __setattr__(self, name: str, value: object) -> None:
        # Every visible change gets a new version, wherever it is made; a health check that finds
        # what the last one found (only its time moves) is no change.
        old = self.__dict__.get(name)
        object.__setattr__(self, name, value)
        if name in _VISIBLE_FIELDS and old != value:
            object.__setattr__(self, "version", next_version())
        elif name == "health" and isinstance(old, Health) and isinstance(value, Health):
            if (old.status, old.message) != (value.status, value.message):
                object.__setattr__(self, "version", next_version())

    @property
    def target(self) -> Target:
        return self.dashboard.target

    @property
    def root_path(self) -> str:
        return self.dashboard.path

    def to_json(self) -> dict[str, object]:
        described: dict[str, object] = {
            "id": self.id,
            "name": self.name,
            "kind": self.kind,
            "url": self.dashboard.url,
            "health": self.health.to_json(),
            "lost": self.lost,
        }
        if self.warning:
            described["warning"] = self.warning
        return described

    def entry(self) -> str:
        """What the sources file keeps of it."""
        return json.dumps({"url": self.dashboard.url, "name": self.name})


@dataclass
class DisabledSource:
    """A saved source that cannot be used now: kept in the file as it is, listed with the reason,
    and unknown to the proxy. It can be removed; it comes back by itself once it is usable again
    (a host allowed again) at the next start."""

    id: str
    name: str
    url: str
    reason: str

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": "url",
            "url": self.url,
            "disabled": self.reason,
            "health": Health("unknown", self.reason).to_json(),
            "lost": 0,
        }


def source_id_for(url: str) -> str:
    """Stable id of a dashboard URL, so re-adding it (or restoring a layout) finds the same source."""
    return derived_source_id(url)


def saved_id_for(entry: object) -> str:
    """The id a saved entry is kept under: its source's id when it has a usable URL, else one made
    from the entry itself (so that it can still be listed and removed)."""
    if isinstance(entry, dict) and isinstance(entry.get("url"), str):
        with suppress(TargetError):
            return source_id_for(parse_dashboard_url(entry["url"]).url)
    return derived_source_id(json.dumps(entry, sort_keys=True))


def _root_candidates(path: str) -> list[str]:
    """'/a/b/status' -> ['/a/b/status', '/a/b', '/a', '']: a page of a dashboard or the root itself."""
    segments = [segment for segment in path.split("/") if segment]
    candidates = ["/" + "/".join(segments[:end]) if end else "" for end in range(len(segments), -1, -1)]
    return candidates[:_MAX_ROOT_SEARCH]


class SourceRegistry:
    """Sources by id. User-added sources are saved to ``store`` so they survive a server restart."""

    def __init__(
        self,
        client: UpstreamClient,
        allowlist: Allowlist,
        store: Path | None,
        log: logging.Logger,
        checks_per_poll: int = 64,
    ) -> None:
        self._client = client
        self._allowlist = allowlist
        self._store = SourcesStore(store, saved_id_for) if store is not None else None
        # Why changes cannot be kept now; nothing is written then. Before ``load`` the file may still
        # hold an earlier version's JSON to import, which a write must not preempt.
        self._unsaved_reason = "the sources file has not been read yet" if store is not None else ""
        self._log = log
        self._sources: dict[str, Source] = {}
        self._disabled: dict[str, DisabledSource] = {}
        self._warnings: list[str] = []
        self._save_lock = asyncio.Lock()
        self._health_rounds = HealthRounds(self._check_if_present, checks_per_poll, client.timeouts.json)

    def list(self) -> list[Source]:
        return list(self._sources.values())

    def disabled(self) -> list[DisabledSource]:
        return list(self._disabled.values())

    def find_disabled(self, source_id: str) -> DisabledSource | None:
        return self._disabled.get(source_id)

    @property
    def warnings(self) -> list[str]:
        """What people should know about the sources file (moved aside, not usable)."""
        return list(self._warnings)

    def get(self, source_id: str) -> Source:
        try:
            return self._sources[source_id]
        except KeyError:
            if (disabled := self._disabled.get(source_id)) is not None:
                raise Conflict(f"{disabled.name} is disabled: {disabled.reason}") from None
            raise NotFound("There is no source with this id.") from None

    def knows_target(self, target: Target) -> bool:
        return any(source.target == target for source in self._sources.values())

    async def add_url(self, text: str, name: str | None = None) -> tuple[Source, bool]:
        """Find the dashboard a typed URL belongs to and register it; returns (source, created)."""
        try:
            typed = parse_dashboard_url(text)
        except TargetError as exc:
            raise Invalid(str(exc)) from exc
        if not self._allowlist.allows(typed.target):
            raise host_not_allowed(typed.target.netloc)
        root = await self._find_root(typed)
        source_id = source_id_for(root.url)
        existing = self._sources.get(source_id)
        if existing is not None:
            if name:
                existing.name = name
                if existing.kind == "url":
                    problem = await self._save(existing)
                    existing.warning = problem and f"The new name of {name} was not saved: {problem}"
            return existing, False
        source = Source(source_id, name or root.target.netloc, "url", root, Health("up", "", time.time()))
        self._sources[source_id] = source
        problem = await self._save(source)
        source.warning = problem and (
            f"{source.name} was added, but not saved: it will be gone after a server restart ({problem})."
        )
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

    async def remove(self, source_id: str) -> str:
        """Forget a user-added source, disabled or not; returns a warning for people when the sources
        file still has it (it would come back after a restart), else ""."""
        disabled = self._disabled.pop(source_id, None)
        if disabled is not None:
            name = disabled.name
        else:
            source = self.get(source_id)
            if source.kind == "cluster":
                raise Conflict("This is a managed cluster's dashboard: shut the cluster down instead.")
            if source.kind == "kernel":
                raise Conflict(
                    "This is a notebook's Dask client: it goes when the client or its kernel closes."
                )
            del self._sources[source_id]
            name = source.name
        problem = await self._forget(source_id)
        return problem and (
            f"{name} was removed, but it is still in the sources file and will come back after a "
            f"server restart ({problem})."
        )

    async def plots(self, source_id: str) -> list[Plot]:
        source = self.get(source_id)
        try:
            document = await self._client.get_json(source.dashboard.url + "/individual-plots.json")
            plots = parse_catalog(document)
        except (UpstreamError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, UpstreamError) else "It did not list its plots."
            self._mark(source, "down", reason)
            raise Unavailable(f"The dashboard of {source.name} is not available: {reason}") from exc
        self._mark(source, "up", "")
        return plots

    async def workers(self, source_id: str) -> list[Worker]:
        """The source's workers, from the scheduler's worker table, each judged by the allowlist."""
        source = self.get(source_id)
        try:
            page = await self._client.get_text(source.dashboard.url + "/info/main/workers.html")
        except UpstreamError as exc:
            if not exc.unreachable:
                raise Unavailable(
                    f"The scheduler of {source.name} does not list its workers: {exc.reason}"
                ) from exc
            self._mark(source, "down", exc.reason)
            raise Unavailable(f"The dashboard of {source.name} is not available: {exc.reason}") from exc
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
        """Check the sources that need it most, within the per-poll budget (health.py)."""
        await self._health_rounds.poll(self.list())

    async def _check_if_present(self, source_id: str) -> None:
        if source_id in self._sources:  # it may have been removed while its check waited
            await self.check_health(source_id)

    def stop_checks(self) -> None:
        self._health_rounds.cancel()

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
            except UnreadableDocument as exc:
                raise Unavailable(
                    f"{typed.target.netloc} answered with a plot list dashdock cannot read: {exc.reason}"
                ) from exc
            except UpstreamError as exc:
                if exc.unreachable:
                    raise Unavailable(f"Could not reach {typed.target.netloc}: {exc.reason}") from exc
                continue
            if isinstance(document, dict) and parse_catalog(document):
                return root
        raise NotADashboard(
            f"{typed.target.netloc} answers, but not as a Dask dashboard (it lists no plots)."
        )

    async def load(self) -> None:
        """Read the saved user-added sources, entry by entry. An entry that cannot be used now is
        kept, listed as disabled with the reason; a file that cannot be read at all is moved aside
        and people are told. Never fatal: at worst, sources added in this run are not kept."""
        if self._store is None:
            return
        # Holding the save lock: a source added while the server starts is written after this.
        async with self._save_lock:
            try:
                rows, notes = await asyncio.to_thread(self._store.open)
                self._unsaved_reason = ""
            except StoreError as exc:
                self._unsaved_reason = str(exc)
                self._warnings.append(f"Sources added now will not be kept after a server restart: {exc}")
                self._log.warning("dashdock: cannot keep sources: %s", exc)
                return
        for note in notes:
            self._log.warning("dashdock: %s", note)
        self._warnings += notes
        for row in rows:
            self._restore(row)
        if self._disabled:
            self._log.warning(
                "dashdock: %d saved sources are disabled (listed in the sidebar with the reason)",
                len(self._disabled),
            )

    def _restore(self, row: Row) -> None:
        try:
            entry = json.loads(row.entry)
        except ValueError:
            self._disable(row.id, row.entry, "", "This saved entry is not readable.")
            return
        url, name = (entry.get("url"), entry.get("name")) if isinstance(entry, dict) else (None, None)
        name = name if isinstance(name, str) and name else ""
        if not isinstance(url, str):
            self._disable(row.id, name or row.entry, "", "This saved entry has no dashboard URL.")
            return
        try:
            dashboard = parse_dashboard_url(url)
        except TargetError as exc:
            self._disable(row.id, name or url, url, f"The saved URL cannot be used: {exc}")
            return
        name = name or dashboard.target.netloc
        if not self._allowlist.allows(dashboard.target):
            self._disable(
                row.id,
                name,
                dashboard.url,
                f"{dashboard.target.netloc} is no longer an allowed dashboard host. It is kept and comes "
                "back when c.DashdockApp.allowed_targets allows it again (after a server restart).",
            )
            return
        self._sources[row.id] = Source(row.id, name, "url", dashboard)

    def _disable(self, source_id: str, name: str, url: str, reason: str) -> None:
        # A long or binary-looking entry would make an unreadable row in the sidebar.
        shown = name if len(name) <= 80 else name[:79] + "…"
        self._disabled[source_id] = DisabledSource(source_id, shown, url, reason)

    async def _save(self, source: Source) -> str:
        """Keep one source in the file; returns why it could not be, for people, or ""."""
        return await self._write(lambda store: store.put(source.id, source.entry()), removing=False)

    async def _forget(self, source_id: str) -> str:
        return await self._write(lambda store: store.delete(source_id), removing=True)

    async def _write(self, change: Callable[[SourcesStore], None], removing: bool) -> str:
        if self._store is None:
            return ""
        store = self._store
        # In request order: an add and a rename or removal that follows it land in that order.
        async with self._save_lock:
            if self._unsaved_reason:
                # A removal has nothing to take out: no source of this run came from that file.
                return "" if removing else self._unsaved_reason
            try:
                await asyncio.to_thread(change, store)
            except StoreError as exc:
                self._log.warning("dashdock: could not save sources: %s", exc)
                return str(exc)
        return ""
