"""Hostile schedulers cannot inflate the history recorder: msgpack bombs are refused, the recorder
stays small (or dies alone under its memory cap), the server answers, the History API says what
happened per source, and a real scheduler recorded at the same time goes on being recorded.

Each fake scheduler is a plain asyncio TCP server in a process of its own speaking Dask's framing
(total length, frame count and lengths, frames; scheduler.py's ``_read``).
"""

from __future__ import annotations

import asyncio
import json
import operator
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client, LocalCluster

MiB = 2**20
CAP = 512 * MiB  # the recorder's memory cap in these tests
SMALL = 300 * MiB  # what the recorder may reach when it refuses a bomb without decoding it

# The fake schedulers. Each mode names what it sends: as the handshake, or as every reply after a
# proper handshake (``tsbomb``: a proper index, then the bomb as the task stream).
FAKE = r"""
import asyncio, json, struct, sys

U64 = struct.Struct("<Q")
CHUNK = 1 << 20

def array_header(n):
    return b"\xdd" + struct.pack(">I", n)

def bomb(kind):
    # (header bytes, body length, byte filling the body): frame = header + fill * length
    if kind == "maps1":
        return array_header(1 << 20), 1 << 20, b"\x80"  # 1 Mi empty maps
    if kind == "maps16":
        return array_header(16 << 20), 16 << 20, b"\x80"
    if kind == "nested16":
        return b"", 16 << 20, b"\x91"  # arrays nested 16 Mi deep
    if kind == "str200":
        return b"\xdb" + struct.pack(">I", 200 << 20), 200 << 20, b"a"
    raise ValueError(kind)

def within_limits():
    # 320 arrays of 200,000 empty maps: every container within the task stream's limits, 61 MiB,
    # 64 million dicts once decoded (gigabytes): only the memory cap stops it.
    inner = array_header(200_000) + b"\x80" * 200_000
    return array_header(320) + inner * 320

def message_head(length):
    return U64.pack(16 + length) + U64.pack(1) + U64.pack(length)

async def send_bomb(writer, kind):
    header, length, fill = bomb(kind)
    writer.write(message_head(len(header) + length) + header)
    block = fill * CHUNK
    left = length
    while left > 0:
        writer.write(block[: min(left, CHUNK)])
        left -= CHUNK
        await writer.drain()

def small(obj):
    import msgpack
    frame = msgpack.packb(obj)
    return message_head(len(frame)) + frame

async def read_message(reader):
    import msgpack
    (head,) = U64.unpack(await reader.readexactly(8))
    return msgpack.unpackb((await reader.readexactly(head))[16:])

def serve(mode):
    async def handle(reader, writer):
        try:
            await read_message(reader)  # their handshake
            if mode.startswith("handshake-"):
                await send_bomb(writer, mode.split("-", 1)[1])
            else:
                writer.write(small({"compression": None, "python": (3, 11, 0), "pickle-protocol": 5}))
            index = 10
            while True:
                request = await read_message(reader)
                if mode == "tsbomb":
                    index += 1
                    writer.write(stream if request.get("op") == "get_task_stream" else small(index))
                    await writer.drain()
                else:
                    await send_bomb(writer, mode.split("-", 1)[1])
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
    return handle

async def main(modes):
    servers = {m: await asyncio.start_server(serve(m), "127.0.0.1", 0) for m in modes}
    print(json.dumps({m: s.sockets[0].getsockname()[1] for m, s in servers.items()}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

stream = message_head(0)  # replaced below when asked for
if __name__ == "__main__":
    modes = sys.argv[1:]
    if "tsbomb" in modes:
        frame = within_limits()
        stream = message_head(len(frame)) + frame
    asyncio.run(main(modes))
"""

FAKE_IDS = {
    "handshake-maps1": "b0b0b0b00001",
    "handshake-nested16": "b0b0b0b00002",
    "reply-maps1": "b0b0b0b00006",
    "reply-maps16": "b0b0b0b00003",
    "reply-str200": "b0b0b0b00004",
    "tsbomb": "b0b0b0b00005",
}
REAL = "c1c1c1c1c1c1"


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    return {"history_recorder_max_memory": CAP}


class Fakes:
    def __init__(self, modes: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FAKE, *modes], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout is not None
        self.ports: dict[str, int] = json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def fakes(request: pytest.FixtureRequest) -> Iterator[Fakes]:
    started = Fakes(request.param)
    yield started
    started.close()


async def eventually(check: Callable[[], Awaitable[Any]], seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := await check():
            return found
        await asyncio.sleep(0.5)
    raise AssertionError("timed out")


def record(jp_serverapp: Any, fakes: Fakes, real: LocalCluster) -> Any:
    """The server records the fake schedulers and the real one, as if dashdock knew them."""
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    service = app.history_service
    wanted = {FAKE_IDS[mode]: f"tcp://127.0.0.1:{port}" for mode, port in fakes.ports.items()}
    wanted[REAL] = real.scheduler_address
    service._schedulers = lambda: dict(wanted)
    return service


def peak(pid: int) -> int:
    """The process's highest resident set size, in bytes (0 when it is gone)."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


async def problem(jupyter: Jupyter, source: str) -> str | None:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    runs = [run for run in body["runs"] if run["source"] == source]
    return runs[-1].get("problem") if runs else None


async def real_tasks(jupyter: Jupyter) -> int:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    return sum(run["tasks"] for run in body["runs"] if run["source"] == REAL and run["live"])


async def check_real_recorded(jupyter: Jupyter, cluster: LocalCluster, n: int) -> None:
    before = await real_tasks(jupyter)

    def compute() -> None:
        with Client(cluster.scheduler_address, timeout=30) as client:
            client.gather(client.map(operator.neg, range(n), pure=False))

    await asyncio.to_thread(compute)
    assert await eventually(lambda: _at_least(jupyter, before + n), 30)


async def _at_least(jupyter: Jupyter, n: int) -> bool:
    return await real_tasks(jupyter) >= n


async def server_answers(jupyter: Jupyter) -> None:
    started = time.monotonic()
    response = await jupyter.fetch("api/status")
    assert response.code == 200
    assert time.monotonic() - started < 5


async def attack(
    jupyter: Jupyter, jp_serverapp: Any, fakes: Fakes, cluster: LocalCluster, words: tuple[str, ...]
) -> tuple[int, dict[str, str]]:
    """Record the fakes beside the real cluster; their problems, once each says one of ``words``,
    and the recorder's peak RSS."""
    service = record(jp_serverapp, fakes, cluster)
    sources = [FAKE_IDS[mode] for mode in fakes.ports]
    await eventually(lambda: _has_real_run(jupyter), 30)
    pid = service._recorder.process.pid

    async def all_said() -> dict[str, str] | None:
        said = {source: await problem(jupyter, source) for source in sources}
        ok = all(text and any(w in text for w in words) for text in said.values())
        return {s: str(t) for s, t in said.items()} if ok else None

    problems = await eventually(all_said, 40)
    await server_answers(jupyter)
    return peak(pid), problems


async def _has_real_run(jupyter: Jupyter) -> bool:
    code, body = await jupyter.api("GET", "history")
    return code == 200 and any(run["source"] == REAL and run["live"] for run in body["runs"])


@pytest.mark.parametrize("fakes", [["handshake-maps1", "handshake-nested16"]], indirect=True)
async def test_handshake_bombs_of_empty_maps_and_deep_nesting_are_refused_unexpanded(
    jupyter: Jupyter, jp_serverapp: Any, fakes: Fakes, dask_cluster: LocalCluster
) -> None:
    high, problems = await attack(jupyter, jp_serverapp, fakes, dask_cluster, ("bytes", "too big", "Dask"))
    print("recorder VmHWM (handshake bombs):", high // MiB, "MiB", problems)
    assert 0 < high < SMALL
    await check_real_recorded(jupyter, dask_cluster, 50)
    assert 0 < peak(record(jp_serverapp, fakes, dask_cluster)._recorder.process.pid) < SMALL


@pytest.mark.parametrize("fakes", [["reply-maps1", "reply-maps16", "reply-str200"]], indirect=True)
async def test_reply_bombs_of_1_and_16_mib_empty_maps_and_a_200_mib_string_are_refused(
    jupyter: Jupyter, jp_serverapp: Any, fakes: Fakes, dask_cluster: LocalCluster
) -> None:
    high, problems = await attack(jupyter, jp_serverapp, fakes, dask_cluster, ("bytes", "too big"))
    print("recorder VmHWM (reply bombs):", high // MiB, "MiB", problems)
    assert 0 < high < SMALL
    assert "bytes" in problems[FAKE_IDS["reply-str200"]]  # refused by its size, never read
    await check_real_recorded(jupyter, dask_cluster, 50)


@pytest.mark.parametrize("fakes", [["tsbomb"]], indirect=True)
async def test_a_task_stream_bomb_within_the_decode_limits_stops_at_the_memory_cap(
    jupyter: Jupyter, jp_serverapp: Any, fakes: Fakes, dask_cluster: LocalCluster
) -> None:
    high, problems = await attack(jupyter, jp_serverapp, fakes, dask_cluster, ("memory", "Memory", "stopped"))
    print("recorder VmHWM (task-stream bomb under the cap):", high // MiB, "MiB", problems)
    assert high <= CAP
    # The real scheduler goes on being recorded (by this recorder, or by the one started again).
    await eventually(lambda: _has_real_run(jupyter), 30)
    await check_real_recorded(jupyter, dask_cluster, 50)
    await server_answers(jupyter)
