"""Restart from a cluster card, as the user sees it afterwards: no alarm for their own click, and
the new scheduler's workers in every view.

A real managed LocalCluster with a recorder, restarted through the API the card calls.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client
from test_clusters import eventually

pytestmark = pytest.mark.slow  # real clusters and recorders


async def _runs_of(jupyter: Jupyter, source: str) -> list[dict[str, Any]]:
    code, listing = await jupyter.api("GET", "history")
    assert code == 200, listing
    return [run for run in listing["runs"] if run["source"] == source]


async def test_a_restart_raises_no_worker_lost_alert_and_the_summary_counts_the_new_workers(
    jupyter: Jupyter,
) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 2})
    assert code == 201, cluster
    source = cluster["source"]
    summary = "summary?dashboard=" + urllib.parse.quote(cluster["dashboard"], safe="")
    try:

        async def counts_workers() -> dict[str, Any] | None:
            _, body = await jupyter.api("GET", summary)
            return body if (body.get("counts") or {}).get("workers") == 2 else None

        # The repr's summary has been read: the server's pool keeps a connection to the dashboard.
        assert await eventually(counts_workers, 30), (await jupyter.api("GET", summary))[1]

        async def recording() -> bool:
            return any(run["live"] for run in await _runs_of(jupyter, source))

        assert await eventually(recording, 60)
        async with Client(cluster["scheduler"], asynchronous=True) as client:
            # Results in memory and tasks running, which the restart drops: the workers take a
            # while to close, long enough for the recorder to see them go.
            assert await client.submit(sum, [1, 2]) == 3
            sleeping = client.map(time.sleep, [60] * 4, pure=False)

            async def running() -> bool:
                return sum(len(tasks) for tasks in (await client.processing()).values()) == 4

            assert await eventually(running, 30)
            code, restarted = await jupyter.api("POST", f"clusters/{cluster['id']}/restart")
            assert code == 200 and restarted["workers"] == 2, restarted
            del sleeping

        # The repr reads the new scheduler, with its workers (it read "Workers 0" for good).
        assert await eventually(counts_workers, 30), (await jupyter.api("GET", summary))[1]

        # The recorder has seen the new scheduler (a new run): the old one's workers left on purpose.
        async def new_run() -> bool:
            return len(await _runs_of(jupyter, source)) >= 2

        assert await eventually(new_run, 60), await _runs_of(jupyter, source)
        code, body = await jupyter.api("GET", f"alerts?source={source}")
        assert code == 200, body
        assert [alert for alert in body["alerts"] if alert["kind"] == "worker-lost"] == [], body["alerts"]
    finally:
        await jupyter.api("DELETE", f"clusters/{cluster['id']}")
