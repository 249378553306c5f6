"""The user's dask-gateway clusters: listed, created, resized and stopped through the gateway's API.

The Jupyter server talks to the gateway as the user's notebooks do, with dask-gateway's own client
(asynchronous, on the server's loop) and the credentials the server holds: under JupyterHub the
server's ``JUPYTERHUB_API_TOKEN`` (``auth = "jupyterhub"``), else Kerberos or basic auth as
configured. Unset traits fall back to Dask's config and so to the ``DASK_GATEWAY__*`` environment
that DaskHub deployments set.

A running cluster's dashboard becomes a source, except one a notebook's client already shows (its
kernel's source is the one that follows the notebook when it replaces its cluster). A cluster made
elsewhere gets its own source only once it has been running for a while, so a notebook that has
just made one is found by kernel discovery first.

A gateway address may carry a user name and password (``http://user:pw@host``), and dask-gateway
builds dashboard links from it. They stay on this server: links, addresses and messages are given
without them, and a dashboard becomes a source at its link without them. Should the dashboard
refuse requests without them (a front that asks for basic auth), the server sends them itself, as
the credentials of that dashboard's server (sources/credentials.py): never shown, never in a page.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import hashlib
import logging
import time
from contextlib import suppress
from typing import Any

from dashdock.clusters.form import FormField, fields_of_gateway, parse_values
from dashdock.clusters.gateway_client import GatewayClient, GatewaySettings, without_userinfo_in
from dashdock.clusters.limits import ClusterLimits
from dashdock.clusters.request import NewCluster, Size
from dashdock.clusters.view import ClusterView, Resized, Status, Submitted
from dashdock.errors import DashdockError, Invalid, NotFound
from dashdock.sources.credentials import parse_credential
from dashdock.sources.registry import SourceRegistry
from dashdock.targets import TargetError, userinfo_of, without_userinfo

# A cluster another program made becomes a source after this long unless a notebook shows it.
UNCLAIMED_AFTER = 30.0
MAX_LISTED = 100
# How often a new cluster is looked at until it runs, to give it the size asked for.
SIZE_POLL = 1.0
# How long the clusters listing waits for the gateway before it answers with what it last knew.
LISTING_WAIT = 3.0
# How long a cluster's size may take to read from its dashboard, within the listing's wait.
SIZE_WAIT = 2.5
_ACTIVE = ("PENDING", "RUNNING", "STOPPING")
_STATUSES: dict[str, Status] = {"PENDING": "starting", "RUNNING": "running"}  # else closing


class GatewayClusters:
    """The clusters the user has on one dask-gateway, by the ids dashdock gives them."""

    def __init__(
        self, settings: GatewaySettings, registry: SourceRegistry, limits: ClusterLimits, log: logging.Logger
    ) -> None:
        self.settings = settings
        self._api = GatewayClient(settings)
        self.limits = limits
        self._registry = registry
        self._log = log
        self._names: dict[str, str] = {}  # cluster id -> gateway cluster name
        self._made_here: dict[str, float] = {}  # names of clusters made here -> when (monotonic)
        self._adapt: dict[str, dict[str, int]] = {}
        self._sources: set[str] = set()
        self._stopped: set[str] = set()  # names stopped here that the gateway may still list a while
        self._running_since: dict[str, float] = {}  # name -> when first seen running (monotonic)
        self._sizing: dict[str, asyncio.Task[None]] = {}  # cluster id -> its size, given once it runs
        # One listing asked of the gateway at a time, however many browsers poll; and what it last said.
        self._listing: asyncio.Task[list[ClusterView]] | None = None
        self._last_listed: list[ClusterView] = []
        self._authenticated: set[str] = set()  # sources given the userinfo of their link as credentials

    @property
    def address(self) -> str | None:
        return self._api.address

    def owns(self, cluster_id: str) -> bool:
        return cluster_id in self._names

    async def listed(self, wait: float = LISTING_WAIT) -> tuple[list[ClusterView], str]:
        """The user's active clusters, and a note when they are the ones listed before.

        A gateway slower than ``wait`` does not hold up the listing of the server's own clusters:
        its answer is awaited by the next listing, meanwhile the last one stands, said to be old.
        A gateway that fails raises, as ``list`` does.
        """
        if self._listing is None:
            self._listing = asyncio.ensure_future(self.list())
            # Its failure is read by whichever listing awaits it; none may, if the server stops first.
            self._listing.add_done_callback(lambda task: task.cancelled() or task.exception())
        listing = self._listing
        await asyncio.wait({listing}, timeout=wait)
        if not listing.done():
            return self._last_listed, (
                "The Dask Gateway is slow to answer: its clusters as listed before "
                f"(it has up to {self.settings.timeout:g} s)."
            )
        if self._listing is listing:
            self._listing = None
        self._last_listed = listing.result()  # a failure raises here, for each request that waited
        return self._last_listed, ""

    async def list(self) -> list[ClusterView]:
        """The user's active clusters, each as the clusters API describes one; their sources follow."""
        asked = time.monotonic()
        reports = await self._api.call("list the clusters", lambda gateway: gateway.list_clusters())
        # A cluster stopped here is gone for the user, even if the gateway still lists it stopping
        # (or answers a listing asked before it was stopped); the gateway forgets it in the end.
        self._stopped &= {report.name for report in reports if report.status.name in _ACTIVE}
        reports = [r for r in reports if r.status.name in _ACTIVE and r.name not in self._stopped]
        reports = reports[:MAX_LISTED]
        described = await asyncio.gather(*(self._describe(report) for report in reports))
        described = [c for c in described if c.name not in self._stopped]  # stopped meanwhile
        # A cluster made here since the listing was asked stays known, so it can be resized; one
        # the gateway no longer lists was stopped elsewhere.
        listed = {report.name for report in reports}
        self._made_here = {n: t for n, t in self._made_here.items() if n in listed or t > asked}
        self._running_since = {n: t for n, t in self._running_since.items() if n in listed}
        self._names = {cluster_id_for(name): name for name in [*self._made_here, *listed]}
        for source_id in self._sources - {c.source for c in described if c.source}:
            self._registry.unregister(source_id)
        self._sources &= {c.source for c in described}
        return described

    async def form(self) -> builtins.list[FormField]:
        options = await self._api.call("read the cluster options", lambda gateway: gateway.cluster_options())
        return fields_of_gateway(options)

    async def start(self, values: object, workers: int | None, adapt: dict[str, int] | None) -> Submitted:
        """Submit a cluster with the form's values; it gets its size once it runs (the gateway starts it
        without workers, and resizes only running clusters)."""
        self.limits.check(workers, adapt)
        options = await self._api.call("read the cluster options", lambda gateway: gateway.cluster_options())
        for name, value in parse_values(fields_of_gateway(options), values or {}).items():
            try:
                options[name] = value
            except (TypeError, ValueError) as exc:
                raise Invalid(f"The gateway refuses this value of '{name}': {exc}") from None
        name = await self._api.call(
            "create a cluster", lambda gateway: gateway.submit(cluster_options=options)
        )
        cluster_id = cluster_id_for(name)
        self._names[cluster_id] = name
        self._made_here[name] = time.monotonic()
        if adapt is not None or workers:
            self._sizing[cluster_id] = asyncio.ensure_future(
                self._size_once_running(cluster_id, name, workers, adapt)
            )
        return Submitted(cluster_id, name, "gateway", "starting")

    async def scale(self, cluster_id: str, workers: int) -> str:
        """Scale to ``workers``; returns what the gateway did instead (its limit), else ''."""
        self.limits.check(workers, None)
        name = self._name(cluster_id)
        self._stop_sizing(cluster_id)  # the user's size, not the one asked for at the start
        said = await self._api.resize(name, "scale", {"count": workers})
        self._adapt.pop(cluster_id, None)
        return said

    async def adapt(self, cluster_id: str, minimum: int, maximum: int) -> str:
        """Adapt between the bounds; returns what the gateway did instead (its limit), else ''."""
        self.limits.check(None, {"minimum": minimum, "maximum": maximum})
        bounds = {"minimum": minimum, "maximum": maximum}
        name = self._name(cluster_id)
        self._stop_sizing(cluster_id)
        said = await self._api.resize(name, "adapt", {**bounds, "active": True})
        self._adapt[cluster_id] = bounds
        return said

    # The provider protocol (facade.py): what the clusters API asks of the gateway's clusters.

    async def create(self, request: NewCluster) -> Submitted:
        return await self.start(request.options, request.size.workers, request.size.adapt)

    async def resize(self, cluster_id: str, size: Size) -> Resized:
        """Over the gateway's own limit, it resizes to the limit and says so: the user reads it."""
        if size.adapt is not None:
            said = await self.adapt(cluster_id, size.adapt["minimum"], size.adapt["maximum"])
        else:
            assert size.workers is not None
            said = await self.scale(cluster_id, size.workers)
        return Resized(cluster_id, said)

    async def stop(self, cluster_id: str) -> None:
        name = self._name(cluster_id)
        self._stop_sizing(cluster_id)
        await self._api.call("stop the cluster", lambda gateway: gateway.stop_cluster(name))
        self._stopped.add(name)
        self._made_here.pop(name, None)
        self._names.pop(cluster_id, None)
        self._adapt.pop(cluster_id, None)
        if cluster_id in self._sources:
            self._sources.discard(cluster_id)
            self._registry.unregister(cluster_id)

    async def close(self) -> None:
        for cluster_id in list(self._sizing):
            self._stop_sizing(cluster_id)
        if self._listing is not None:
            self._listing.cancel()
            self._listing = None
        await self._api.close()

    async def _size_once_running(
        self, cluster_id: str, name: str, workers: int | None, adapt: dict[str, int] | None
    ) -> None:
        """Give a new cluster the size asked for when it was made, as soon as it runs."""
        try:
            while True:
                report = await self._api.call(
                    "look at the new cluster", lambda gateway: gateway.get_cluster(name)
                )
                if report.status.name != "PENDING":
                    break
                await asyncio.sleep(SIZE_POLL)
            if report.status.name != "RUNNING":
                return  # it failed to start, or was stopped: there is nothing to size
            if adapt is not None:
                said = await self._api.resize(name, "adapt", {**adapt, "active": True})
                self._adapt[cluster_id] = dict(adapt)
            else:
                said = await self._api.resize(name, "scale", {"count": workers})
            if said:
                self._log.warning("dashdock: gateway cluster %s: %s", name, self._api.scrubbed(said))
        except DashdockError as exc:
            self._log.warning(
                "dashdock: gateway cluster %s did not get the size asked for: %s", name, exc.reason
            )
        finally:
            if self._sizing.get(cluster_id) is asyncio.current_task():
                del self._sizing[cluster_id]

    def _stop_sizing(self, cluster_id: str) -> None:
        task = self._sizing.pop(cluster_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    def _name(self, cluster_id: str) -> str:
        try:
            return self._names[cluster_id]
        except KeyError:
            raise NotFound("There is no gateway cluster with this id (it may have stopped).") from None

    async def _describe(self, report: Any) -> ClusterView:
        cluster_id = cluster_id_for(report.name)
        running = report.status.name == "RUNNING"
        source = self._source_for(cluster_id, report) if running else None
        if source == cluster_id:
            await self._authenticate_dashboard(source, report.dashboard_link)
        # Counted from the dashboard's worker table (the gateway API has no counts); unknown (None)
        # while there is no dashboard to ask, rather than a 0 a user could scale to by mistake.
        workers: int | None = None
        threads: int | None = None
        memory: int | None = None
        if source is not None:
            with suppress(DashdockError, TimeoutError, asyncio.TimeoutError):
                listed = await asyncio.wait_for(self._registry.workers(source), SIZE_WAIT)
                workers = len(listed)
                threads = sum(worker.threads or 0 for worker in listed)
                memory = sum(worker.memory_limit or 0 for worker in listed)
        return ClusterView(
            id=cluster_id,
            name=report.name,
            provider="gateway",
            status=_STATUSES.get(report.status.name, "closing"),
            scheduler=without_userinfo_in(report.scheduler_address),
            dashboard=without_userinfo_in(report.dashboard_link),
            workers=workers,
            threads=threads,
            memory=memory,
            adapt=self._adapt.get(cluster_id),
            tasks=None,  # the gateway does not say; shutting down asks first
            source=source,
        )

    def _source_for(self, cluster_id: str, report: Any) -> str | None:
        """The source showing this cluster's dashboard: a notebook's, else one of its own."""
        link = report.dashboard_link
        if not isinstance(link, str) or not link.startswith(("http://", "https://")):
            return None
        link = without_userinfo(link)  # its credentials, when it needs them, go as the server's
        shown = self._registry.source_showing(link)
        if shown is not None and shown.id != cluster_id:
            return shown.id
        # Counted from when this server first saw it running, not from the gateway's start time: a
        # cluster may be pending for a long while on a busy gateway, and its notebook connects
        # only once it runs.
        running_since = self._running_since.setdefault(report.name, time.monotonic())
        if report.name not in self._made_here and time.monotonic() - running_since < UNCLAIMED_AFTER:
            return None  # a notebook may be about to connect to it: its kernel's source goes first
        try:
            self._registry.point(cluster_id, f"Gateway {report.name[:12]}", "cluster", link)
        except (DashdockError, TargetError) as exc:
            reason = exc.reason if isinstance(exc, DashdockError) else str(exc)
            self._log.warning("dashdock: the dashboard of gateway cluster %s: %s", report.name, reason)
            return None
        self._sources.add(cluster_id)
        return cluster_id

    async def _authenticate_dashboard(self, source_id: str, link: object) -> None:
        """A dashboard whose link carried a user and password and that refuses requests without
        them gets them as its server's credentials (basic auth), once, unless it holds others.

        Only on refusal: a header sent to a Bokeh server is copied into the session token of the
        pages it serves, and dask-gateway's own proxy serves dashboards without authentication."""
        userinfo = userinfo_of(link) if isinstance(link, str) else None
        source = self._registry.find(source_id)
        if userinfo is None or source is None or source_id in self._authenticated:
            return
        if not source.refused or source.credentials is not None:
            return
        self._authenticated.add(source_id)
        token = base64.b64encode(":".join(userinfo).encode("latin-1", "replace")).decode()
        try:
            credential = parse_credential(
                {"kind": "header", "name": "Authorization", "value": f"Basic {token}"}
            )
            await self._registry.set_credentials(source_id, credential)
        except DashdockError as exc:
            self._log.warning(
                "dashdock: the dashboard of a gateway cluster refused its credentials: %s",
                self._api.scrubbed(exc.reason),
            )


def cluster_id_for(name: str) -> str:
    """A gateway cluster's id in dashdock (also its source's): stable, and a source id's shape."""
    return hashlib.sha256(f"gateway:{name}".encode()).hexdigest()[:12]
