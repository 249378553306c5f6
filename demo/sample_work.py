"""A real LocalCluster kept busy with varied sample work, so every dashboard plot has something to show.

Run as a script: prints ``SCHEDULER <address>`` and ``DASHBOARD <url>`` once the cluster is up, then
computes until stopped.
Used by ``make demo`` and by the UI tests (which need a scheduler in its own process).
"""

from __future__ import annotations

import argparse
import random
import signal
import threading
import time
import warnings

import dask
import dask.array as da
from distributed import Client, LocalCluster

from dashdock.kernel.plot_state import offer as offer_plot_state


def _slow_increment(x: int) -> int:
    time.sleep(random.uniform(0.02, 0.2))
    return x + 1


def _one_round(client: Client, round_number: int, size: int, blocks: int) -> None:
    # An array reduction (many small tasks, memory), then a delayed tree (a readable graph).
    side = max(1, size // blocks)
    array = da.random.random((size, size), chunks=(side, side))
    client.compute((array @ array.T).mean()).result()
    leaves = [dask.delayed(_slow_increment)(i + round_number) for i in range(32)]
    pairs = [dask.delayed(sum)(leaves[i : i + 4]) for i in range(0, 32, 4)]
    client.compute(dask.delayed(sum)(pairs)).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dashboard-port", type=int, default=8787, help="0 picks a free port")
    parser.add_argument("--workers", type=int, default=2)
    # Each round a computation of its own: the recorder ends one once the scheduler was idle at
    # two of its ticks, a second apart. Half a second made the whole demo one computation, which
    # "finished after 3 min 52 s" (an alert) at whichever pause a busy machine drew out.
    parser.add_argument("--pause", type=float, default=2.5, help="seconds between rounds of work")
    # The demo's default keeps two cores busy; the browser tests ask for much less, so the
    # cluster that runs under every one of them leaves the machine to Lab and Chromium.
    parser.add_argument("--size", type=int, default=3000, help="side of the array each round multiplies")
    parser.add_argument("--blocks", type=int, default=10, help="chunks along each side of that array")
    args = parser.parse_args()
    # The sample work rechunks on purpose; Dask's advice about it is noise in the demo's terminal.
    warnings.filterwarnings("ignore", category=da.PerformanceWarning)

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=f"127.0.0.1:{args.dashboard_port}",
        # Each worker serves its own dashboard too, for dashdock's worker selector.
        worker_dashboard_address="127.0.0.1:0",
    )
    client = Client(cluster)
    # Its Progress and worker plots are drawn by dashdock for every viewer, from one connection.
    client.run_on_scheduler(lambda dask_scheduler: offer_plot_state(dask_scheduler))
    print(f"SCHEDULER {cluster.scheduler_address}", flush=True)
    # The dashboard's own address, not ``dashboard_link``: a shell started by a Jupyter server
    # with dashdock (a Lab terminal) has Dask's link template pointing at that server's proxy.
    print(f"DASHBOARD http://127.0.0.1:{cluster.scheduler.http_server.port}/status", flush=True)
    # run_demo.py stops the work with SIGTERM: the round under way ends, then the cluster closes.
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    round_number = 0
    try:
        while not stopping.is_set():
            _one_round(client, round_number, args.size, args.blocks)
            round_number += 1
            stopping.wait(args.pause)
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
