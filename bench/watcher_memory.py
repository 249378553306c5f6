"""Does the watcher give back what closed drawn pages used? Its RSS over many pane opens and closes.

A real ``LocalCluster`` whose scheduler offers its state (``--preload dashdock.kernel.plot_state``,
live_panes_cost.py's cluster), added to a Jupyter server with dashdock: every drawn plot is a page
of the watcher's plot server. Pages are opened as a pane opens them (the proxy link, the view URL,
the Bokeh websocket, the document pulled) 24 at a time, one of each drawn plot in turn, and closed
together, as someone opening and closing 24 panes; ``OPENS`` in all. The watcher's RSS is read after
a warm-up (every plot's page drawn once: Dask's and Bokeh's code loaded, the mirror read) let go
of, after the last batch, and then every ``SAMPLE_S`` while Bokeh lets go of the closed
sessions (the plot server ends a session 5 s after its last connection closed, checking every
second, and collects what closed pages left 2 s after the last).

``python bench/watcher_memory.py [opens] [--pace S]`` (1,000; about 5 minutes on 2 cores): batches back
to back, or ``S`` seconds apart (someone opening and closing 24 panes every S seconds). Target: the
watcher's RSS back within 5 % of its warm baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
import urllib.request
from typing import Any
from urllib.parse import urljoin

from _common import TOKEN, JupyterServer, heading, table
from live_panes_cost import AUTH, Cluster, add_source, recorder_rss_mib
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from dashdock.live.plots import DRAWN

OPENS = 1000
BATCH = 24  # panes open at once
SETTLE_S = 75.0  # well past session expiry (5 s) and the collection after it (2 s), with room to spare
SAMPLE_S = 15.0
CLOSE_TIMEOUT_S = 30.0
_SESSION_TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"')


async def _open_page(url: str) -> object:
    """A drawn page opened as a pane opens it: its websocket, once the document has come."""
    client = AsyncHTTPClient()
    response = await client.fetch(HTTPRequest(url, headers=AUTH, follow_redirects=False), raise_error=False)
    if response.code in (301, 302, 303, 307):  # the proxy link: on to the sandboxed view URL
        url = urljoin(url, response.headers["Location"])
        response = await client.fetch(url, raise_error=False)
    if response.code != 200:
        raise RuntimeError(f"{url}: HTTP {response.code}")
    token = _SESSION_TOKEN.search(response.body.decode())
    if token is None:
        raise RuntimeError(f"{url}: no Bokeh session token")
    request = HTTPRequest(url.replace("http://", "ws://", 1) + "/ws", headers={"Origin": "null"})
    connection = await websocket_connect(request, subprotocols=["bokeh", token[1]], max_message_size=2**28)
    while (frame := await connection.read_message()) is not None:
        header = frame[:300] if isinstance(frame, str) else ""
        if '"ACK"' in header:
            for part in (json.dumps({"msgid": "1", "msgtype": "PULL-DOC-REQ"}), "{}", "{}"):
                await connection.write_message(part)
        elif '"PULL-DOC-REPLY"' in header:
            return connection
    raise RuntimeError(f"{url}: the websocket closed before the document came")


async def _batch(urls: list[str]) -> None:
    connections = await asyncio.gather(*(_open_page(url) for url in urls))
    await asyncio.gather(*(_close_page(connection) for connection in connections))


async def _close_page(connection: Any) -> None:
    """Closed as a browser closes a pane's websocket: the closing handshake done, so the server
    sees it closed now (a socket left to this process's collector could keep its page alive)."""
    connection.close()
    while await asyncio.wait_for(connection.read_message(), CLOSE_TIMEOUT_S) is not None:
        pass


def _mib(server: JupyterServer) -> float:
    return recorder_rss_mib(server.proc.pid)


def main(opens: int, pace: float) -> None:
    began = time.perf_counter()
    heading(
        f"The watcher's memory over {opens:,} drawn pane opens and closes, {BATCH} at a time, "
        + (f"{pace:g} s apart" if pace else "back to back")
    )
    cluster = Cluster(plain=False)
    try:
        with JupyterServer() as server:
            asyncio.run(server.wait_ready())
            source_id, drawn = add_source(server, cluster.dashboard_link)
            if not drawn:
                raise SystemExit("the state plots were not drawn by dashdock: nothing to measure")
            asked = urllib.request.Request(f"{server.url}/dashdock/api/sources/{source_id}", headers=AUTH)
            with urllib.request.urlopen(asked, timeout=60) as response:
                drawn_plots = json.loads(response.read()).get("drawnPlots", [])
            paths = [path for path in DRAWN if path in drawn_plots]
            urls = [f"{server.url}/dashdock/proxy/{source_id}{path}?token={TOKEN}" for path in paths]
            rows = [["when", "watcher RSS (MiB)", "vs warm baseline"]]

            def sample(when: str, base: float) -> float:
                mib = _mib(server)
                rows.append([when, f"{mib:.1f}", f"{mib / base:.3f}x" if base else "-"])
                return mib

            # Warm-up: every drawn plot's page once (more plots than a batch: the last ones load
            # code and mirror state of their own on first drawing, which no later page adds again).
            for first in range(0, len(urls), BATCH):
                asyncio.run(_batch(urls[first : first + BATCH]))
            time.sleep(SETTLE_S)
            base = sample(f"warm, each of the {len(urls)} pages opened and let go of", 0.0)
            done = 0
            while done < opens:
                count = min(BATCH, opens - done)
                asyncio.run(_batch([urls[(done + i) % len(urls)] for i in range(count)]))
                done += count
                time.sleep(pace)
            sample(f"right after {done:,} opens", base)
            settled = time.monotonic() + SETTLE_S
            while time.monotonic() < settled:
                time.sleep(SAMPLE_S)
                sample(f"{SETTLE_S - (settled - time.monotonic()):.0f} s later", base)
            table(rows)
            print(f"  {len(paths)} drawn plots opened in turn; target: back within 5 % of the warm baseline")
            server.log_errors()
    finally:
        cluster.close()
    print(f"\n  ({time.perf_counter() - began:.0f} s in all)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The watcher's RSS over many drawn pane opens and closes.")
    parser.add_argument("opens", type=int, nargs="?", default=OPENS)
    parser.add_argument("--pace", type=float, default=0.0, help="seconds between batches (default: none)")
    options = parser.parse_args()
    main(options.opens, options.pace)
