"""A dashboard added by its URL is recorded and raises alerts exactly as a managed cluster does.

The cluster runs in a process of its own (_url_cluster.py), as a user's cluster would: its
dashboard's info page names its scheduler, which the history records when the allowlist admits its
host. A worker killed, 1,000 failing tasks and the scheduler stopped and started on the same ports
give the same alerts as for a managed cluster.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _ports import free_ports
from _support import Jupyter
from distributed import Client, LocalCluster
from test_alerts_api import ALERTS_SEEN, alert_of, alerts, boom
from test_history_api import eventually, run_of

from dashdock.history.store import HistoryStore

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

CLUSTER = Path(__file__).resolve().parent.parent / "_url_cluster.py"


class UrlCluster:
    def __init__(self, options: tuple[str, ...] = ()) -> None:
        self.scheduler_port, self.dashboard_port = free_ports(2)
        self.options = options  # more of _url_cluster.py's arguments
        self.process: subprocess.Popen[str] | None = None

    @property
    def address(self) -> str:
        return f"tcp://127.0.0.1:{self.scheduler_port}"

    @property
    def dashboard(self) -> str:
        return f"http://127.0.0.1:{self.dashboard_port}/status"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(CLUSTER), str(self.scheduler_port), str(self.dashboard_port), *self.options],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "ready"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def url_cluster() -> Iterator[UrlCluster]:
    cluster = UrlCluster()
    cluster.start()
    yield cluster
    cluster.stop()


async def checked_source(jupyter: Jupyter, source_id: str) -> dict[str, Any]:
    code, listing = await jupyter.api("GET", "sources?check=1")
    assert code == 200
    return next(source for source in listing["sources"] if source["id"] == source_id)


async def test_a_url_source_is_recorded_and_alerts_like_a_managed_cluster(
    jupyter: Jupyter, url_cluster: UrlCluster, sources_file: Path
) -> None:
    code, body = await jupyter.api(
        "PUT", "alerts/settings", {"kinds": ["worker-lost", "task-erred"], "computationSeconds": 60}
    )
    assert code == 200, body
    code, source = await jupyter.api("POST", "sources", {"url": url_cluster.dashboard, "name": "Mine"})
    assert code == 201, source
    source_id = source["id"]

    async def recording() -> bool:
        checked = await checked_source(jupyter, source_id)
        return checked["unrecorded"] is None and await run_of(jupyter, source_id) is not None

    assert await eventually(recording, 120), await checked_source(jupyter, source_id)
    await asyncio.sleep(2)  # a tick or two: the recorder has read the workers that are there

    async with Client(url_cluster.address, asynchronous=True) as client:
        failing = client.map(boom, range(1000), key=[f"boom-{i}" for i in range(1000)])
        await client.gather(failing, errors="skip")

        async def all_counted() -> bool:
            alert = await alert_of(jupyter, source_id, "task-erred")
            return alert is not None and alert["count"] == 1000

        assert await eventually(all_counted, ALERTS_SEEN), await alerts(jupyter)

        pids = await client.run(os.getpid)
        victim, pid = sorted(pids.items())[0]
        os.kill(pid, signal.SIGKILL)

        async def lost() -> bool:
            return await alert_of(jupyter, source_id, "worker-lost") is not None

        assert await eventually(lost, ALERTS_SEEN), await alerts(jupyter)
        gone = await alert_of(jupyter, source_id, "worker-lost")
        assert gone is not None and gone["detail"]["worker"] == victim

    run = await run_of(jupyter, source_id)
    assert run is not None and run["tasks"] >= 1000 and run["name"] == "Mine"

    # The scheduler stopped and started again on the same ports: lost, then back.
    url_cluster.stop()

    async def scheduler_lost() -> bool:
        await checked_source(jupyter, source_id)
        return await alert_of(jupyter, source_id, "scheduler-lost") is not None

    assert await eventually(scheduler_lost, 120), await alerts(jupyter)
    url_cluster.start()

    async def scheduler_back() -> bool:
        await checked_source(jupyter, source_id)
        return await alert_of(jupyter, source_id, "scheduler-back") is not None

    assert await eventually(scheduler_back, 120), await alerts(jupyter)

    # The runs are in the store on disk, kept for the next server.
    on_disk = HistoryStore.open(sources_file.with_name("history.db"))
    assert [r.tasks >= 1000 for r in on_disk.runs() if r.source == source_id][:1] == [True]


async def test_a_source_removed_while_its_scheduler_did_not_answer_leaves_no_stale_problem(
    jupyter: Jupyter, url_cluster: UrlCluster
) -> None:
    code, source = await jupyter.api("POST", "sources", {"url": url_cluster.dashboard})
    assert code == 201, source

    async def recording() -> bool:
        return await run_of(jupyter, source["id"]) is not None

    assert await eventually(recording, 120)
    assert url_cluster.process is not None
    url_cluster.process.send_signal(signal.SIGSTOP)  # the scheduler stops answering, still there
    try:

        async def retrying() -> bool:
            run = await run_of(jupyter, source["id"])
            return run is not None and "Retrying" in run.get("problem", "")

        assert await eventually(retrying, 60), await run_of(jupyter, source["id"])
        code, _ = await jupyter.api("DELETE", f"sources/{source['id']}")
        assert code == 204

        async def ended() -> bool:
            run = await run_of(jupyter, source["id"])
            return run is not None and not run["live"]

        assert await eventually(ended, 60)
        # Stopped on purpose: the run is kept, with nothing said about retrying a source that is gone.
        run = await run_of(jupyter, source["id"])
        assert run is not None and "problem" not in run, run
    finally:
        url_cluster.process.send_signal(signal.SIGCONT)


class TestASchedulerOutsideTheAllowlist:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, object]:
        return {"allowed_targets": ["127.0.0.1"]}

    async def test_is_not_connected_to_and_the_source_says_why(
        self, jupyter: Jupyter, jp_serverapp: Any
    ) -> None:
        # Its dashboard on an allowed host, its scheduler on another loopback address the
        # allowlist leaves out: the plots work, the history does not connect.
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            host="127.0.0.2",
            dashboard_address="127.0.0.1:0",
        )
        try:
            port = cluster.scheduler.http_server.port
            code, source = await jupyter.api("POST", "sources", {"url": f"http://127.0.0.1:{port}/status"})
            assert code == 201, source

            async def said() -> bool:
                return bool((await checked_source(jupyter, source["id"]))["unrecorded"])

            assert await eventually(said, 60)
            why = (await checked_source(jupyter, source["id"]))["unrecorded"]
            assert "127.0.0.2:" in why and "allowed_targets" in why, why
            (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
            assert source["id"] not in app._recordable_schedulers()
            # A round of the history's sync, as it runs every 2 s: nothing asked the scheduler for
            # its task stream (what the recorder does first).
            await app.history_service._sync()
            assert "task-stream" not in cluster.scheduler.plugins
            code, history = await jupyter.api("GET", "history")
            assert not [r for r in history["runs"] if r["source"] == source["id"]]
        finally:
            cluster.close()
