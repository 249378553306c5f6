"""Viewers of live Bokeh plot pages that read everything and draw nothing: browsers on other machines.

``python bench/remote_viewers.py URL...`` (a process of its own, so its CPU is counted apart): for each
URL it loads the page as a browser would (a dashdock proxy link is followed to its view URL, which is
fetched without Jupyter's token and from the opaque origin "null", as a pane's sandboxed frame asks),
opens the page's Bokeh websocket with the session token the page carries, asks for the document and
then reads every message the server sends. It prints ``READY`` once every page has its document, and
``RECEIVED <messages> <bytes>`` when its standard input closes, then exits.

A browser on the same machine as the cluster pays for drawing the plots with the cluster's own cores;
these viewers cost a few milliseconds of CPU a second, so what N open plots then cost the cluster is
what their servers (Dask's scheduler, or dashdock's server and recorder) spend on them, as when the
browser runs on a JupyterHub user's laptop. ``live_panes_cost.py --remote-viewers`` uses them.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from dataclasses import dataclass
from urllib.parse import urljoin

from tornado.httpclient import AsyncHTTPClient, HTTPRequest, HTTPResponse
from tornado.websocket import WebSocketClientConnection, websocket_connect

_TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"')
TIMEOUT = 120.0


@dataclass
class Counts:
    messages: int = 0
    bytes: int = 0


async def _get(url: str, headers: dict[str, str]) -> HTTPResponse:
    request = HTTPRequest(url, headers=headers, follow_redirects=False, request_timeout=TIMEOUT)
    return await AsyncHTTPClient().fetch(request, raise_error=False)


async def _page(url: str, auth: dict[str, str]) -> tuple[str, str, dict[str, str]]:
    """The page's final URL, its HTML, and the headers its websocket is opened with."""
    response = await _get(url, auth)
    if response.code in (301, 302, 303, 307):  # dashdock's proxy link: on to the sandboxed view URL
        url = urljoin(url, response.headers["Location"])
        response = await _get(url, {})
        headers = {"Origin": "null"}
    else:  # a page of the scheduler's own, or relayed under Jupyter's auth
        headers = dict(auth)
    if response.code != 200:
        raise RuntimeError(f"{url}: HTTP {response.code}")
    return url, response.body.decode(), headers


async def _view(url: str, auth: dict[str, str], counts: Counts, ready: asyncio.Event) -> None:
    url, html, headers = await _page(url, auth)
    token = _TOKEN.search(html)
    if token is None:
        raise RuntimeError(f"{url}: no Bokeh session token in the page")
    request = HTTPRequest(url.replace("http://", "ws://", 1) + "/ws", headers=headers)
    connection: WebSocketClientConnection = await websocket_connect(
        request, subprotocols=["bokeh", token[1]], max_message_size=256 * 1024 * 1024
    )
    asked = False
    while (frame := await connection.read_message()) is not None:
        counts.messages += 1
        counts.bytes += len(frame)
        header = frame[:300] if isinstance(frame, str) and frame.startswith("{") else ""
        if '"ACK"' in header and not asked:  # as BokehJS does: the server takes requests after its ACK
            for request_frame in (json.dumps({"msgid": "1", "msgtype": "PULL-DOC-REQ"}), "{}", "{}"):
                await connection.write_message(request_frame)
            asked = True
        elif '"PULL-DOC-REPLY"' in header:
            ready.set()
        elif '"msgtype": "ERROR"' in header and not ready.is_set():  # the page failed to load
            raise RuntimeError(f"{url}: the server answered the document request with an error")
    if not ready.is_set():
        reason = f"{connection.close_code} {connection.close_reason or ''}".strip()
        raise RuntimeError(f"{url}: the websocket closed before the document came ({reason})")


async def main(urls: list[str], auth: dict[str, str]) -> None:
    counts = Counts()
    readies = [asyncio.Event() for _ in urls]
    pairs = zip(urls, readies, strict=True)
    viewers = [asyncio.ensure_future(_view(url, auth, counts, ready)) for url, ready in pairs]
    waiting = asyncio.gather(*(ready.wait() for ready in readies))
    done, _ = await asyncio.wait([waiting, *viewers], timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
    if waiting not in done:
        for viewer in done:
            viewer.result()  # a viewer that failed says why
        raise RuntimeError("not every page had its document in time")
    print("READY", flush=True)
    await asyncio.to_thread(sys.stdin.read)  # until the bench closes our stdin
    closed = sum(viewer.done() for viewer in viewers)  # a page whose websocket ended early
    print(f"RECEIVED {counts.messages} {counts.bytes} closed={closed}", flush=True)


if __name__ == "__main__":
    # The Jupyter token for dashdock's links comes in the environment, not on a command line.
    token = os.environ.get("DASHDOCK_BENCH_TOKEN")
    asyncio.run(main(sys.argv[1:], {"Authorization": f"token {token}"} if token else {}))
