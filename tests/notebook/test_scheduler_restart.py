"""A scheduler restarted under a notebook's client: killed, started again on the same address.

The kernel's client reconnects by itself (Dask does); dashdock's ledger is not on the new
scheduler until the kernel installs it again, and later cells must still get their strips.
"""

from __future__ import annotations

import asyncio
import selectors
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from _kernels import Kernel
from _ports import free_port
from _support import Jupyter
from test_cell_accounting import settled_report, strips

from dashdock.kernel import ledger
from dashdock.kernel.protocol import CELL_MIME_TYPE

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

# A scheduler and one worker (threads, no nanny) in a process of their own, so a SIGKILL takes both.
CLUSTER = """
import asyncio, sys
from distributed import Scheduler, Worker

async def main(port):
    async with Scheduler(host="127.0.0.1", port=port, dashboard_address="127.0.0.1:0") as scheduler:
        async with Worker(scheduler.address, nthreads=2, host="127.0.0.1", dashboard=False):
            print("ready", flush=True)
            await asyncio.Event().wait()

asyncio.run(main(int(sys.argv[1])))
"""


class ClusterProcess:
    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        """Starts the process; returns once it serves (or fails after a minute)."""
        self.process = subprocess.Popen(
            [sys.executable, "-c", CLUSTER, str(self.port)], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        # A selector, not select(): late in a suite this process has more than 1,024 descriptors.
        with selectors.DefaultSelector() as selector:
            selector.register(self.process.stdout, selectors.EVENT_READ)
            ready = selector.select(60)
        line = self.process.stdout.readline() if ready else ""
        assert line.strip() == "ready", f"the cluster process did not start: {line!r}"

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


@pytest.fixture
def cluster_process() -> Iterator[ClusterProcess]:
    cluster = ClusterProcess(free_port())
    cluster.start()
    yield cluster
    cluster.kill()


async def until(check: Callable[[], Any], seconds: float, what: str) -> Any:
    """``check()`` (run in a thread: it may block) once it is true; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := await asyncio.to_thread(check):
            return value
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def scheduler_state(address: str) -> dict[str, Any]:
    """The scheduler's clients (other than this probe) and plugins, asked by a client of the test's."""
    import dask
    from distributed import Client

    def state(dask_scheduler: Any) -> dict[str, Any]:
        return {"clients": list(dask_scheduler.clients), "plugins": list(dask_scheduler.plugins)}

    with dask.config.set({"distributed.client.preload": []}), Client(address, timeout=10) as probe:
        found = probe.run_on_scheduler(state)
        found["clients"] = [c for c in found["clients"] if c.startswith("Client-") and c != probe.id]
        return found


async def test_cells_after_the_scheduler_restarted_on_its_address_get_their_strips(
    jupyter: Jupyter, jp_serverapp: Any, cluster_process: ClusterProcess
) -> None:
    address = f"tcp://127.0.0.1:{cluster_process.port}"
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(
            f"from distributed import Client\nclient = Client({address!r}, timeout=30)\n"
            "def inc(x):\n    return x + 1"
        )
        await kernel.run("before = client.gather(client.map(inc, range(100)))")
        (first,) = strips(kernel)
        assert first[CELL_MIME_TYPE]["report"]["tasks"] == 100

        cluster_process.kill()
        await asyncio.to_thread(cluster_process.start)
        # The kernel's client reconnects by itself, while the kernel is idle: no cell runs until
        # the new scheduler has it, so the next cell is the first the new scheduler sees.
        restarted = await until(lambda: scheduler_state(address), 60, "the kernel's client to reconnect")
        assert ledger.PLUGIN_NAME not in restarted["plugins"]  # a new scheduler: no ledger yet
        # The new scheduler may list the client a moment before the kernel's client says it is
        # connected (longer on a loaded machine than the 2 s a cell's start waits for it).
        for _ in range(120):
            if (await kernel.run("print(client.status)")).strip() == "running":
                break
            await asyncio.sleep(0.5)

        printed = await kernel.run(
            "after = client.gather(client.map(inc, range(1000, 1037)))\nprint(len(after))"
        )
        assert printed.strip() == "37"
        await kernel.run("again = client.gather(client.map(inc, range(2000, 2005)))")
        shown = strips(kernel)
        second_id = shown[1][CELL_MIME_TYPE]["cell_id"] if len(shown) > 1 else None
        served = await settled_report(jupyter, kernel, second_id) if second_id else None
        now = await asyncio.to_thread(scheduler_state, address)

    counts = [(s[CELL_MIME_TYPE]["report"]["tasks"], s[CELL_MIME_TYPE]["report"]["done"]) for s in shown]
    assert counts == [(100, 100), (37, 37), (5, 5)]  # the first cell after the restart included
    assert served is not None and (served["tasks"], served["done"], served["settled"]) == (37, 37, True)
    # The new scheduler got the ledger and a task stream (for the history) from the kernel.
    assert ledger.PLUGIN_NAME in now["plugins"] and "task-stream" in now["plugins"], now
