"""One managed cluster, in a process of its own: ``python -m dashdock.cluster_host``.

The Jupyter server starts one of these per managed cluster, so the scheduler's event loop (for a
LocalCluster it lives in the process that creates it) never shares a loop or a GIL with the
notebook server. The protocol is one JSON object per line: the spec on stdin first, then commands
(``{"id": 1, "op": "scale", "workers": 3}``, ``adapt``, ``info``, ``close``); every answer and
event is one line on stdout. When stdin closes (the server went away, however it died) the
cluster is closed and the process exits, so no scheduler or worker outlives its server.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import signal
import sys
import traceback
from typing import Any


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _import_class(path: str) -> type:
    module_name, _, class_name = path.rpartition(".")
    if not module_name:
        raise ImportError(f"'{path}' is not a dotted path such as distributed.LocalCluster")
    return getattr(importlib.import_module(module_name), class_name)


def _info(cluster: Any) -> dict[str, Any]:
    workers = cluster.scheduler_info.get("workers", {}) if cluster.scheduler_info else {}
    return {
        "scheduler": cluster.scheduler_address,
        "dashboard": cluster.dashboard_link,
        "workers": len(workers),
        "threads": sum(w.get("nthreads", 0) for w in workers.values()),
        "memory": sum(w.get("memory_limit", 0) or 0 for w in workers.values()),
    }


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    spec = json.loads(await reader.readline())
    cluster_class = _import_class(spec["class"])
    cluster = await cluster_class(*spec.get("args", []), asynchronous=True, **spec.get("kwargs", {}))
    try:
        if spec.get("adapt"):
            cluster.adapt(minimum=spec["adapt"]["minimum"], maximum=spec["adapt"]["maximum"])
        elif spec.get("workers") is not None:
            cluster.scale(spec["workers"])
        _emit({"event": "started", "info": _info(cluster)})
        await _command_loop(cluster, reader)
    finally:
        await cluster.close()


async def _command_loop(cluster: Any, reader: asyncio.StreamReader) -> None:
    while line := await reader.readline():
        command = json.loads(line)
        try:
            if command["op"] == "close":
                _emit({"id": command["id"], "ok": True})
                return
            if command["op"] == "scale":
                if getattr(cluster, "_adaptive", None) is not None:
                    cluster._adaptive.stop()  # a fixed size replaces adaptivity, as in Dask's own widget
                cluster.scale(command["workers"])
            elif command["op"] == "adapt":
                cluster.adapt(minimum=command["minimum"], maximum=command["maximum"])
            _emit({"id": command["id"], "ok": True, "info": _info(cluster)})
        except Exception as exc:  # any failure is reported to the server, never fatal
            _emit({"id": command["id"], "error": f"{type(exc).__name__}: {exc}"})


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        asyncio.run(_serve())
    except Exception as exc:  # the server shows this message to the user
        _emit({"event": "failed", "error": f"{type(exc).__name__}: {exc}", "detail": traceback.format_exc()})
        sys.exit(1)


if __name__ == "__main__":
    main()
