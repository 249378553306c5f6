"""What the tests of dashdock's drawn plots share: a cluster in the test's process (so a test can
count its scheduler's Bokeh sessions), its dashboard's root, and that count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from distributed import LocalCluster


@contextmanager
def in_process_cluster(threads_per_worker: int) -> Iterator[LocalCluster]:
    with LocalCluster(
        n_workers=2,
        threads_per_worker=threads_per_worker,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as local:
        yield local


def dashboard_root(cluster: LocalCluster) -> str:
    return f"http://127.0.0.1:{cluster.scheduler.http_server.port}"


def scheduler_sessions(cluster: LocalCluster) -> int:
    """The Bokeh sessions of the scheduler's own dashboard (its open plot pages)."""
    from bokeh.server.tornado import BokehTornado

    return sum(
        len(list(context.sessions))
        for app in cluster.scheduler.http_application.applications
        if isinstance(app, BokehTornado)
        for context in app._applications.values()
    )
