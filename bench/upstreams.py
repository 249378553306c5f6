"""Upstream servers for the benchmarks, one per process: ``python bench/upstreams.py MODE PORT``.

Modes:
  echo-ws  ``/ws`` echoes every websocket message (up to 1 GiB); without TCP_NODELAY, like a Bokeh server,
           unless the third argument is ``nodelay``.
  push-ws  ``/ws`` pushes 1 KB binary messages as fast as the peer reads (each send awaits the socket).
  http     ``/big?mb=N`` streams N MB in 64 KB chunks; ``/small`` answers 100 B; ``/stats`` and ``/reset``
           count the TCP connections that served ``/small`` (connection reuse).
  dashboard  a fake Dask dashboard under any path prefix: ``<prefix>/individual-plots.json`` lists one plot,
           ``<prefix>/health`` answers ok; ``/stats`` counts the health requests.
  cluster  a LocalCluster (processes=False, tcp, dashboard on 127.0.0.1:0) that ran a little work; it
           prints its dashboard URL on stdout. PORT is ignored.
"""

from __future__ import annotations

import asyncio
import json
import sys

from tornado import web
from tornado.httpserver import HTTPServer
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, WebSocketHandler

HOST = "127.0.0.1"


class EchoWS(WebSocketHandler):
    max_message_size = 1024**3

    def check_origin(self, origin: str) -> bool:
        return True

    def open(self) -> None:
        if "nodelay" in sys.argv[3:]:
            self.set_nodelay(True)

    async def on_message(self, message: str | bytes) -> None:
        try:
            await self.write_message(message, binary=isinstance(message, bytes))
        except WebSocketClosedError:
            pass


class PushWS(WebSocketHandler):
    payload = b"p" * 1024

    def check_origin(self, origin: str) -> bool:
        return True

    def open(self) -> None:
        self._task = asyncio.ensure_future(self._push())

    async def _push(self) -> None:
        try:
            while True:
                await self.write_message(self.payload, binary=True)
        except WebSocketClosedError:
            pass


class Big(web.RequestHandler):
    async def get(self) -> None:
        chunk = b"x" * 65536
        self.set_header("Content-Type", "application/octet-stream")
        try:
            for _ in range(int(self.get_argument("mb", "200")) * 16):
                self.write(chunk)
                await self.flush()
        except StreamClosedError:
            pass  # the proxy gave up on the response


class Small(web.RequestHandler):
    def get(self) -> None:
        STATS["requests"] += 1
        CONNECTIONS.add(self.request.connection.stream.bench_connection)  # type: ignore[union-attr]
        self.set_header("Content-Type", "text/plain")
        self.finish(b"s" * 100)


class Stats(web.RequestHandler):
    def get(self) -> None:
        self.finish(json.dumps({"small_requests": STATS["requests"], "small_connections": len(CONNECTIONS)}))


class Reset(web.RequestHandler):
    def get(self) -> None:
        STATS["requests"] = 0
        CONNECTIONS.clear()
        self.finish("{}")


class PlotList(web.RequestHandler):
    def get(self, prefix: str) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"Individual Task Stream": "/individual-task-stream"}))


class Health(web.RequestHandler):
    def get(self, prefix: str) -> None:
        STATS["health"] += 1
        self.finish("ok")


class HealthStats(web.RequestHandler):
    def get(self) -> None:
        self.finish(json.dumps({"health_requests": STATS["health"], "connections": STATS["opened"]}))


STATS = {"requests": 0, "opened": 0, "health": 0}
CONNECTIONS: set[int] = set()


class CountingServer(HTTPServer):
    def handle_stream(self, stream, address):  # type: ignore[no-untyped-def]
        STATS["opened"] += 1
        stream.bench_connection = STATS["opened"]
        return super().handle_stream(stream, address)


async def serve(mode: str, port: int) -> None:
    handlers = {
        "echo-ws": [(r"/ws", EchoWS)],
        "push-ws": [(r"/ws", PushWS)],
        "http": [(r"/big", Big), (r"/small", Small), (r"/stats", Stats), (r"/reset", Reset)],
        "dashboard": [
            (r"/stats", HealthStats),
            (r"(.*)/individual-plots\.json", PlotList),
            (r"(.*)/health", Health),
        ],
    }[mode]
    server = CountingServer(web.Application(handlers), max_body_size=1024**3)
    server.listen(port, HOST)
    await asyncio.Event().wait()


def cluster() -> None:
    from distributed import Client, LocalCluster

    options = {"n_workers": 2, "threads_per_worker": 1}
    with (
        LocalCluster(
            host=HOST, dashboard_address=f"{HOST}:0", processes=False, protocol="tcp", **options
        ) as local,
        Client(local) as client,
    ):
        # Some finished tasks, so the task stream has something to draw.
        client.gather(client.map(lambda x: x + 1, range(500)))
        print(local.dashboard_link, flush=True)
        try:
            sys.stdin.read()  # until the parent closes our stdin or stops us
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    if sys.argv[1] == "cluster":
        cluster()
    else:
        try:
            asyncio.run(serve(sys.argv[1], int(sys.argv[2])))
        except KeyboardInterrupt:
            pass
