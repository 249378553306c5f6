"""Servers sharing one sources file lose nothing of each other's, even when killed in the middle
of adds. The servers here run in processes of their own, so that they can be killed (SIGKILL)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _dashboards import FakeDashboard
from _sources import ServerProcess, restarted
from _support import Jupyter, RecordingUpstream, WarningsLog


@pytest.fixture(scope="module")
def many() -> Iterator[FakeDashboard]:
    dashboards = FakeDashboard()
    yield dashboards
    dashboards.close()


async def test_two_servers_on_one_file_keep_each_others_adds(
    jupyter: Jupyter,
    sources_file: Path,
    recorder: RecordingUpstream,
    many: FakeDashboard,
    bokeh_cache: Path,
    tmp_path: Path,
) -> None:
    other = ServerProcess(sources_file, bokeh_cache, tmp_path / "other")
    try:
        await other.ready()
        first = await jupyter.add_source(recorder.url)
        code, second = await other.api("POST", "sources", {"url": f"{recorder.url}/sub/dash"})
        assert code == 201
        third = await jupyter.add_source(many.prefixed(1))
        code, fourth = await other.api("POST", "sources", {"url": many.prefixed(2)})
        assert code == 201
    finally:
        other.stop()

    async with restarted(sources_file) as registry:
        assert {source.id for source in registry.list()} == {
            source["id"] for source in (first, second, third, fourth)
        }


ACKNOWLEDGED_BEFORE_THE_KILL = 60
ADDERS_PER_SERVER = 4


async def test_servers_killed_during_concurrent_adds_lose_no_acknowledged_source(
    many: FakeDashboard, bokeh_cache: Path, tmp_path: Path
) -> None:
    sources_file = tmp_path / "shared" / "sources.db"
    servers = [ServerProcess(sources_file, bokeh_cache, tmp_path / f"server-{n}") for n in range(2)]
    acknowledged: list[str] = []
    warned: list[str] = []
    enough = asyncio.Event()
    numbers = itertools.count()

    async def add_until_killed(server: ServerProcess) -> None:
        while True:
            try:
                code, body = await server.api("POST", "sources", {"url": many.prefixed(next(numbers))})
            except OSError:
                return  # the server is gone; what it had not answered was never acknowledged
            assert code == 201, body
            if "warning" in body:
                warned.append(body["warning"])
            else:
                acknowledged.append(body["id"])
            if len(acknowledged) >= ACKNOWLEDGED_BEFORE_THE_KILL:
                enough.set()

    try:
        await asyncio.gather(*(server.ready() for server in servers))
        adders = [
            asyncio.ensure_future(add_until_killed(server))
            for server in servers
            for _ in range(ADDERS_PER_SERVER)
        ]
        await asyncio.wait_for(enough.wait(), 120)
        # Adds are in flight on both servers: some in the middle of being written.
        for server in servers:
            server.kill()
        await asyncio.gather(*adders)
    finally:
        for server in servers:
            server.stop()

    assert warned == []
    log = logging.getLogger("test-after-kill")
    warnings = WarningsLog()
    log.addHandler(warnings)
    try:
        async with restarted(sources_file, log=log) as registry:
            saved = {source.id for source in registry.list()}
    finally:
        log.removeHandler(warnings)
    assert warnings.messages == []  # loadable: nothing moved aside, nothing disabled
    assert set(acknowledged) <= saved


# Adds through the store alone, back to back, so that most of the time goes to writing: a kill then
# mostly lands inside a transaction, which a server spending its time on HTTP rarely shows.
WRITER = """
import json, sys
from pathlib import Path
from dashdock.sources.model import saved_id_for
from dashdock.sources.store import SourcesStore

store = SourcesStore(Path(sys.argv[1]), saved_id_for)
store.open()
for n in range(10**9):
    entry = {"url": f"http://127.0.0.1:8787/{sys.argv[2]}{n}", "name": f"{sys.argv[2]}{n}"}
    store.put(saved_id_for(entry), json.dumps(entry))
    print(saved_id_for(entry), flush=True)
"""


async def test_writers_killed_in_the_middle_of_a_write_lose_no_acknowledged_source(tmp_path: Path) -> None:
    sources_file = tmp_path / "shared" / "sources.db"
    writers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", WRITER, str(sources_file), name, stdout=asyncio.subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    acknowledged: list[str] = []

    async def read_acknowledgements(writer: asyncio.subprocess.Process) -> None:
        assert writer.stdout is not None
        while line := await writer.stdout.readline():
            acknowledged.append(line.decode().strip())

    readers = [asyncio.ensure_future(read_acknowledgements(writer)) for writer in writers]
    try:
        while len(acknowledged) < 2 * ACKNOWLEDGED_BEFORE_THE_KILL:
            assert all(writer.returncode is None for writer in writers), "a writer exited"
            await asyncio.sleep(0.01)
    finally:
        for writer in writers:
            if writer.returncode is None:
                writer.send_signal(signal.SIGKILL)
            await writer.wait()
    await asyncio.gather(*readers)

    log = logging.getLogger("test-after-kill-writers")
    warnings = WarningsLog()
    log.addHandler(warnings)
    try:
        async with restarted(sources_file, log=log) as registry:
            saved = {source.id for source in registry.list()}
    finally:
        log.removeHandler(warnings)
    assert warnings.messages == []
    assert set(acknowledged) <= saved
