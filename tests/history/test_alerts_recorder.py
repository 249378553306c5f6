"""Alerts the recorder process writes about a real scheduler that goes away and comes back on its
address, and why Dask says a worker left (read from the scheduler's own event shapes)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _ports import free_port
from test_history_recorder import Lines, _end, _run, _start

from dashdock.alerts.detection import AlertLimits, AlertWatch, departure
from dashdock.history.model import Alert, TaskRecord
from dashdock.history.store import HistoryStore
from dashdock.watcher.limits import Limits

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

SCHEDULER = r"""
import asyncio, json, sys
from distributed import Scheduler

async def main(port):
    async with Scheduler(host="127.0.0.1", port=port, dashboard_address=None) as scheduler:
        print(json.dumps({"address": scheduler.address}), flush=True)
        await asyncio.Event().wait()

asyncio.run(main(int(sys.argv[1])))
"""


class SchedulerProcess:
    """A scheduler alone in a process, on a port that outlives it (so it can come back there)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.lines: Lines | None = None

    def start(self) -> str:
        self.lines = Lines(_start(["-c", SCHEDULER, str(self.port)]))
        return str(self.lines.next(timeout=120)["address"])

    def kill(self) -> None:
        if self.lines is not None:
            _end(self.lines.proc)


@pytest.fixture
def scheduler() -> Iterator[SchedulerProcess]:
    process = SchedulerProcess(free_port())
    yield process
    process.kill()


def _alerts_until(store_path: Path, kinds: set[str], timeout: float = 60) -> list[Alert]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = HistoryStore.open(store_path).alerts()
        if kinds <= {a.kind for a in found}:
            return found
        time.sleep(0.3)
    raise AssertionError(f"no {kinds} alerts; the store has {HistoryStore.open(store_path).alerts()}")


def _recording(store_path: Path, address: str, gone_after: float) -> Lines:
    """A recorder process recording the scheduler at ``address``."""
    recording = Lines(
        _start(
            [
                "-m",
                "dashdock.watcher",
                str(store_path),
                "--tick",
                "0.2",
                "--gone-after",
                str(gone_after),
            ]
        )
    )
    recording.send({"op": "record", "run": _run(address)})
    recording.next(event="recording")
    return recording


def test_a_scheduler_lost_and_back_on_its_address_is_two_alerts(
    scheduler: SchedulerProcess, tmp_path: Path
) -> None:
    store_path = tmp_path / "history.db"
    address = scheduler.start()
    recording = _recording(store_path, address, gone_after=120)
    try:
        scheduler.kill()
        (lost,) = _alerts_until(store_path, {"scheduler-lost"})
        assert lost.title == "The scheduler stopped answering" and lost.source == "feedfeedfeed"
        assert address.split("//")[1] in str(lost.detail["error"])

        assert scheduler.start() == address
        found = _alerts_until(store_path, {"scheduler-lost", "scheduler-back"})
        back = next(a for a in found if a.kind == "scheduler-back")
        assert back.time > lost.time and back.title == "The scheduler answers again"
        assert len(found) == 2  # one of each: nothing repeated while it was away
    finally:
        _end(recording.proc)


def test_a_scheduler_back_after_its_run_ended_is_back_in_the_next_run(
    scheduler: SchedulerProcess, tmp_path: Path
) -> None:
    store_path = tmp_path / "history.db"
    address = scheduler.start()
    recording = _recording(store_path, address, gone_after=AlertLimits.lost_after + 4)
    try:
        scheduler.kill()
        recording.next(event="ended", run_id="0123456789ab", timeout=60)
        _alerts_until(store_path, {"scheduler-lost"})
        scheduler.start()
        # The server records the source again as a new run; its first answer is the news.
        recording.send({"op": "record", "run": _run(address, run_id="0123456789ac")})
        recording.next(event="recording", run_id="0123456789ac")
        found = _alerts_until(store_path, {"scheduler-back"})
        assert [a.kind for a in found] == ["scheduler-back", "scheduler-lost"]
    finally:
        _end(recording.proc)


def test_a_scheduler_that_answers_late_for_a_moment_is_not_said_to_fail(
    scheduler: SchedulerProcess, tmp_path: Path
) -> None:
    """A busy scheduler misses a call's timeout while its own work holds its event loop (a large
    graph arriving). The recorder says it has a problem only once that lasts ``busy_grace``: a
    moment's stall ends with the scheduler answering again and nothing said."""
    address = scheduler.start()
    recording = _recording(tmp_path / "history.db", address, gone_after=120)
    try:
        recording.next(event="answering", run_id="0123456789ab")  # its first answer
        assert scheduler.lines is not None
        stalled = scheduler.lines.proc
        stalled.send_signal(signal.SIGSTOP)  # holds its connections and answers nothing
        # The stall itself: longer than one call may take, shorter than the grace.
        time.sleep(Limits.call_timeout + 2)
        assert Limits.call_timeout + 2 < Limits.busy_grace
        stalled.send_signal(signal.SIGCONT)
        recording.next(event="answering", run_id="0123456789ab")  # answers again after failing
        assert not [event for event in recording.seen if event["event"] == "error"], recording.seen
    finally:
        _end(recording.proc)


def test_the_computation_threshold_is_a_setting_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    recording = Lines(_start(["-m", "dashdock.watcher", str(tmp_path / "history.db")]))
    try:
        recording.send({"op": "settings", "computation_seconds": -1})
        error = recording.next(event="error")
        assert "computation_seconds" in error["message"]
        recording.send({"op": "settings", "computation_seconds": 2})
        recording.send({"op": "settings", "computation_seconds": "soon"})
        assert "computation_seconds" in recording.next(event="error")["message"]
    finally:
        _end(recording.proc)


# The shapes of ``get_events`` replies, as Dask's scheduler logs them (time, message).
REMOVED_KILLED = (
    (1.0, {"action": "add-worker"}),
    (2.0, {"action": "remove-worker", "expected": False, "stimulus_id": "handle-worker-cleanup-1732.5"}),
)
REMOVED_ON_PURPOSE = (
    (2.0, {"action": "remove-worker", "expected": True, "stimulus_id": "retire-workers-1"}),
)
REMOVED_SILENT = ((2.0, {"action": "remove-worker", "expected": False, "stimulus_id": "check-worker-ttl-9"}),)
MEMORY_RESTART = ((2.0, {"worker": "tcp://127.0.0.1:4001", "pid": 77, "rss": 3 * 2**30}),)
# What a worker's topic holds after ``client.restart()`` (logged so by this Dask, 2026.8).
CLIENT_RESTART = (
    (1.0, {"action": "add-worker"}),
    (2.0, {"action": "closing-worker", "reason": "client-restart-1796085225.2871034"}),
    (2.0, {"action": "worker-status-change", "prev-status": "running", "status": "closing"}),
    (
        2.0,
        {"action": "remove-worker", "expected": False, "stimulus_id": "handle-worker-cleanup-1796085225.29"},
    ),
)


@pytest.mark.parametrize(
    "events, memory, expected, reason",
    [
        (REMOVED_KILLED, (), False, "killed or crashed"),
        (REMOVED_ON_PURPOSE, (), True, "on purpose"),
        (REMOVED_SILENT, (), False, "heartbeats"),
        (REMOVED_KILLED, MEMORY_RESTART, False, "memory limit (3.0 GiB)"),
        (CLIENT_RESTART, (), True, "a client restarted it"),
        ((), (), False, ""),
        ("not events", {"not": "events"}, False, ""),
    ],
)
def test_why_a_worker_left_is_read_from_dasks_events(
    events: object, memory: object, expected: bool, reason: str
) -> None:
    gone = departure("tcp://127.0.0.1:4001", events, memory)
    assert gone.expected is expected
    assert reason in gone.reason if reason else gone.reason == ""


def _task(key: str, start: float, stop: float) -> TaskRecord:
    return TaskRecord(key, "nap", "tcp://127.0.0.1:1", 1, start, stop, "OK")


def test_a_computation_counts_the_tasks_that_finish_between_the_stream_read_and_the_idle_check() -> None:
    # Each tick reads the task stream, then whether anything waits or runs. The last task can
    # finish between the two reads: the scheduler is idle, and that task comes with the next read.
    watch = AlertWatch("source", AlertLimits(computation_seconds=2))
    first = [_task(f"nap-{i}", 100.0, 101.0 + i * 0.5) for i in range(9)]
    watch.tasks([], 100.5)
    watch.busy(True, 100.5)
    watch.tasks(first, 105.0)
    watch.busy(False, 105.0, first)
    assert watch.take() == []  # not done yet: a task may still be on its way
    last = [_task("nap-9", 101.0, 105.0)]
    watch.tasks(last, 105.5)
    watch.busy(False, 105.5, last)
    (done,) = watch.take()
    assert done.kind == "computation-done"
    assert done.detail["tasks"] == 10 and done.detail["end"] == 105.0
    assert done.title == "A computation finished after 5.0 s: 10 tasks"


def test_idle_for_one_tick_between_two_submissions_is_one_computation() -> None:
    watch = AlertWatch("source", AlertLimits(computation_seconds=2))
    watch.busy(True, 100.0)
    watch.tasks([_task("a", 100.0, 101.0)], 101.0)
    watch.busy(False, 101.0)
    watch.tasks([_task("b", 101.2, 103.0)], 101.5)
    watch.busy(True, 101.5)
    watch.busy(False, 103.5)
    watch.busy(False, 104.0)
    (done,) = watch.take()
    assert done.detail["tasks"] == 2 and done.detail["start"] == 100.0
