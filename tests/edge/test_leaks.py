"""A day of panes opening and closing leaves the server as it was: file descriptors, memory, relays.

The Jupyter server under test (pytest-jupyter) and the echo dashboard both run in this process, so
``/proc/self`` sees both ends of every relayed connection.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
import tornado.httpserver
import tornado.testing
import tornado.web
import tornado.websocket
from _support import Jupyter

CYCLES = 1000
WARMUP = 100
CONCURRENCY = 10
# The count is the whole test process's, which also runs the session's cluster and servers: a
# few fds come and go with them. A leak on the relay's path costs one per cycle or per few
# cycles, 50 or more over CYCLES, far above this.
FD_SLACK = 20
RSS_SLACK_KB = 30 * 1024
PANE = "leak-probe"


class _Echo(tornado.websocket.WebSocketHandler):
    def check_origin(self, origin: str) -> bool:
        return True

    def on_message(self, message: str | bytes) -> None:
        self.write_message(message, binary=isinstance(message, bytes))


class _Page(tornado.web.RequestHandler):
    def get(self) -> None:
        self.finish("a small plot page")


class EchoDashboard:
    """A plain tornado websocket echo and a page on 127.0.0.1, in their own thread; records nothing."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="echo-dashboard", daemon=True)
        self.port = 0

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        # No access log: pytest keeps every record in memory, which would read as server growth.
        app = tornado.web.Application([(r"/ws", _Echo), (r"/page", _Page)], log_function=lambda _: None)
        sock, self.port = tornado.testing.bind_unused_port(address="127.0.0.1")
        server = tornado.httpserver.HTTPServer(app)
        server.add_socket(sock)
        self._ready.set()
        self._loop.run_forever()
        server.stop()
        self._loop.run_until_complete(asyncio.wait_for(server.close_all_connections(), 10))
        self._loop.close()

    def start(self) -> EchoDashboard:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture
def quiet_server_log(jp_serverapp: Any) -> Iterator[None]:
    """pytest keeps every log record of a test in memory; the server's per-request debug lines would
    count as server memory, so they are off while cycles run (warnings and errors still show)."""
    logger = jp_serverapp.log
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoDashboard]:
    dashboard = EchoDashboard().start()
    yield dashboard
    dashboard.stop()


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS in /proc/self/status")


async def settled_fds(at_most: int | None = None, seconds: float = 5.0) -> int:
    """The fd count once closes in flight are done: at most ``at_most``, or steady, within a deadline."""
    deadline = time.monotonic() + seconds
    previous = -1
    while True:
        gc.collect()
        count = open_fds()
        done = count <= at_most if at_most is not None else count == previous
        if done or time.monotonic() > deadline:
            return count
        previous = count
        await asyncio.sleep(0.1)


async def run_cycles(cycles: int, one_cycle: Callable[[int], Awaitable[None]]) -> None:
    """``cycles`` runs of ``one_cycle``, ``CONCURRENCY`` at a time."""
    counter = iter(range(cycles))

    async def worker() -> None:
        for number in counter:
            await one_cycle(number)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def relays_of_all_panes(jupyter: Jupyter) -> dict[str, list[Any]]:
    code, body = await jupyter.api("GET", "panes")
    assert code == 200, body
    return {pane["id"]: pane["relays"] for pane in body["panes"]}


async def test_a_thousand_websocket_open_close_cycles_leave_fds_memory_and_relays_flat(
    jupyter: Jupyter, echo: EchoDashboard, quiet_server_log: None
) -> None:
    path = f"dashdock/proxy/{echo.netloc}/ws?dashdock-pane={PANE}"

    async def one_cycle(number: int) -> None:
        connection = await jupyter.websocket(path)
        message = f"tick {number}"
        await connection.write_message(message)
        assert await connection.read_message() == message
        connection.close()
        assert await connection.read_message() is None  # the close handshake is done

    # While a pane's websocket is open, the pane lists its relay: that is what must not pile up.
    probe = await jupyter.websocket(path)
    await probe.write_message("probe")
    assert await probe.read_message() == "probe"
    assert len((await relays_of_all_panes(jupyter))[PANE]) == 1
    probe.close()
    assert await probe.read_message() is None

    await run_cycles(WARMUP, one_cycle)
    fds_before = await settled_fds()
    gc.collect()
    rss_before = rss_kb()

    await run_cycles(CYCLES, one_cycle)

    fds_after = await settled_fds(at_most=fds_before + FD_SLACK)
    assert fds_after <= fds_before + FD_SLACK, f"{fds_before} fds after warm-up, {fds_after} after {CYCLES}"
    gc.collect()
    grown_kb = rss_kb() - rss_before
    assert grown_kb < RSS_SLACK_KB, f"RSS grew by {grown_kb} kB over {CYCLES} cycles"
    relays = await relays_of_all_panes(jupyter)
    assert all(not pane_relays for pane_relays in relays.values()), relays


async def test_a_thousand_proxied_page_loads_leave_fds_flat(
    jupyter: Jupyter, echo: EchoDashboard, quiet_server_log: None
) -> None:
    async def one_cycle(number: int) -> None:
        response = await jupyter.proxied(f"dashdock/proxy/{echo.netloc}/page?n={number}")
        assert response.code == 200
        # After dashdock's page script, which the view puts first in every HTML page.
        assert response.body.endswith(b"></script>a small plot page")

    await run_cycles(WARMUP, one_cycle)
    fds_before = await settled_fds()

    await run_cycles(CYCLES, one_cycle)

    fds_after = await settled_fds(at_most=fds_before + FD_SLACK)
    assert fds_after <= fds_before + FD_SLACK, f"{fds_before} fds after warm-up, {fds_after} after {CYCLES}"
