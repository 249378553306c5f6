"""The worker selector: a source's workers and their own dashboard pages, through the same proxy."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from _support import Jupyter, RecordingUpstream
from distributed import Client, LocalCluster


@pytest.fixture(scope="module")
def cluster_with_worker_dashboards() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        worker_dashboard_address="127.0.0.1:0",
    )
    yield cluster
    cluster.close()


async def test_a_sources_workers_are_listed_with_their_pages_even_on_a_busy_cluster(
    jupyter: Jupyter, cluster_with_worker_dashboards: LocalCluster
) -> None:
    cluster = cluster_with_worker_dashboards
    # After work has run, the scheduler's /json/identity.json answers 500; the list must not care.
    with Client(cluster) as client:
        assert sum(client.gather(client.map(lambda x: x + 1, range(50)))) == 1275
    source = await jupyter.add_source(cluster.dashboard_link)

    code, body = await jupyter.api("GET", f"sources/{source['id']}/workers")
    assert code == 200, body
    workers = body["workers"]
    expected = {w.address: w for w in cluster.workers.values()}
    assert {w["address"] for w in workers} == set(expected)
    for worker in workers:
        real = expected[worker["address"]]
        assert worker["threads"] == 1
        assert worker["memory_limit"] == real.memory_manager.memory_limit
        assert worker["reachable"] and worker["dashboard"] == f"127.0.0.1:{real.http_server.port}"
        assert [p["name"] for p in worker["pages"]] == [
            "Status",
            "System",
            "Profile",
            "Profile Server",
            "Counters",
        ]
    # A worker's page loads through the proxy.
    page = await jupyter.proxied(workers[0]["pages"][1]["url"], absolute=True)
    assert page.code == 200, page.body[:300]
    assert b"bokeh" in page.body.lower()


@pytest.fixture
def short_lived_cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address="127.0.0.1:0"
    )
    yield cluster
    cluster.close()


async def test_the_workers_of_an_unknown_or_dead_source(
    jupyter: Jupyter, short_lived_cluster: LocalCluster
) -> None:
    code, body = await jupyter.api("GET", "sources/0123456789ab/workers")
    assert code == 404 and body["message"] == "There is no source with this id."

    source = await jupyter.add_source(short_lived_cluster.dashboard_link)
    await asyncio.to_thread(short_lived_cluster.close)
    code, body = await jupyter.api("GET", f"sources/{source['id']}/workers")
    assert code == 502 and "is not available" in body["message"], body


async def test_scheduler_cannot_widen_allowlist_with_worker_addresses(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    """A scheduler names its workers' hosts; the proxy still reaches only what the allowlist admits."""
    source = await jupyter.add_source(recorder.url)
    code, body = await jupyter.api("GET", f"sources/{source['id']}/workers")
    assert code == 200, body
    far, sly, plain = body["workers"]
    assert far["dashboard"] == "10.0.0.7:8788" and not far["reachable"] and far["pages"] == []
    assert "not an allowed dashboard host" in far["reason"]
    # A host smuggled into the link is no dashboard at all.
    assert sly["dashboard"] is None and sly["pages"] == []
    assert not plain["reachable"] and "runs no dashboard" in plain["reason"]

    refused = await jupyter.proxied("dashdock/proxy/10.0.0.7:8788/status")
    assert refused.code == 403
