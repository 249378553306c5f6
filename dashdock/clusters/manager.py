"""Managed Dask clusters, each in a process of its own (see ``cluster_host``), registered as sources.

A scheduler crunching a big graph in the notebook server's process would stall every notebook and
API call; in its own process it cannot. The manager talks to each cluster host over pipes
(non-blocking on the server's loop), and closes them all when the server stops, killing the
whole process group of any host that does not close in time, so no worker is left behind.

Every size and every new host goes through ``ClusterLimits``: a request over a limit is refused
with a message naming it, a configured size over it is clamped with a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import signal
import sys
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from dashdock.errors import UserFacingError
from dashdock.kernel.protocol import CLIENTS_DIR_VARIABLE, PRELOAD_VARIABLE
from dashdock.sources.registry import SourceRegistry

# Dask's own link template in the host process would otherwise come from the server's environment,
# where dashdock put a proxied one for kernels; the host must report the scheduler's real address.
# The kernel integration's variables are for kernels too (a cluster host is none).
_HOST_ENV_DROP = ("DASK_DISTRIBUTED__DASHBOARD__LINK", PRELOAD_VARIABLE, CLIENTS_DIR_VARIABLE)
_LOCAL_CLUSTER_NAMES = frozenset(
    {"distributed.LocalCluster", "dask.distributed.LocalCluster", "distributed.deploy.local.LocalCluster"}
)
COMMAND_TIMEOUT = 60.0
CLOSE_TIMEOUT = 15.0


class ClusterError(UserFacingError):
    """A cluster operation failed."""


def usable_cores() -> int:
    """The cores this process may run on (a container's CPU set, not the whole host's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def parse_count(value: object, what: str) -> int:
    """A number of workers from JSON: a whole number, 0 or more (not a bool, float, NaN or string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ClusterError(400, f"'{what}' must be a whole number of workers, 0 or more.")
    return value


def parse_adapt(value: object) -> dict[str, int]:
    """Adaptive bounds from JSON: ``{"minimum": a, "maximum": b}``, minimum 0 when left out."""
    if not isinstance(value, dict):
        raise ClusterError(400, '\'adapt\' must be an object {"minimum": n, "maximum": m}.')
    minimum = parse_count(value.get("minimum", 0), "adapt.minimum")
    maximum = parse_count(value.get("maximum"), "adapt.maximum")
    if minimum > maximum:
        raise ClusterError(400, "'adapt.minimum' cannot be larger than 'adapt.maximum'.")
    return {"minimum": minimum, "maximum": maximum}


@dataclass(frozen=True)
class ClusterLimits:
    """How many workers one cluster may have (its adaptive maximum included) and how many
    clusters may run at once; a user who needs more raises the trait the message names."""

    max_workers: int
    max_clusters: int

    def to_json(self) -> dict[str, int]:
        return {"max_workers": self.max_workers, "max_clusters": self.max_clusters}

    def check(self, workers: int | None, adapt: dict[str, int] | None) -> None:
        """Refuse a requested size over ``max_workers``: the person asking reads the answer."""
        if workers is not None and workers > self.max_workers:
            raise self._over("workers")
        if adapt is not None and adapt["maximum"] > self.max_workers:
            raise self._over("adapt.maximum")

    def _over(self, what: str) -> ClusterError:
        return ClusterError(
            400,
            f"'{what}' asks for more than this server's limit of {self.max_workers} workers per "
            "cluster. Ask for fewer, or raise the limit with c.DashdockApp.max_workers.",
        )

    def configured_size(
        self, workers: object, adapt: object, what: str, log: logging.Logger
    ) -> tuple[int | None, dict[str, int] | None]:
        """A size from the configuration, which nobody is there to be refused: a malformed number
        is ignored and one over ``max_workers`` is clamped to it, each with a warning in the log.
        Workers and adapt are read apart, as dask-labextension does (adapt wins when both are set).
        """
        count, bounds = None, None
        try:
            count = parse_count(workers, "workers") if workers is not None else None
        except ClusterError as exc:
            log.warning("dashdock: %s: %s It is ignored.", what, exc.reason)
        try:
            bounds = parse_adapt(adapt) if adapt is not None else None
        except ClusterError as exc:
            log.warning("dashdock: %s: %s It is ignored.", what, exc.reason)
        if count is not None and count > self.max_workers:
            log.warning(
                "dashdock: %s asks for %d workers, over max_workers (%d): it gets %d. "
                "Raise c.DashdockApp.max_workers to allow more.",
                what,
                count,
                self.max_workers,
                self.max_workers,
            )
            count = self.max_workers
        if bounds is not None and bounds["maximum"] > self.max_workers:
            log.warning(
                "dashdock: %s adapts up to %d workers, over max_workers (%d): it adapts up to %d. "
                "Raise c.DashdockApp.max_workers to allow more.",
                what,
                bounds["maximum"],
                self.max_workers,
                self.max_workers,
            )
            bounds = {"minimum": min(bounds["minimum"], self.max_workers), "maximum": self.max_workers}
        return count, bounds


@dataclass(frozen=True)
class ClusterFactory:
    """What "New cluster" creates: a class by dotted path, its arguments, and its default size."""

    cluster_class: str = "distributed.LocalCluster"
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    workers: int | None = None
    adapt: dict[str, int] | None = None

    def within(self, limits: ClusterLimits, log: logging.Logger) -> ClusterFactory:
        """This factory with its default size inside ``limits`` (see ``configured_size``)."""
        workers, adapt = limits.configured_size(self.workers, self.adapt, "the default cluster size", log)
        kwargs = dict(self.kwargs)
        if self.cluster_class in _LOCAL_CLUSTER_NAMES:
            given = kwargs.get("n_workers")
            if isinstance(given, int) and given > limits.max_workers:
                kwargs["n_workers"], _ = limits.configured_size(given, None, "cluster_kwargs.n_workers", log)
            elif given is None and workers is None and adapt is None and limits.max_workers < usable_cores():
                # Left to itself a LocalCluster starts up to one worker per core: more than allowed.
                workers = limits.max_workers
                log.info("dashdock: a new cluster gets max_workers (%d) workers, under one a core", workers)
        return replace(self, workers=workers, adapt=adapt, kwargs=kwargs)

    def spec(self, workers: int | None, adapt: dict[str, int] | None) -> dict[str, Any]:
        kwargs = dict(self.kwargs)
        if adapt is None and workers is None:
            workers, adapt = self.workers, self.adapt
        if self.cluster_class in _LOCAL_CLUSTER_NAMES:
            # Loopback and a free dashboard port: reachable by the proxy, and many clusters side by side.
            kwargs.setdefault("host", "127.0.0.1")
            kwargs.setdefault("dashboard_address", "127.0.0.1:0")
            # Worker processes serve no dashboard unless asked; the worker selector lists their pages.
            kwargs.setdefault("worker_dashboard_address", "127.0.0.1:0")
            if workers is not None:
                kwargs["n_workers"] = workers  # started at that size rather than resized after
            elif adapt is not None:
                kwargs["n_workers"] = adapt["minimum"]
        return {
            "class": self.cluster_class,
            "args": list(self.args),
            "kwargs": kwargs,
            "workers": workers,
            "adapt": adapt,
        }


class ManagedCluster:
    """One cluster host process and what it last reported."""

    def __init__(self, cluster_id: str, name: str, process: asyncio.subprocess.Process) -> None:
        self.id = cluster_id
        self.name = name
        self.process = process
        self.status = "starting"
        self.adapt: dict[str, int] | None = None
        self.info: dict[str, Any] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.started: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._reader = asyncio.ensure_future(self._read_events())

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "status": self.status,
            "scheduler": self.info.get("scheduler"),
            "dashboard": self.info.get("dashboard"),
            "workers": self.info.get("workers", 0),
            "threads": self.info.get("threads", 0),
            "memory": self.info.get("memory", 0),
            "adapt": self.adapt,
            "source": self.id if self.status == "running" and self.info.get("dashboard") else None,
        }

    async def command(self, op: str, **arguments: Any) -> dict[str, Any]:
        if self.process.returncode is not None or self.process.stdin is None:
            raise ClusterError(409, f"The cluster {self.name} is not running.")
        command_id = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._pending[command_id] = answer
        self.process.stdin.write((json.dumps({"id": command_id, "op": op, **arguments}) + "\n").encode())
        await self.process.stdin.drain()
        try:
            reply = await asyncio.wait_for(answer, COMMAND_TIMEOUT)
        except TimeoutError:
            raise ClusterError(504, f"The cluster {self.name} did not answer in time.") from None
        finally:
            self._pending.pop(command_id, None)
        if "error" in reply:
            raise ClusterError(500, f"The cluster {self.name} could not do that: {reply['error']}")
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
                self.started.set_exception(ClusterError(500, message["error"]))
            elif (answer := self._pending.get(message.get("id", -1))) is not None and not answer.done():
                answer.set_result(message)
        self.status = "stopped"
        if not self.started.done():
            self.started.set_exception(ClusterError(500, "The cluster process exited before it started."))
        for answer in self._pending.values():
            if not answer.done():
                answer.set_result({"error": "the cluster process exited"})

    async def close(self) -> None:
        """Ask the host to close its cluster; kill its whole process group if it does not in time."""
        self.status = "closing"
        with contextlib.suppress(ClusterError, ConnectionError, OSError):
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

    def list(self) -> list[ManagedCluster]:
        return list(self._clusters.values())

    def get(self, cluster_id: str) -> ManagedCluster:
        try:
            return self._clusters[cluster_id]
        except KeyError:
            raise ClusterError(404, "There is no cluster with this id.") from None

    async def start(
        self, name: str | None = None, workers: int | None = None, adapt: dict[str, int] | None = None
    ) -> ManagedCluster:
        self.limits.check(workers, adapt)
        # The slot is taken before the first await: requests that arrive while hosts are still
        # starting (which takes seconds) see it taken, so no more than max_clusters hosts ever run.
        if self._hosts >= self.limits.max_clusters:
            raise ClusterError(
                409,
                f"This server runs at most {self.limits.max_clusters} clusters at a time and has that "
                "many (counting those starting, stopped or still shutting down). Shut one down, or "
                "raise the limit with c.DashdockApp.max_clusters.",
            )
        self._hosts += 1
        cluster_id = f"cluster-{uuid.uuid4().hex[:8]}"
        spec = json.dumps(self.factory.spec(workers, adapt)) + "\n"
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
        except (TimeoutError, ClusterError, ConnectionError) as exc:
            if self._clusters.pop(cluster_id, None) is None:
                raise _stopped_while_starting(cluster) from exc
            await self._close(cluster)
            if isinstance(exc, ClusterError):
                raise ClusterError(500, f"The cluster could not start: {exc.reason}") from exc
            raise ClusterError(504, f"The cluster did not start within {self._start_timeout:g} s.") from exc
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
        """A new cluster of the same size in the same host. Its dashboard may move (a LocalCluster
        takes a free port): the source follows, so open panes reload onto it. Its size is what the
        scheduler has, which may include workers started elsewhere, so the host bounds it too."""
        cluster = self.get(cluster_id)
        await cluster.command("restart", adapt=cluster.adapt, max_workers=self.limits.max_workers)
        dashboard = cluster.info.get("dashboard")
        if isinstance(dashboard, str) and dashboard.startswith(("http://", "https://")):
            self._registry.point(cluster_id, cluster.name, "cluster", dashboard)
        return cluster

    async def refresh(self) -> None:
        """Ask every running cluster for its current size (concurrently, cheap)."""
        running = [c for c in self._clusters.values() if c.status == "running"]
        await asyncio.gather(*(c.command("info") for c in running), return_exceptions=True)

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


def _stopped_while_starting(cluster: ManagedCluster) -> ClusterError:
    return ClusterError(409, f"The cluster {cluster.name} was shut down while it was starting.")
