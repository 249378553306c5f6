"""Does a busy Dask cluster slow the Jupyter server down? ``GET /api/status`` latency while it works.

The Jupyter server's own ``GET {base}api/status`` is polled every 50 ms (token auth; on a fixed schedule,
not waiting for the previous answer, so a stall counts every poll it delays) for 30 s while a separate
client process runs 100,000 tiny tasks (``client.gather(client.map(inc, range(100_000)))``) on a 2-worker
cluster; the tasks still pending after 30 s are dropped with the client. Two set-ups, one after the other
in the same run:

- dashdock: the cluster is started through ``POST dashdock/api/clusters`` (``workers=2``), so its scheduler
  lives in a cluster host process of its own;
- in-process: a ``LocalCluster(processes=True, asynchronous=True, n_workers=2)`` created on the Jupyter
  server's own event loop when the server starts, the way dask-labextension creates its clusters
  (a tiny server extension written to a temp dir; dashdock is loaded there too, idle).

Each set-up is polled idle for 5 s first. Printed per row: polls, p50 / p99 / max latency, polls over
100 ms, tasks done in the window and tasks/s; then the in-process p99 over dashdock's. Target: dashdock's
p99 under load < 50 ms. Every process started is stopped at the end (leftovers are SIGKILLed and counted).
Run: .venv/bin/python bench/server_responsiveness.py (about 90 s).
Internally ``server_responsiveness.py workload ADDRESS TASKS`` is the client process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from _common import (
    AUTH,
    JupyterServer,
    heading,
    percentile,
    table,
)

SCRIPT = Path(__file__).resolve()
TASKS = 100_000
WORKERS = 2
EVERY = 0.050  # seconds between polls
IDLE = 5.0  # seconds of polling before the workload
SLOW = 0.100  # a poll over this is counted
TARGET_P99 = 0.050
WINDOW = 30.0  # seconds of polling under load (the tasks are stopped then if not done)

_EXTENSION = '''
"""Creates a LocalCluster on the Jupyter server's own loop, as dask-labextension does."""
import os
from pathlib import Path


def _jupyter_server_extension_points():
    return [{"module": "bench_inprocess_cluster"}]


def _load_jupyter_server_extension(serverapp):
    async def start():
        from distributed import LocalCluster

        cluster = await LocalCluster(
            n_workers=int(os.environ["BENCH_WORKERS"]),
            processes=True,
            asynchronous=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
        )
        serverapp.web_app.settings["bench_cluster"] = cluster
        Path(os.environ["BENCH_ADDRESS_FILE"]).write_text(cluster.scheduler_address)

    serverapp.io_loop.add_callback(start)
'''


# -- the client process -----------------------------------------------------------------------


def inc(x: int) -> int:
    return x + 1


def workload(address: str, tasks: int) -> None:
    """Connect, say "start", run the tasks; every 0.5 s say "progress DONE SECONDS", at the end "done ..."."""
    import threading

    from distributed import Client

    with Client(address, timeout=60) as client:
        print("start", flush=True)
        started = time.perf_counter()
        futures = client.map(inc, range(tasks))
        finished = threading.Event()

        def report() -> None:
            while not finished.wait(0.5):
                done = sum(future.done() for future in futures)
                print(f"progress {done} {time.perf_counter() - started:.3f}", flush=True)

        threading.Thread(target=report, daemon=True).start()
        results = client.gather(futures)
        finished.set()
        assert len(results) == tasks and results[-1] == tasks
        print(f"done {tasks} {time.perf_counter() - started:.3f}", flush=True)


# -- processes --------------------------------------------------------------------------------


def descendants(root: int) -> list[int]:
    try:
        import psutil

        return [child.pid for child in psutil.Process(root).children(recursive=True)]
    except ImportError:
        pass
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            ppid = int(Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def kill_leftovers(pids: list[int]) -> int:
    """SIGKILL whatever of ``pids`` still runs (after a grace period); returns how many were killed."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_running(pid) for pid in pids):
        time.sleep(0.2)
    killed = 0
    for pid in pids:
        if _running(pid):
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
    return killed


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


class InProcessClusterServer(JupyterServer):
    """A Jupyter server whose LocalCluster lives on its own loop (dask-labextension's way)."""

    def __init__(self) -> None:
        tmp = tempfile.mkdtemp(prefix="dashdock-bench-inproc-")
        Path(tmp, "bench_inprocess_cluster.py").write_text(textwrap.dedent(_EXTENSION))
        self.address_file = Path(tmp, "scheduler-address")
        super().__init__(
            with_jsp=False,
            tmp=tmp,
            extra_extensions={"bench_inprocess_cluster": True},
            extra_env={
                "PYTHONPATH": os.pathsep.join(filter(None, [tmp, os.environ.get("PYTHONPATH")])),
                "BENCH_WORKERS": str(WORKERS),
                "BENCH_ADDRESS_FILE": str(self.address_file),
            },
        )

    def scheduler_address(self, timeout: float = 120.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.address_file.exists() and (text := self.address_file.read_text().strip()):
                return text
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self._dump_log()
        raise RuntimeError("the in-process LocalCluster did not start")

    def close(self) -> None:
        self.__exit__()


# -- measuring --------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    latencies: list[float]
    tasks_done: int | None = None
    seconds: float | None = None

    def cells(self) -> list[str]:
        values = self.latencies
        rate = f"{self.tasks_done / self.seconds:,.0f}" if self.tasks_done and self.seconds else "-"
        return [
            self.name,
            str(len(values)),
            f"{percentile(values, 50) * 1000:.1f}",
            f"{percentile(values, 99) * 1000:.1f}",
            f"{max(values) * 1000:.1f}" if values else "n/a",
            str(sum(value > SLOW for value in values)),
            f"{self.tasks_done:,}" if self.tasks_done is not None else "-",
            rate,
        ]


def poller() -> aiohttp.ClientSession:
    """Token auth, and no cap on connections: polls due while the server stalls each get one."""
    return aiohttp.ClientSession(headers=AUTH, connector=aiohttp.TCPConnector(limit=0))


async def poll(session: aiohttp.ClientSession, url: str, until: asyncio.Future[object]) -> list[float]:
    """GET ``url`` every EVERY seconds until ``until`` is done; the latency of each request.

    Requests go out on schedule whether or not the previous one was answered (as a page's pollers do),
    each on a connection of its own if need be, so a stalled server shows as every poll it delayed,
    not as one slow poll.
    """
    latencies: list[float] = []
    in_flight: set[asyncio.Future[None]] = set()

    async def one() -> None:
        started = time.perf_counter()
        async with session.get(url) as response:
            await response.read()
            assert response.status == 200, response.status
        latencies.append(time.perf_counter() - started)

    next_at = time.perf_counter()
    while not until.done():
        request = asyncio.ensure_future(one())
        in_flight.add(request)
        request.add_done_callback(in_flight.discard)
        next_at += EVERY
        await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
    await asyncio.gather(*in_flight)
    return latencies


async def idle_row(session: aiohttp.ClientSession, server_url: str, name: str) -> Row:
    timer = asyncio.ensure_future(asyncio.sleep(IDLE))
    return Row(name, await poll(session, f"{server_url}/api/status", timer))


async def loaded_row(session: aiohttp.ClientSession, server_url: str, name: str, address: str) -> Row:
    """Poll for WINDOW seconds (or until the tasks are done) while a client process runs them."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        "workload",
        address,
        str(TASKS),
        stdout=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None
    stdout = process.stdout
    progress: list[float] = [0, 0.0]  # tasks done, seconds since they were submitted

    async def follow() -> None:
        while line := await stdout.readline():
            word, *values = line.decode().split()
            if word in ("progress", "done"):
                progress[:] = [float(values[0]), float(values[1])]
            if word == "done":
                return
        raise RuntimeError("the workload exited before its tasks were done")

    try:
        line = await asyncio.wait_for(stdout.readline(), 120)
        if line.strip() != b"start":
            raise RuntimeError(f"the workload did not start: {line!r}")
        finished = asyncio.ensure_future(asyncio.wait_for(follow(), WINDOW))
        latencies = await poll(session, f"{server_url}/api/status", finished)
        error = finished.exception()
        if error is not None and not isinstance(error, TimeoutError):
            raise error
        done, seconds = int(progress[0]), progress[1]
        print(f"  {name}: {len(latencies)} polls, {done:,} tasks done in {seconds:.1f} s", flush=True)
        return Row(name, latencies, done, seconds)
    finally:
        if process.returncode is None:
            process.kill()  # the rest of the tasks are dropped with the client
            await process.wait()


async def measure_dashdock() -> list[Row]:
    with JupyterServer(with_jsp=False) as server:
        pids: list[int] = []
        try:
            await server.wait_ready()
            async with poller() as session:
                idle = await idle_row(session, server.url, "dashdock, idle")
                async with session.post(
                    f"{server.url}/dashdock/api/clusters", json={"name": "bench", "workers": WORKERS}
                ) as response:
                    cluster = await response.json()
                    if response.status != 201:
                        raise RuntimeError(f"POST dashdock/api/clusters: {response.status} {cluster}")
                pids = descendants(server.pid)
                loaded = await loaded_row(session, server.url, "dashdock, 100k tasks", cluster["scheduler"])
                async with session.delete(f"{server.url}/dashdock/api/clusters/{cluster['id']}") as response:
                    assert response.status == 204, response.status
            return [idle, loaded]
        finally:
            pids = pids or descendants(server.pid)
            server.__exit__()
            if killed := kill_leftovers(pids):
                print(f"  (killed {killed} leftover processes of the dashdock run)")


async def measure_in_process() -> list[Row]:
    server = InProcessClusterServer()
    pids: list[int] = []
    try:
        address = await asyncio.get_running_loop().run_in_executor(None, server.scheduler_address)
        pids = descendants(server.proc.pid)
        async with poller() as session:
            idle = await idle_row(session, server.url, "in-process, idle")
            loaded = await loaded_row(session, server.url, "in-process, 100k tasks", address)
        return [idle, loaded]
    finally:
        pids = pids or descendants(server.proc.pid)
        server.close()
        if killed := kill_leftovers(pids):
            print(f"  (killed {killed} leftover processes of the in-process run)")


async def main() -> None:
    heading(
        f"GET /api/status every {EVERY * 1000:.0f} ms while a {WORKERS}-worker cluster runs {TASKS:,} tiny "
        "tasks from another process"
    )
    rows = await measure_dashdock()
    rows += await measure_in_process()
    table(
        [
            [
                "server / cluster",
                "polls",
                "p50 ms",
                "p99 ms",
                "max ms",
                f">{SLOW * 1000:.0f} ms",
                "tasks done",
                "tasks/s",
            ]
        ]
        + [row.cells() for row in rows]
    )
    dashdock, in_process = rows[1], rows[3]
    p99_dashdock, p99_in_process = percentile(dashdock.latencies, 99), percentile(in_process.latencies, 99)
    ratio = f"{p99_in_process / p99_dashdock:.1f}x" if p99_dashdock else "n/a"
    print(f"\n  in-process p99 / dashdock p99 under load: {ratio}")
    verdict = "met" if p99_dashdock < TARGET_P99 else "NOT met"
    print(f"  target dashdock p99 < {TARGET_P99 * 1000:.0f} ms under load: {verdict}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "workload":
        workload(sys.argv[2], int(sys.argv[3]))
    else:
        asyncio.run(main())
