"""Two Jupyter servers of one user share the history file in Jupyter's data directory (a second
``jupyter lab``, the demo started twice): the first keeps recording, and the second says why it
records nothing, until the first stops."""

from __future__ import annotations

import operator
import signal
from pathlib import Path
from typing import Any

import pytest
from _server_process import Server
from distributed import Client
from test_history_restart import until

pytestmark = pytest.mark.slow  # real servers and a cluster


def listing(server: Server) -> dict[str, Any]:
    code, body = server.call("GET", "dashdock/api/history")
    assert code == 200, body
    return body  # type: ignore[no-any-return]


def live_run(server: Server, source: str) -> dict[str, Any] | None:
    return next((r for r in listing(server)["runs"] if r["source"] == source and r["end"] is None), None)


def test_a_second_server_on_the_same_history_file_leaves_the_first_ones_recording_alone(
    tmp_path: Path,
) -> None:
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = Server(tmp_path / "first")
    second: Server | None = None
    try:
        first.wait_ready()
        code, cluster = first.call("POST", "dashdock/api/clusters", {"workers": 1})
        assert code == 201, cluster

        def running() -> dict[str, Any] | None:
            _, body = first.call("GET", "dashdock/api/clusters")
            found = next(c for c in body["clusters"] if c["id"] == cluster["id"])
            return found if found["status"] == "running" else None

        ready = until(running)
        source = ready["source"]
        run = until(lambda: live_run(first, source))

        shared = tmp_path / "first" / "data" / "dashdock" / "history.db"
        assert shared.exists()
        second = Server(tmp_path / "second", args=(f"--DashdockApp.history_file={shared}",))
        second.wait_ready()
        # The second reads the first's recording and says why it records nothing; its listing
        # comes once its store is open (after what it did at its start).
        problem = listing(second)["problem"]
        assert problem and problem.startswith("Another Jupyter server (process "), problem
        assert "records into" in problem and "c.DashdockApp.history_file" in problem, problem
        # The first's run was not ended by the second's start, and goes on recording.
        assert live_run(first, source) == live_run(second, source) is not None
        with Client(ready["scheduler"], timeout=30) as client:
            client.gather(client.map(operator.neg, range(50), pure=False))
        until(lambda: (live_run(first, source) or {}).get("tasks", 0) >= run["tasks"] + 50)
        assert (live_run(first, source) or {})["id"] == run["id"]

        # The second's Record switch says why it cannot, and leaves the recording as it was.
        code, body = second.call("PUT", f"dashdock/api/history/{source}/recording", {"enabled": False})
        assert code == 409, body
        assert "Another Jupyter server" in body["message"], body
        assert live_run(first, source) is not None

        # Once the first stops (ending its runs as it goes), the second records.
        first.proc.send_signal(signal.SIGTERM)
        first.proc.wait(60)
        until(lambda: listing(second)["problem"] is None, seconds=60)
        assert all(r["end"] is not None for r in listing(second)["runs"])
    finally:
        for server in (first, second):
            if server is not None:
                server.close()
