"""Managed Dask clusters, each in a process of its own (host.py), registered as sources.

A scheduler crunching a big graph in the notebook server's process would stall every notebook and
API call; in its own process it cannot. The manager talks to each cluster host over pipes
(non-blocking on the server's loop), and closes them all when the server stops, killing the
whole process group of any host that does not close in time, so no worker is left behind.

Every size and every new host goes through ``ClusterLimits``: a request over a limit is refused
with a message naming it, a configured size over it is clamped with a warning.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import itertools
import json
import logging
import os
import signal
import sys
from typing import Any

from dashdock.clusters.config import ClusterFactory
from dashdock.clusters.form import FormField, fields_of_class, parse_values
from dashdock.clusters.host import import_class
from dashdock.clusters.limits import ClusterLimits
from dashdock.clusters.request import NewCluster, Size
from dashdock.clusters.view import ClusterView, Status
from dashdock.errors import Conflict, DashdockError, Failed, NotFound, OverLimit, TimedOut
from dashdock.ids import new_source_id
from dashdock.kernel.protocol import CLIENTS_DIR_VARIABLE, DASHBOARD_LINK_VARIABLE, PRELOAD_VARIABLE
from dashdock.sources.registry import SourceRegistry

# Dask's own link template in the host process would otherwise come from the server's environment,
# where dashdock put a proxied one for kernels; the host must report the scheduler's real address.
# The kernel integration's variables are for kernels too (a cluster host is none).
_HOST_ENV_DROP = (DASHBOARD_LINK_VARIABLE, PRELOAD_VARIABLE, CLIENTS_DIR_VARIABLE)
COMMAND_TIMEOUT = 60.0
CLOSE_TIMEOUT = 15.0


class ManagedCluster:
    """One cluster host process and what it last reported."""

    def __init__(self, cluster_id: str, name: str, process: asyncio.subprocess.Process) -> None:
        self.id = cluster_id
        self.name = name
        self.process = process
        self.status: Status = "starting"
        self.adapt: dict[str, int] | None = None
        self.info: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read_events())

    def view(self) -> ClusterView:
        return ClusterView(
            id=self.id,
            name=self.name,
            provider="local",
            status=self.status,
            scheduler=self.info.get("scheduler"),
            dashboard=self.info.get("dashboard"),
            workers=self.info.get("workers", 0),
            requested=self.info.get("requested"),
            threads=self.info.get("threads", 0),
            memory=self.info.get("memory", 0),
            adapt=self.adapt,
            # Unfinished tasks on the scheduler as last asked (None: it cannot tell).
            tasks=self.info.get("tasks"),
            held=self.info.get("held"),
            source=self.id if self.status == "running" and self.info.get("dashboard") else None,
        )

    def to_json(self) -> dict[str, Any]:
        return self.view().to_json()

    async def command(self, op: str, **arguments: Any) -> dict[str, Any]:
        if self.process.returncode is not None or self.process.stdin is None:
            raise Conflict(f"The cluster {self.name} is not running.")
        command_id = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._pending[command_id] = answer
        self.process.stdin.write((json.dumps({"id": command_id, "op": op, **arguments}) + "\n").encode())
        await self.process.stdin.drain()
        try:
            reply = await asyncio.wait_for(answer, COMMAND_TIMEOUT)
        except TimeoutError:
            raise TimedOut(f"The cluster {self.name} did not answer in time.") from None
        finally:
            self._pending.pop(command_id, None)
        if "error" in reply:
            raise Failed(f"The cluster {self.name} could not do that: {reply['error']}")
        self.info = reply.get("info", self.info)
        return reply

    async def _read_events(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a library printing to stdout; the protocol lines are JSON
            if message.get("event") == "started":
                self.info = message["info"]
                self.status = "running"
                self.started.set_result(message)
            elif message.get("event") == "failed" and not self.started.done():
                self.started.set_exception(Failed(message["error"]))
            elif (answer := self._pending.get(message.get("id", -1))) is not None and not answer.done():
                answer.set_result(message)
        self.status = "stopped"
        if not self.started.done():
            self.started.set_exception(Failed("The cluster process exited before it started."))
        for answer in self._pending.values():
            if not answer.done():
                answer.set_result({"error": "the cluster process exited"})

    async def close(self) -> None:
        """Ask the host to close its cluster; kill its whole process group if it does not in time."""
        self.status = "closing"
        with contextlib.suppress(DashdockError, ConnectionError, OSError):
            await asyncio.wait_for(self.command("close"), CLOSE_TIMEOUT)
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), CLOSE_TIMEOUT)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
        self.status = "stopped"


class ClusterManager:
    """Starts, scales and stops managed clusters; each running one is also a dashboard source."""

    def __init__(
        self,
        factory: ClusterFactory,
        limits: ClusterLimits,
        registry: SourceRegistry,
        start_timeout: float,
        log: logging.Logger,
    ) -> None:
        self.limits = limits
        self.factory = factory.within(limits, log)
        self._registry = registry
        self._start_timeout = start_timeout
        self._log = log
        self._clusters: dict[str, ManagedCluster] = {}
        self._names = itertools.count(1)
        # What max_clusters counts: hosts from the moment one is decided on until it has been closed
        # (a shut-down cluster leaves the listing at once but holds its slot while its workers close).
        self._hosts = 0
        self._form: list[FormField] | None = None

    def list(self) -> list[ManagedCluster]:
        return list(self._clusters.values())

    def schedulers(self) -> dict[str, str]:
        """Source id -> scheduler address of every running cluster (the history records them)."""
        return {
            view.source: view.scheduler
            for view in (cluster.view() for cluster in self._clusters.values())
            if view.source and view.scheduler
        }

    def get(self, cluster_id: str) -> ManagedCluster:
        try:
            return self._clusters[cluster_id]
        except KeyError:
            raise NotFound("There is no cluster with this id.") from None

    async def form(self) -> builtins.list[FormField]:
        """The fields of the "New cluster" form for the configured class (see form.py)."""
        if self._form is None:
            self._form = await asyncio.to_thread(_class_form, self.factory)
        return self._form

    async def start(
        self,
        name: str | None = None,
        workers: int | None = None,
        adapt: dict[str, int] | None = None,
        options: object = None,
    ) -> ManagedCluster:
        self.limits.check(workers, adapt)
        chosen = parse_values(await self.form(), options) if options else {}
        # The slot is taken before the first await: requests that arrive while hosts are still
        # starting (which takes seconds) see it taken, so no more than max_clusters hosts ever run.
        if self._hosts >= self.limits.max_clusters:
            raise OverLimit(
                f"This server runs at most {self.limits.max_clusters} clusters at a time and has that "
                "many (counting those starting, stopped or still shutting down). Shut one down, or "
                "raise the limit with c.DashdockApp.max_clusters.",
            )
        self._hosts += 1
        cluster_id = new_source_id()  # a cluster's dashboard is the source of the same id
        spec = json.dumps(self.factory.spec(workers, adapt, chosen)) + "\n"
        env = {key: value for key, value in os.environ.items() if key not in _HOST_ENV_DROP}
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "dashdock.clusters.host",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,  # its own process group, so closing can reach every worker
            )
        except BaseException:
            self._hosts -= 1
            raise
        cluster = ManagedCluster(cluster_id, name or f"Cluster {next(self._names)}", process)
        cluster.adapt = adapt
        self._clusters[cluster_id] = cluster
        assert process.stdin is not None
        process.stdin.write(spec.encode())
        try:
            await process.stdin.drain()
            await asyncio.wait_for(asyncio.shield(cluster.started), self._start_timeout)
        except (TimeoutError, Failed, ConnectionError) as exc:
            if self._clusters.pop(cluster_id, None) is None:
                raise _stopped_while_starting(cluster) from exc
            await self._close(cluster)
            if isinstance(exc, Failed):
                raise Failed(f"The cluster could not start: {exc.reason}") from exc
            raise TimedOut(f"The cluster did not start within {self._start_timeout:g} s.") from exc
        if cluster_id not in self._clusters:
            # Shut down by the user while it was starting: it must not come back as a source.
            raise _stopped_while_starting(cluster)
        if cluster.adapt is None and workers is None and self.factory.adapt:
            cluster.adapt = dict(self.factory.adapt)
        dashboard = cluster.info.get("dashboard")
        if isinstance(dashboard, str) and dashboard.startswith(("http://", "https://")):
            self._registry.point(cluster_id, cluster.name, "cluster", dashboard)
        else:
            self._log.warning("dashdock: %s has no dashboard to show", cluster.name)
        self._log.info("dashdock: started %s (%s)", cluster.name, cluster.info["scheduler"])
        return cluster

    async def start_configured(self, requests: builtins.list[object], log: logging.Logger) -> None:
        """Start the clusters configured to start with the server (``initial_clusters``), one at a
        time, each sized within the limits (see ``ClusterLimits.configured_size``); a malformed
        entry, and one refused (those beyond max_clusters), is logged and skipped."""
        for request in requests:
            if not isinstance(request, dict):
                log.warning("dashdock: initial cluster %r ignored: not a mapping", request)
                continue
            name = str(request["name"]) if request.get("name") else None
            label = f"initial cluster {name!r}" if name else "an unnamed initial cluster"
            workers, adapt = self.limits.configured_size(
                request.get("workers"), request.get("adapt"), label, log
            )
            try:
                await self.start(name, None if adapt else workers, adapt)
            except DashdockError as exc:
                log.warning("dashdock: %s not started: %s", label, exc.reason)

    async def scale(self, cluster_id: str, workers: int) -> ManagedCluster:
        cluster = self.get(cluster_id)
        self.limits.check(workers, None)
        await cluster.command("scale", workers=workers)
        cluster.adapt = None
        return cluster

    async def adapt(self, cluster_id: str, minimum: int, maximum: int) -> ManagedCluster:
        cluster = self.get(cluster_id)
        self.limits.check(None, {"minimum": minimum, "maximum": maximum})
        await cluster.command("adapt", minimum=minimum, maximum=maximum)
        cluster.adapt = {"minimum": minimum, "maximum": maximum}
        return cluster

    async def restart(self, cluster_id: str) -> ManagedCluster:
        """A new cluster of the same size in the same host, on the same addresses when its class
        allows (a LocalCluster), so that connected clients reconnect; else its dashboard moves and
        the source follows. Either way open panes reload onto it. Its size is what the scheduler
        has, which may include workers started elsewhere, so the host bounds it too."""
        cluster = self.get(cluster_id)
        await cluster.command("restart", adapt=cluster.adapt, max_workers=self.limits.max_workers)
        dashboard = cluster.info.get("dashboard")
        if isinstance(dashboard, str) and dashboard.startswith(("http://", "https://")):
            source = self._registry.point(cluster_id, cluster.name, "cluster", dashboard)
            source.lost += 1  # a new scheduler even on the same port: its panes reload
        return cluster

    async def refresh(self) -> None:
        """Ask every running cluster for its current size (concurrently, cheap)."""
        running = [c for c in self._clusters.values() if c.status == "running"]
        await asyncio.gather(*(c.command("info") for c in running), return_exceptions=True)

    # The provider protocol (facade.py): what the clusters API asks of the server's own clusters.

    def owns(self, cluster_id: str) -> bool:
        return cluster_id in self._clusters

    async def listed(self) -> tuple[builtins.list[ClusterView], str]:
        """Every cluster, with its size as its scheduler reports it now."""
        await self.refresh()
        return [cluster.view() for cluster in self.list()], ""

    async def create(self, request: NewCluster) -> ClusterView:
        cluster = await self.start(request.name, request.size.workers, request.size.adapt, request.options)
        return cluster.view()

    async def resize(self, cluster_id: str, size: Size) -> ClusterView:
        if size.adapt is not None:
            cluster = await self.adapt(cluster_id, size.adapt["minimum"], size.adapt["maximum"])
        else:
            assert size.workers is not None
            cluster = await self.scale(cluster_id, size.workers)
        return cluster.view()

    async def described(self, cluster_id: str) -> ClusterView:
        """One cluster, its size asked of its scheduler when it runs."""
        cluster = self.get(cluster_id)
        if cluster.status == "running":
            await cluster.command("info")
        return cluster.view()

    async def restarted(self, cluster_id: str) -> ClusterView:
        return (await self.restart(cluster_id)).view()

    async def stop(self, cluster_id: str) -> None:
        cluster = self.get(cluster_id)
        del self._clusters[cluster_id]
        self._registry.unregister(cluster_id)
        await self._close(cluster)

    async def _close(self, cluster: ManagedCluster) -> None:
        """Close a host that is no longer listed; its slot is free once its process has exited."""
        try:
            await cluster.close()
        finally:
            self._hosts -= 1

    async def close_all(self) -> None:
        await asyncio.gather(*(self.stop(cluster_id) for cluster_id in list(self._clusters)))


def _class_form(factory: ClusterFactory) -> list[FormField]:
    """Import the cluster class (in a thread: imports block) and describe its form."""
    try:
        cluster_class = import_class(factory.cluster_class)
    except Exception as exc:  # a class that fails to import must say so, not break the server
        raise Failed(
            f"The cluster class {factory.cluster_class} could not be imported: {type(exc).__name__}: {exc}"
        ) from None
    return fields_of_class(cluster_class, factory.kwargs)


def _stopped_while_starting(cluster: ManagedCluster) -> Conflict:
    return Conflict(f"The cluster {cluster.name} was shut down while it was starting.")
