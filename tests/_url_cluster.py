"""A LocalCluster in a process of its own on fixed ports: a cluster a user gives dashdock by its URL.

Run as ``python _url_cluster.py <scheduler port> <dashboard port> [--offer-plot-state]``; prints
``ready`` once it serves, and runs until terminated (the tests stop it and start it again on the
same ports).
"""

from __future__ import annotations

import signal
import sys
import threading

from distributed import LocalCluster

if __name__ == "__main__":
    scheduler_port, dashboard_port = int(sys.argv[1]), int(sys.argv[2])
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=scheduler_port,
        dashboard_address=f"127.0.0.1:{dashboard_port}",
        worker_dashboard_address=None,
    )
    if "--offer-plot-state" in sys.argv:  # as a scheduler started with dashdock's preload
        from dashdock.kernel import plot_state

        plot_state.offer(cluster.scheduler)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    stop.wait()
    cluster.close(timeout=10)
