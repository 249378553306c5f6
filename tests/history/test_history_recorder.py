"""The recorder process records real schedulers: every task once, errors, gaps, schedulers going away.

Each test starts ``python -m dashdock.watcher`` and a LocalCluster in a process of its own
(driven over its stdin), gives the recorder commands as the server does, and reads the store.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashdock.history.model import Run
from dashdock.history.store import HistoryStore
from dashdock.watcher.scheduler import SchedulerComm, SchedulerError

# A cluster in its own process, as a user's would be; commands on stdin, answers on stdout.
CLUSTER = r"""
import json, sys, time
import dask
from distributed import Client, LocalCluster, wait

def inc(x):
    return x + 1

def boom(x):
    raise ValueError(f"no good: {x}")

if __name__ == "__main__":
    dask.config.set(json.loads(sys.argv[1]))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                      host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
        print(json.dumps({"address": cluster.scheduler_address}), flush=True)
        for line in sys.stdin:
            command = json.loads(line)
            if command["op"] == "burst":
                futures = client.map(inc, range(command["start"], command["start"] + command["n"]))
                client.gather(futures)
                keys = [f.key for f in futures]
            elif command["op"] == "fail":
                futures = [client.submit(boom, command["x"])]
                wait(futures)
                keys = [futures[0].key]
            else:
                break
            print(json.dumps({"keys": keys}), flush=True)
            del futures
"""


class Lines:
    """A process's stdout, one JSON object per line, read in a thread so tests can wait with a limit."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.seen: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip().startswith("{"):
                self._queue.put(json.loads(line))
        self._queue.put(None)

    def send(self, command: dict[str, Any] | str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((command if isinstance(command, str) else json.dumps(command)) + "\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 60.0, **match: object) -> dict[str, Any]:
        """The next line whose fields equal ``match``; earlier ones are kept in ``seen``."""
        deadline = time.monotonic() + timeout
        while True:
            item = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            if item is None:
                raise AssertionError(f"the process ended; it said {self.seen}")
            self.seen.append(item)
            if all(item.get(k) == v for k, v in match.items()):
                return item


def _start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _end(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)


@pytest.fixture
def cluster_config() -> dict[str, object]:
    return {}


class Cluster(Lines):
    """The cluster process; ``address`` is its scheduler's."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        super().__init__(proc)
        self.address: str = self.next(timeout=120)["address"]


@pytest.fixture
def cluster(cluster_config: dict[str, object]) -> Iterator[Cluster]:
    proc = _start(["-c", CLUSTER, json.dumps(cluster_config)])
    yield Cluster(proc)
    _end(proc)


@pytest.fixture
def tick() -> float:
    return 0.2


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite"


@pytest.fixture
def recording(store_path: Path, tick: float) -> Iterator[Lines]:
    proc = _start(["-m", "dashdock.watcher", str(store_path), "--tick", str(tick), "--gone-after", "2"])
    yield Lines(proc)
    _end(proc)


def _run(address: str, run_id: str = "0123456789ab") -> dict[str, object]:
    return Run(
        id=run_id, source="feedfeedfeed", name="Cluster 1", scheduler=address, start=time.time()
    ).to_store_json()


def _cluster_do(cluster: Cluster, **command: object) -> list[str]:
    cluster.send(command)
    return list(cluster.next(timeout=120)["keys"])


def test_bursts_are_recorded_each_task_once_with_errors(
    cluster: Cluster, recording: Lines, store_path: Path
) -> None:
    recording.send({"op": "record", "run": _run(cluster.address)})
    recording.next(event="recording", run_id="0123456789ab")
    ran: list[str] = []
    for burst in range(3):
        ran += _cluster_do(cluster, op="burst", start=burst * 200, n=200)
        time.sleep(0.5)
    failed = _cluster_do(cluster, op="fail", x=7)
    recording.send({"op": "stop", "run_id": "0123456789ab"})
    ended = recording.next(event="ended", run_id="0123456789ab")
    assert ended["reason"]

    store = HistoryStore.open(store_path)
    tasks = list(store.tasks("0123456789ab"))
    counts = Counter(t.key for t in tasks)
    assert set(counts) == set(ran) | set(failed)
    assert max(counts.values()) == 1
    for task in tasks:
        assert task.worker.startswith("tcp://127.0.0.1:")
        assert task.thread is not None
        assert task.stop > task.start
    ok = [t for t in tasks if t.key in set(ran)]
    assert {t.group for t in ok} == {"inc"} and {t.status for t in ok} == {"OK"}
    (erred,) = [t for t in tasks if t.key == failed[0]]
    assert erred.status == "error" and erred.group == "boom"
    assert erred.exception is not None and "no good: 7" in erred.exception
    assert not store.gaps("0123456789ab")
    kinds = Counter(e.kind for e in store.events("0123456789ab"))
    assert kinds["exception"] == 1 and kinds["worker-joined"] == 2
    (exception,) = store.events("0123456789ab", kind="exception")
    assert exception.detail["key"] == failed[0] and "in boom" in str(exception.detail["traceback"])
    (run,) = store.runs()
    assert run.end is not None and run.tasks == 601 and run.gaps == 0
    samples = store.worker_samples("0123456789ab")
    assert {s.worker for s in samples} == {t.worker for t in tasks}
    assert all(s.unmanaged > 0 for s in samples)
    assert "inc" in {row.group for row in store.group_progress("0123456789ab")}
    assert not [e for e in recording.seen if e["event"] in ("gap", "error")]


TINY_STREAM = {
    "distributed.scheduler.dashboard.tasks.task-stream-length": 10,
    "distributed.scheduler.dashboard.status.task-stream-length": 10,
}


# One read after everything ran (a long tick), and reads while bursts run (overflows between reads).
@pytest.mark.parametrize(("cluster_config", "tick"), [(TINY_STREAM, 30.0), (TINY_STREAM, 0.3)])
def test_an_overflowing_task_stream_is_a_gap_never_a_silent_loss(
    cluster: Cluster, recording: Lines, store_path: Path
) -> None:
    recording.send({"op": "record", "run": _run(cluster.address)})
    recording.next(event="recording")
    ran: list[str] = []
    for burst in range(3):
        ran += _cluster_do(cluster, op="burst", start=burst * 300, n=300)
        time.sleep(0.4)
    recording.send({"op": "stop", "run_id": "0123456789ab"})
    recording.next(event="ended")

    store = HistoryStore.open(store_path)
    recorded = [t.key for t in store.tasks("0123456789ab")]
    missed = sum(g.missed for g in store.gaps("0123456789ab"))
    assert set(recorded) <= set(ran) and len(set(recorded)) == len(recorded)
    assert len(recorded) + missed == len(ran)
    assert missed > 0
    assert sum(e["missed"] for e in recording.seen if e["event"] == "gap") == missed
    print(f"tasks run {len(ran)}, recorded {len(recorded)}, in gaps {missed}")


def test_a_scheduler_that_goes_away_ends_its_run(
    cluster: Cluster, recording: Lines, store_path: Path
) -> None:
    recording.send({"op": "record", "run": _run(cluster.address)})
    recording.next(event="recording")
    _end(cluster.proc)
    error = recording.next(event="error", run_id="0123456789ab")
    assert cluster.address in error["message"]
    ended = recording.next(event="ended", run_id="0123456789ab")
    assert "stopped answering" in ended["reason"]
    (run,) = HistoryStore.open(store_path).runs()
    assert run.end is not None


def test_bad_commands_are_reported_and_the_end_of_input_ends_every_run(
    cluster: Cluster, recording: Lines, store_path: Path
) -> None:
    recording.send("this is not json")
    assert recording.next(event="error")["message"] == "A command that is not JSON was ignored."
    recording.send('{"op": "' + "x" * (2 << 20) + '"}')
    assert "longer than" in recording.next(event="error")["message"]
    recording.send({"op": "launch"})
    assert "Unknown command" in recording.next(event="error")["message"]
    recording.send({"op": "record", "run": {"id": 1}})
    assert "without a valid run" in recording.next(event="error")["message"]
    recording.send({"op": "record", "run": _run("inproc://10.1.2.3/1/2", "aaaaaaaaaaaa")})
    assert "tcp:// only" in recording.next(event="error", run_id="aaaaaaaaaaaa")["message"]
    recording.send({"op": "stop", "run_id": "nonesuch"})
    recording.next(event="error", run_id="nonesuch")

    recording.send({"op": "record", "run": _run(cluster.address)})
    recording.next(event="recording", run_id="0123456789ab")
    ran = _cluster_do(cluster, op="burst", start=0, n=20)
    assert recording.proc.stdin is not None
    recording.proc.stdin.close()  # the server died
    ended = recording.next(event="ended", run_id="0123456789ab")
    assert ended["reason"] == "The Jupyter server stopped."
    assert recording.proc.wait(30) == 0
    store = HistoryStore.open(store_path)
    (run,) = store.runs()
    assert run.end is not None
    assert sorted(t.key for t in store.tasks(run.id)) == sorted(ran)


def test_pickled_replies_are_never_unpickled(tmp_path: Path) -> None:
    """A scheduler at a shared address may be anyone's: what it marks as pickled stays inert."""
    from distributed.comm import listen
    from distributed.protocol.serialize import Serialize, ToPickle

    marker = tmp_path / "executed"

    class Payload:
        def __reduce__(self) -> tuple[object, ...]:
            return (marker.write_text, ("pwned",))

    async def scenario() -> object:
        async def handle(comm: Any) -> None:
            await comm.read()
            await comm.write({"pickled": ToPickle(Payload()), "serialized": Serialize(Payload()), "n": 3})
            await comm.close()

        listener = listen("tcp://127.0.0.1:0", handle)
        await listener.start()
        try:
            comm = SchedulerComm(listener.contact_address, timeout=10)
            reply = await comm.call("identity")
            await comm.close()
            return reply
        finally:
            listener.stop()

    reply = asyncio.run(scenario())
    # Dask's markers stay plain data (a frame number); the frames behind them are never read.
    assert reply == {"pickled": {"__Pickled__": 1}, "serialized": {"__Serialized__": 2}, "n": 3}
    assert not marker.exists()


def test_a_peer_announcing_a_huge_message_is_refused() -> None:
    async def scenario() -> str:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write((2**40).to_bytes(8, "little"))  # "a terabyte follows"
            await writer.drain()
            await reader.read()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            with pytest.raises(SchedulerError) as refused:
                await SchedulerComm(f"tcp://127.0.0.1:{port}", timeout=10).call("identity")
            return str(refused.value)
        finally:
            server.close()

    assert "1099511627776 bytes" in asyncio.run(scenario())
