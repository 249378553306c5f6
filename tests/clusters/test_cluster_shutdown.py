"""When the Jupyter server stops, every managed cluster and its worker processes are gone.

A real ``python -m jupyter server`` in a subprocess (token auth, isolated Jupyter dirs, a free port on
127.0.0.1), two clusters started through the API, each a host process with a worker process under it.
The cluster hosts run in sessions of their own (so a Ctrl-C at the terminal does not reach them), so
their processes are found by walking parent pids from the server, not by process group.
"""

from __future__ import annotations

import os
import pty
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from _server_process import Server

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

GONE_WITHIN = 30.0


@dataclass(frozen=True)
class Proc:
    """A process as first seen; its start time tells it from a later process given the same pid."""

    pid: int
    started: int
    command: str


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start time, state) from /proc/PID/stat, or None if there is no such process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[19]), fields[0]


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def descendants(root: int) -> list[Proc]:
    """Every process under ``root``, by parent pid (psutil when installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        found = []
        for child in psutil.Process(root).children(recursive=True):
            try:
                stat = _stat(child.pid)
                found.append(Proc(child.pid, stat[1] if stat else 0, " ".join(child.cmdline())))
            except psutil.NoSuchProcess:
                continue
        return found
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            children.setdefault(stat[0], []).append(int(entry.name))
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if (stat := _stat(pid)) is not None:
            found.append(Proc(pid, stat[1], _command(pid)))
            todo += children.get(pid, [])
    return found


def alive(processes: list[Proc]) -> list[Proc]:
    """Those still running (a zombie has ended: it only waits for its parent to read its status)."""
    running = []
    for proc in processes:
        stat = _stat(proc.pid)
        if stat is not None and stat[1] == proc.started and stat[2] not in ("Z", "X"):
            running.append(proc)
    return running


def sigterm(server: Server) -> None:
    server.proc.send_signal(signal.SIGTERM)


def ctrl_c_twice(server: Server) -> None:
    """What a terminal does on Ctrl-C, Ctrl-C: SIGINT to the job's process group, twice."""
    os.killpg(server.proc.pid, signal.SIGINT)
    time.sleep(0.5)
    os.killpg(server.proc.pid, signal.SIGINT)


def sigkill(server: Server) -> None:
    server.proc.send_signal(signal.SIGKILL)


@pytest.fixture
def terminal() -> Iterator[int]:
    """A pseudo-terminal for the server's stdin: Jupyter only asks "Shut down?" on a Ctrl-C at a tty."""
    leader, follower = pty.openpty()
    yield follower
    os.close(follower)
    os.close(leader)


@pytest.mark.parametrize(
    "stop",
    [sigterm, ctrl_c_twice, sigkill],
    ids=["sigterm", "ctrl-c-twice-at-a-terminal", "server-killed"],
)
def test_when_the_server_stops_every_managed_cluster_and_its_workers_are_gone(
    tmp_path: Path, terminal: int, stop: Callable[[Server], None]
) -> None:
    server = Server(tmp_path, stdin=terminal)
    processes: list[Proc] = []
    try:
        server.wait_ready()
        # Two users (or two tabs) start a cluster each, at the same time.
        with ThreadPoolExecutor(2) as pool:
            started = list(
                pool.map(
                    lambda name: server.call("POST", "dashdock/api/clusters", {"name": name, "workers": 1}),
                    ("First", "Second"),
                )
            )
        for code, cluster in started:
            assert code == 201, (cluster, server.log())
            assert cluster["workers"] == 1
        code, body = server.call("GET", "dashdock/api/clusters")
        assert code == 200
        assert sorted(c["name"] for c in body["clusters"]) == ["First", "Second"]

        processes = descendants(server.proc.pid)
        hosts = [proc for proc in processes if "dashdock.clusters.host" in proc.command]
        assert len(hosts) == 2, processes
        # Each host runs a LocalCluster with processes: at least one worker process under each.
        assert len(processes) >= 4, processes

        stop(server)
        deadline = time.monotonic() + GONE_WITHIN
        while alive(processes) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert alive(processes) == [], f"still running: {alive(processes)}\n{server.log()}"
        assert server.proc.wait(GONE_WITHIN) is not None
    finally:
        for proc in alive(processes):  # never leave a worker behind, even when the test fails
            os.kill(proc.pid, signal.SIGKILL)
        server.close()
