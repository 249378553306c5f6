"""One managed cluster, in a process of its own: ``python -m dashdock.clusters.host``.

The Jupyter server starts one of these per managed cluster, so the scheduler's event loop (for a
LocalCluster it lives in the process that creates it) never shares a loop or a GIL with the
notebook server. The protocol is one JSON object per line: the spec on stdin first, then commands
(``{"id": 1, "op": "scale", "workers": 3}``, ``adapt``, ``restart``, ``info``, ``close``); every answer and
event is one line on stdout. When stdin closes (the server went away, however it died) the
cluster is closed and the process exits, so no scheduler or worker outlives its server.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import json
import signal
import sys
import traceback
from typing import Any

from dashdock.kernel import fine_metrics, plot_state


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def import_class(path: str) -> type:
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        raise ImportError(f"'{path}' is not a dotted path such as distributed.LocalCluster")
    return getattr(importlib.import_module(module_name), class_name)


# Task states that shutting a cluster down would lose (Dask's scheduler-side states).
_UNFINISHED = ("waiting", "no-worker", "queued", "processing")
_TASKS_TIMEOUT = 5.0


async def _info(cluster: Any) -> dict[str, Any]:
    workers = cluster.scheduler_info.get("workers", {}) if cluster.scheduler_info else {}
    return {
        "scheduler": cluster.scheduler_address,
        "dashboard": cluster.dashboard_link,
        "workers": len(workers),
        "requested": _requested(cluster),
        "threads": sum(w.get("nthreads", 0) for w in workers.values()),
        "memory": sum(w.get("memory_limit", 0) or 0 for w in workers.values()),
        **await _task_counts(cluster),
    }


def _requested(cluster: Any) -> int | None:
    """The workers the cluster was asked for (a SpecCluster's spec: scale and adapt set it at once,
    the workers join later), so the sidebar can say "scaling to 3"; None when it cannot tell."""
    spec = getattr(cluster, "worker_spec", None)
    return len(spec) if isinstance(spec, dict) else None


async def _task_counts(cluster: Any) -> dict[str, int | None]:
    """How many tasks the scheduler has not finished (``tasks``) and how many results its workers
    hold (``held``), so the sidebar asks before a shut down loses either; None when the scheduler
    cannot tell."""
    groups = getattr(getattr(cluster, "scheduler", None), "task_groups", None)
    if isinstance(groups, dict):
        # The scheduler runs on this process's loop (a LocalCluster): its own counts, exact and cheap
        # (one entry per task group, not per task).
        listed = list(groups.values())
        return {
            "tasks": sum(group.states.get(state, 0) for group in listed for state in _UNFINISHED),
            "held": sum(group.states.get("memory", 0) for group in listed),
        }
    comm = getattr(cluster, "scheduler_comm", None)
    if comm is None:
        return {"tasks": None, "held": None}
    try:
        # A remote scheduler (a SpecCluster's in another process or on another host): its per-prefix
        # counts, which leave out queued and no-worker tasks (Dask does not send them).
        prefixes = await asyncio.wait_for(comm.get_task_prefix_states(), _TASKS_TIMEOUT)
    except Exception:  # an unanswered count must not fail the command it rides on
        return {"tasks": None, "held": None}
    counts = list(prefixes.values())
    return {
        "tasks": sum(c.get("processing", 0) + c.get("waiting", 0) for c in counts),
        "held": sum(c.get("memory", 0) for c in counts),
    }


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    host = _Host(json.loads(await reader.readline()))
    await host.create(host.spec.get("workers"), host.spec.get("adapt"))
    try:
        _emit({"event": "started", "info": await _info(host.cluster)})
        await host.serve(reader)
    finally:
        await host.cluster.close()


class _Host:
    """The cluster this process runs, made from the spec; a restart replaces it with a new one."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.cluster: Any = None

    async def create(
        self, workers: int | None, adapt: dict[str, int] | None, ports: tuple[int, int] | None = None
    ) -> None:
        """Start the cluster; with ``ports`` (scheduler, dashboard), on those, when the class takes them
        and they are free: what a restart does, so that connected clients reconnect by themselves."""
        cluster_class = import_class(self.spec["class"])
        args, kwargs = self.spec.get("args", []), dict(self.spec.get("kwargs", {}))
        size = adapt["minimum"] if adapt else workers
        if "n_workers" in kwargs and size is not None:
            # The server gave n_workers (a LocalCluster): a restart starts at the size it asks for,
            # not the size of the first start, and is at that size when it answers.
            kwargs["n_workers"] = size
        same = _on_ports(cluster_class, kwargs, ports) if ports else None
        try:
            self.cluster = await cluster_class(*args, asynchronous=True, **(same or kwargs))
        except Exception:
            if same is None:
                raise
            # A port taken meanwhile: new ports (clients of the old address are told by the card).
            self.cluster = await cluster_class(*args, asynchronous=True, **kwargs)
        # The scheduler keeps a task stream from its first task (Dask starts one only when first
        # asked): the history records what a client computes the moment the cluster answers.
        with contextlib.suppress(Exception):
            await self.cluster.scheduler_comm.get_task_stream_index()
        # A scheduler running in this process (a LocalCluster) offers its Fine Performance
        # Metrics totals to the history recorder too.
        scheduler = getattr(self.cluster, "scheduler", None)
        if hasattr(scheduler, "cumulative_worker_metrics"):
            fine_metrics.offer(scheduler)
            plot_state.offer(scheduler)  # and what its drawn plots read (live/mirror.py)
        if adapt:
            self.cluster.adapt(minimum=adapt["minimum"], maximum=adapt["maximum"])
        elif workers is not None:
            self.cluster.scale(workers)

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Answer commands until ``close`` or the end of stdin."""
        while line := await reader.readline():
            command = json.loads(line)
            try:
                if command["op"] == "close":
                    _emit({"id": command["id"], "ok": True})
                    return
                await self._run(command)
                _emit({"id": command["id"], "ok": True, "info": await _info(self.cluster)})
            except Exception as exc:  # any failure is reported to the server, never fatal
                _emit({"id": command["id"], "error": f"{type(exc).__name__}: {exc}"})

    async def _run(self, command: dict[str, Any]) -> None:
        cluster = self.cluster
        if command["op"] == "restart":
            # A fresh scheduler and workers of the same size, on the same address when the class
            # allows (a LocalCluster): what users do to clear a cluster's state or leaked memory,
            # and a connected notebook's client reconnects to it, as to a restarted scheduler. That
            # size counts workers that joined the scheduler from elsewhere, so it is held to the
            # server's limit.
            adapt = command.get("adapt")
            running = len(cluster.scheduler_info.get("workers", {}))
            workers = None if adapt else min(running, command["max_workers"])
            ports = _ports_of(cluster)
            await _close_for_restart(cluster)
            await self.create(workers, adapt, ports)
        elif command["op"] == "scale":
            if getattr(cluster, "_adaptive", None) is not None:
                cluster._adaptive.stop()  # a fixed size replaces adaptivity, as in Dask's own widget
            cluster.scale(command["workers"])
        elif command["op"] == "adapt":
            cluster.adapt(minimum=command["minimum"], maximum=command["maximum"])


async def _close_for_restart(cluster: Any) -> None:
    """Close ``cluster`` for the restart the user asked for. Its workers leave as closed on purpose,
    so the history raises no "worker lost" for them. Its dashboard drops the connections it has
    open: tornado's server stops listening on close but goes on answering on kept-alive ones, so
    a client that kept one (the server's upstream pool) would read the old scheduler, in this
    process with no workers, instead of the new one on the same port."""
    scheduler = getattr(cluster, "scheduler", None)  # a LocalCluster's, on this process's loop
    http_server = getattr(scheduler, "http_server", None)
    remove_worker = getattr(scheduler, "remove_worker", None)
    if callable(remove_worker):
        for address in list(getattr(scheduler, "workers", {})):
            with contextlib.suppress(Exception):  # a worker already gone: nothing to say of it
                await remove_worker(address, stimulus_id=_RESTART_STIMULUS, expected=True, close=True)
    await cluster.close()
    if http_server is not None:
        with contextlib.suppress(Exception):
            await http_server.close_all_connections()


_RESTART_STIMULUS = "dashdock-restart"


def _ports_of(cluster: Any) -> tuple[int, int] | None:
    """The scheduler's and the dashboard's ports of a running cluster, when it says them."""
    with contextlib.suppress(Exception):
        scheduler = int(str(cluster.scheduler_address).rsplit(":", 1)[1])
        dashboard = int(str(cluster.dashboard_link).split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        return scheduler, dashboard
    return None


def _on_ports(cluster_class: type, kwargs: dict[str, Any], ports: tuple[int, int]) -> dict[str, Any] | None:
    """``kwargs`` for the same ports, or None when the class does not take them (only a
    LocalCluster-like class does: ``scheduler_port`` and ``dashboard_address``)."""
    with contextlib.suppress(TypeError, ValueError):
        parameters = inspect.signature(cluster_class).parameters
        if "scheduler_port" in parameters and "dashboard_address" in parameters:
            host = str(kwargs.get("dashboard_address") or "127.0.0.1:0").rsplit(":", 1)[0]
            return {**kwargs, "scheduler_port": ports[0], "dashboard_address": f"{host}:{ports[1]}"}
    return None


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(_serve())
    except Exception as exc:  # the server shows this message to the user
        _emit({"event": "failed", "error": f"{type(exc).__name__}: {exc}", "detail": traceback.format_exc()})
        sys.exit(1)


if __name__ == "__main__":
    main()
