"""A flapping dashboard is one run (issue 40, item 2).

A hostile dashboard answers ``/health`` 503 and 200 in turn, and its info page names the same
real scheduler ``tcp://127.0.0.1:S`` and ``tcp://localhost:S`` in turn. It used to make a run every
few seconds, each raising its task-erred alerts again. Now the spellings are one scheduler, a run
of it is not begun again within ``RETRY_AFTER``, and its alerts are raised once.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client, LocalCluster
from test_alerts_api import ALERTS_SEEN, alerts, boom
from test_history_api import eventually, runs

from dashdock.history.addresses import last_recorded_as_any, scheduler_key, spellings
from dashdock.history.pacing import RETRY_AFTER

pytestmark = pytest.mark.slow  # a cluster and a server started per test

WATCHED = 20.0  # seconds of flapping watched: well within RETRY_AFTER
SYNCED = 2.5  # seconds a flap is left for the history's sync (every 2 s) to see it


class FlappingDashboard:
    """A Dask dashboard whose /health says 503 or 200 and whose info page names its scheduler as
    127.0.0.1 or localhost, as the test sets them; counts how often each was asked."""

    def __init__(self, scheduler_port: int) -> None:
        self.healthy = True
        self.host = "127.0.0.1"
        dashboard = self
        self.asked = {"/health": 0, "/info/main/workers.html": 0}
        lock = threading.Lock()
        asked = self.asked

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, body = 200, b""
                with lock:
                    if self.path == "/individual-plots.json":
                        body = b'{"Individual Task Stream": "/individual-task-stream"}'
                    elif self.path == "/health":
                        asked["/health"] += 1
                        status, body = (200 if dashboard.healthy else 503), b"ok"
                    elif self.path == "/info/main/workers.html":
                        asked["/info/main/workers.html"] += 1
                        body = f"<h1>Scheduler tcp://{dashboard.host}:{scheduler_port}</h1>".encode()
                    else:
                        status = 404
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
    )
    yield cluster
    cluster.close()


@pytest.fixture
def flapping(cluster: LocalCluster) -> Iterator[FlappingDashboard]:
    dashboard = FlappingDashboard(int(cluster.scheduler_address.rsplit(":", 1)[1]))
    yield dashboard
    dashboard.close()


def test_the_loopback_spellings_of_a_scheduler_are_one() -> None:
    one = {scheduler_key(a) for a in ("tcp://localhost:8786", "localhost:8786", "127.0.0.1:8786")}
    assert one == {scheduler_key("tcp://127.0.0.1:8786")} == {"tcp://127.0.0.1:8786"}
    assert scheduler_key("tcp://LOCALHOST.:8786") == "tcp://127.0.0.1:8786"
    # Other hosts, ports, schemes and ::1 stay apart; nothing is resolved.
    assert scheduler_key("tcp://127.0.0.1:8787") != scheduler_key("tcp://localhost:8786")
    assert scheduler_key("tcp://[::1]:8786") != scheduler_key("tcp://localhost:8786")
    assert scheduler_key("tls://localhost:8786") != scheduler_key("tcp://localhost:8786")
    assert scheduler_key("tcp://example.org:8786") == "tcp://example.org:8786"
    assert scheduler_key(None) is None
    assert spellings("tcp://localhost:1") == ("tcp://localhost:1", "tcp://127.0.0.1:1")
    assert spellings("tcp://10.0.0.1:1") == ("tcp://10.0.0.1:1",)


def test_a_new_run_goes_on_from_what_a_run_under_another_spelling_kept() -> None:
    class Store:
        kept = {"tcp://127.0.0.1:1": (5.0, frozenset({"a"})), "tcp://localhost:1": (9.0, frozenset({"b"}))}

        def last_recorded(self, scheduler: str, but: str) -> tuple[float, frozenset[str]] | None:
            return self.kept.get(scheduler)

    assert last_recorded_as_any(Store(), "tcp://127.0.0.1:1", "run") == (9.0, frozenset({"b"}))
    assert last_recorded_as_any(Store(), "tcp://localhost:2", "run") is None


async def test_a_flapping_dashboard_is_one_run_with_its_alerts_raised_once(
    jupyter: Jupyter, cluster: LocalCluster, flapping: FlappingDashboard
) -> None:
    assert WATCHED < RETRY_AFTER
    code, body = await jupyter.api(
        "PUT", "alerts/settings", {"kinds": ["task-erred"], "computationSeconds": 60}
    )
    assert code == 200, body
    code, source = await jupyter.api("POST", "sources", {"url": flapping.url, "name": "Flapping"})
    assert code == 201, source
    source_id = source["id"]

    async def checked() -> dict[str, Any]:
        """One health poll (the sidebar's): each flips the dashboard's /health."""
        code, listing = await jupyter.api("GET", "sources?check=1")
        assert code == 200, listing
        return next(s for s in listing["sources"] if s["id"] == source_id)

    async def source_runs() -> list[dict[str, Any]]:
        return [run for run in await runs(jupyter) if run["source"] == source_id]

    async def recording() -> bool:
        return any(run["live"] for run in await source_runs())

    assert await eventually(recording, 60), await checked()
    lost = (await checked())["lost"]

    async def erred() -> list[dict[str, Any]]:
        found = await alerts(jupyter, f"?source={source_id}")
        return [a for a in found if a["kind"] == "task-erred"]

    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        failing = client.map(boom, range(20), key=[f"flap-boom-{i}" for i in range(20)])
        await client.gather(failing, errors="skip")

    async def alerted() -> bool:
        return any(a["count"] == 20 for a in await erred())

    assert await eventually(alerted, ALERTS_SEEN), await alerts(jupyter)

    # The dashboard flaps: down (a 503 seen by a health poll), then up naming its scheduler the
    # other way, each state left for a sync to see; a run it would begin is listed after one more.
    hosts = itertools.cycle(["localhost", "127.0.0.1"])
    deadline = time.monotonic() + WATCHED
    while time.monotonic() < deadline:
        flapping.healthy = False
        assert (await checked())["health"]["status"] == "down"
        await asyncio.sleep(SYNCED)
        flapping.healthy, flapping.host = True, next(hosts)
        assert (await checked())["health"]["status"] == "up"
        await asyncio.sleep(SYNCED)
    assert flapping.asked["/info/main/workers.html"] >= 4, flapping.asked  # it named both, in turn

    assert len(await source_runs()) == 1, await source_runs()
    assert (await checked())["lost"] == lost
    raised = await erred()
    assert [a["count"] for a in raised] == [20], raised
