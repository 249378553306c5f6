"""The dashboards this server knows, by id: added, moved, removed, checked, their plots and workers.

The registry is the one place sources change; user-added ones are kept in the sources file
(saved.py), a typed URL is resolved to its dashboard's root (probe.py), and health is checked a
budget at a time (health.py).
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from pathlib import Path

from dashdock.errors import (
    Conflict,
    Invalid,
    NeedsCredentials,
    NotADashboard,
    NotFound,
    Unavailable,
    host_not_allowed,
)
from dashdock.sources.bokeh_apps import bokeh_alive, bokeh_apps, find_bokeh_root
from dashdock.sources.catalog import METRICS_LISTING, Plot, parse_catalog, parse_custom
from dashdock.sources.credentials import Credential, HeldCredentials
from dashdock.sources.health import HealthRounds
from dashdock.sources.initial import InitialSource, add_initial
from dashdock.sources.model import DisabledSource, Health, Source, source_id_for
from dashdock.sources.probe import LOCKED, find_root
from dashdock.sources.saved import SavedSources, restore
from dashdock.sources.scheduler import learn_scheduler, scheduler_due
from dashdock.sources.workers import Worker, judge, parse_worker_table
from dashdock.targets import Allowlist, DashboardURL, Target, TargetError, parse_dashboard_url
from dashdock.upstream import UpstreamClient, UpstreamError


class SourceRegistry:
    """Sources by id. User-added sources are saved to ``store`` so they survive a server restart."""

    def __init__(
        self,
        client: UpstreamClient,
        allowlist: Allowlist,
        store: Path | None,
        log: logging.Logger,
        checks_per_poll: int = 64,
        credentials_file: Path | None = None,
    ) -> None:
        self._client = client
        self._allowlist = allowlist
        self._saved = SavedSources(store, log)
        # The map HeldCredentials keeps is the one the client reads its credentials from.
        held: dict[str, Credential] = {}
        client.credentials = held
        self._credentials = HeldCredentials(held, credentials_file, log)
        client.credential_guard = self._credentials.may_send
        self._log = log
        self._sources: dict[str, Source] = {}
        self._disabled: dict[str, DisabledSource] = {}
        self._health_rounds = HealthRounds(self._check_if_present, checks_per_poll, client.timeouts.json)

    def list(self) -> list[Source]:
        return list(self._sources.values())

    def disabled(self) -> builtins.list[DisabledSource]:
        return list(self._disabled.values())

    def find_disabled(self, source_id: str) -> DisabledSource | None:
        return self._disabled.get(source_id)

    @property
    def warnings(self) -> builtins.list[str]:
        """What people should know about the sources file (moved aside, not usable)."""
        return list(self._saved.warnings)

    def get(self, source_id: str) -> Source:
        try:
            return self._sources[source_id]
        except KeyError:
            if (disabled := self._disabled.get(source_id)) is not None:
                raise Conflict(f"{disabled.name} is disabled: {disabled.reason}") from None
            raise NotFound("There is no source with this id.") from None

    def find(self, source_id: str) -> Source | None:
        return self._sources.get(source_id)

    def knows_target(self, target: Target) -> bool:
        return any(source.target == target for source in self._sources.values())

    async def add_url(
        self, text: str, name: str | None = None, credential: Credential | None = None, save: bool = True
    ) -> tuple[Source, bool]:
        """Find the dashboard a typed URL belongs to and register it; returns (source, created).

        With a ``credential``, the server is asked with it, and it is kept for that server when the
        dashboard is found; without, one kept from before is used. ``save``: kept in the sources
        file for the next server (a user's; not a configured one, which the configuration adds)."""
        try:
            typed = parse_dashboard_url(text)
        except TargetError as exc:
            raise Invalid(str(exc)) from exc
        if not self._allowlist.allows(typed.target):
            raise host_not_allowed(typed.target.netloc)
        origin = typed.target.origin
        async with self._credentials.trying(origin, credential) as previous:
            source, created = await self._add_root(typed, name, save)
        if credential is not None and credential != previous:
            problem = await self._credentials.save()
            source.warning = problem and f"The credentials of {source.name} were not saved: {problem}."
        self._describe_credentials(origin)
        return source, created

    async def set_credentials(self, source_id: str, credential: Credential | None) -> Source:
        """Give (or, with None, forget) the credentials of a source's server; checked at once."""
        source = self.get(source_id)
        origin = source.target.origin
        problem = await self._credentials.put(origin, credential)
        source.warning = problem and f"The credentials of {source.name} were not saved: {problem}."
        self._describe_credentials(origin)
        source.lost += 1  # open panes reload with them
        return await self.check_health(source_id)

    def _describe_credentials(self, origin: str) -> None:
        described = self._credentials.describe(origin)
        for source in self._sources.values():
            if source.target.origin == origin:
                source.credentials = described

    async def _add_root(self, typed: DashboardURL, name: str | None, save: bool) -> tuple[Source, bool]:
        try:
            root, flavour = await find_root(self._client, typed), "dask"
        except NeedsCredentials:
            raise
        except NotADashboard as not_dask:
            bokeh_root = await find_bokeh_root(self._client, typed)
            if bokeh_root is None:
                raise NotADashboard(
                    f"{typed.target.netloc} answers, but neither as a Dask dashboard nor as a Bokeh server "
                    "(it lists no plots or applications)."
                ) from not_dask
            root, flavour = bokeh_root, "bokeh"
        source_id = source_id_for(root.url)
        existing = self._sources.get(source_id)
        if existing is not None:
            if name:
                existing.name = name
                if existing.kind == "url":
                    problem = await self._saved.save(existing)
                    existing.warning = problem and f"The new name of {name} was not saved: {problem}"
            return existing, False
        source = Source(source_id, name or root.target.netloc, "url", root, Health("up", "", time.time()))
        source.flavour = flavour
        self._sources[source_id] = source
        if flavour == "dask":  # recorded from now on, with no step from the user (history)
            await learn_scheduler(source, self._client, self._allowlist)
        if not save:
            return source, True
        problem = await self._saved.save(source)
        source.warning = problem and (
            f"{source.name} was added, but not saved: it will be gone after a server restart ({problem})."
        )
        return source, True

    def point(
        self, source_id: str, name: str, kind: str, dashboard_url: str, flavour: str = "dask"
    ) -> Source:
        """Create a source the server runs or found (a managed cluster, a notebook's client; trusted,
        never saved), or move it to another dashboard. A move counts as a loss for its open
        plots, so their panes reload onto it."""
        root = _dashboard_root(dashboard_url)
        source = self._sources.get(source_id)
        if source is None:
            source = Source(source_id, name, kind, root, Health("up", "", time.time()))
            source.flavour = flavour
            self._sources[source_id] = source
        elif source.dashboard != root:
            source.dashboard = root
            source.lost += 1
            self._mark(source, "unknown", "")
        source.name = name
        return source

    def source_showing(self, dashboard_url: str) -> Source | None:
        """The source whose dashboard is at ``dashboard_url`` (its ``/status`` page or root), if any."""
        try:
            root = _dashboard_root(dashboard_url)
        except TargetError:
            return None
        return next((source for source in self._sources.values() if source.dashboard == root), None)

    async def set_alerts(self, source_id: str, on: bool) -> Source:
        """Mute or unmute a source's alerts; a user-added source keeps the choice in the sources file."""
        source = self.get(source_id)
        source.alerts = on
        if source.kind == "url":
            problem = await self._saved.save(source)
            source.warning = problem and f"Muting the alerts of {source.name} was not saved: {problem}"
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
        problem = await self._saved.forget(source_id)
        return problem and (
            f"{name} was removed, but it is still in the sources file and will come back after a "
            f"server restart ({problem})."
        )

    async def plots(self, source_id: str) -> builtins.list[Plot]:
        """Dask's plots of the source, then its custom metrics (``dashdock.metric``), if any."""
        source = self.get(source_id)
        if source.flavour == "bokeh":
            return await self._bokeh_apps(source)
        try:
            dask_plots, metrics = await asyncio.gather(
                self._client.get_json(source.dashboard.url + "/individual-plots.json"),
                self._custom_plots(source),
            )
            plots = parse_catalog(dask_plots) + metrics
        except (UpstreamError, ValueError) as exc:
            reason = exc.reason if isinstance(exc, UpstreamError) else "It did not list its plots."
            if isinstance(exc, UpstreamError):
                self._mark_failed(source, exc)
                reason = source.health.message
            else:
                self._mark(source, "down", reason)
            raise Unavailable(f"The dashboard of {source.name} is not available: {reason}") from exc
        self._mark(source, "up", "")
        return plots

    async def _bokeh_apps(self, source: Source) -> builtins.list[Plot]:
        try:
            apps = await bokeh_apps(self._client, source.dashboard)
        except UpstreamError as exc:
            self._mark(source, "down", exc.reason)
            raise Unavailable(f"The Bokeh server of {source.name} is not available: {exc.reason}") from exc
        self._mark(source, "up", "")
        return apps

    async def _custom_plots(self, source: Source) -> builtins.list[Plot]:
        """The metrics a notebook added to the source's scheduler; none on a scheduler without."""
        # Dask's own list decides whether the dashboard is up: a server that answers this path with
        # anything but a usable listing (an older scheduler, a proxy's error page) just has none.
        try:
            return parse_custom(await self._client.get_json(source.dashboard.url + METRICS_LISTING))
        except (UpstreamError, ValueError):
            return []

    async def workers(self, source_id: str) -> builtins.list[Worker]:
        """The source's workers, from the scheduler's worker table, each judged by the allowlist."""
        source = self.get(source_id)
        if source.flavour == "bokeh":
            raise Conflict(f"{source.name} is a Bokeh server, not a Dask scheduler: it has no workers.")
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
        was_up = source.health.status == "up"
        try:
            if source.flavour == "bokeh":
                await bokeh_alive(self._client, source.dashboard)
            else:
                await self._client.get_text(source.dashboard.url + "/health")
        except UpstreamError as exc:
            self._mark_failed(source, exc)
        else:
            self._mark(source, "up", "")
            if scheduler_due(source, was_up):
                await learn_scheduler(source, self._client, self._allowlist)
        withheld = self._credentials.withheld(source.target.origin)
        if withheld:  # whatever answered, the user has to act: asked like a refusal
            self._mark(source, "down", withheld)
            source.refused = True
        return source

    def schedulers(self) -> dict[str, str]:
        """Source id -> scheduler address of the sources added by URL whose scheduler the history
        may record (the others' come from their clusters and kernels)."""
        return {
            source.id: source.scheduler
            for source in self._sources.values()
            # A scheduler that went down stays wanted: its run notices (scheduler-lost, -back).
            if source.kind == "url" and source.scheduler is not None
        }

    async def learn_schedulers(self) -> None:
        """Look again for the schedulers of sources added by URL that are not known yet: the
        history asks this on its own rounds, so no browser needs to be polling for them."""
        due = [source for source in self._sources.values() if scheduler_due(source, was_up=True)]
        await asyncio.gather(*(learn_scheduler(source, self._client, self._allowlist) for source in due))

    def add_initial(self, entries: builtins.list[InitialSource]) -> asyncio.Future[None]:
        """Add the configured sources in the background (initial.py), so that a slow or dead
        dashboard does not delay the server's start; cancel the future to stop asking."""
        return asyncio.ensure_future(add_initial(self, entries, self._log))

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

    def note_moved(self, source_id: str) -> None:
        """A pane's relay was ended because dashdock serves its plot now: the source's panes load
        again, as after a loss, while the source stays up."""
        source = self._sources.get(source_id)
        if source is not None:
            source.lost += 1

    def _mark_failed(self, source: Source, exc: UpstreamError) -> None:
        if exc.status in LOCKED:
            held = (
                "The credentials dashdock holds were refused"
                if source.credentials
                else "It asks for credentials"
            )
            self._mark(source, "down", f"{held} (HTTP {exc.status}).")
            source.refused = True
        else:
            self._mark(source, "down", exc.reason)
            source.refused = False

    def _mark(self, source: Source, status: str, message: str) -> None:
        source.health = Health(status, message, time.time())
        if status == "up":
            source.refused = False

    async def load(self) -> None:
        """Read the saved user-added sources and the kept credentials. An entry that cannot be used
        now is kept, listed as disabled with the reason (saved.py)."""
        held = await self._credentials.load()
        for row in await self._saved.read():
            restored = restore(row, self._allowlist)
            if isinstance(restored, Source):
                self._sources[row.id] = restored
            else:
                self._disabled[row.id] = restored
        for origin in held:
            self._describe_credentials(origin)
        if self._disabled:
            self._log.warning(
                "dashdock: %d saved sources are disabled (listed in the sidebar with the reason)",
                len(self._disabled),
            )


def _dashboard_root(dashboard_url: str) -> DashboardURL:
    """Where a dashboard's plots live: a link to its ``/status`` page without that page."""
    dashboard = parse_dashboard_url(dashboard_url)
    return DashboardURL(dashboard.target, dashboard.path.removesuffix("/status"))
