"""A LocalCluster task-stream pane loaded cold and warm like a browser, and its first Bokeh document.

Cold: GET the page, then every ``<script src>`` it names, with ``Accept-Encoding: gzip, deflate``; bytes are
counted as they cross the wire (bodies still compressed, plus response headers). Warm: what a browser sends
when the pane is reopened: scripts whose response allows caching (``max-age`` or ``immutable``) are not
requested; others are revalidated (If-None-Match / If-Modified-Since) or fetched again. Then the time from
opening the Bokeh websocket (subprotocols ``["bokeh", token]``) to ACK and PULL-DOC-REQ -> PULL-DOC-REPLY,
interleaved over paths. Run: .venv/bin/python bench/pane_bytes.py

dashdock is measured twice: in the first seconds of a server whose BokehJS cache is empty (gzip -9
made in memory), and once its low-priority precompression (zopfli, brotli; started with the server,
about 10 s of one core once per bokeh version) is done, which is what every later pane gets; plus once
with a browser that offers brotli (Chromium does over HTTPS).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin

import aiohttp
from _common import (
    AUTH,
    HOST,
    Cluster,
    JupyterServer,
    heading,
    median,
    not_installed_note,
    percentile,
    ratio,
    table,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from dashdock.proxy.bokehjs.serve import local_js_dir

PANE = "/individual-task-stream"
BROWSER = {
    "Accept": "text/html,application/xhtml+xml,*/*;q=0.8",
    "Accept-Encoding": "gzip, deflate",
    "User-Agent": "Mozilla/5.0 (dashdock bench)",
}
DOC_RUNS = 20
_SCRIPT_SRC = re.compile(r"<script[^>]*\ssrc=[\"']([^\"']+)[\"']", re.I)
_TOKEN = re.compile(r'"token"\s*:\s*"([^"]+)"')
_MAX_AGE = re.compile(r"max-age=(\d+)")


@dataclass
class Fetched:
    url: str
    status: int
    body: int  # bytes as received (compressed when Content-Encoding says so)
    header: int  # approximate bytes of status line and headers
    headers: dict[str, str]

    @property
    def wire(self) -> int:
        return self.body + self.header


async def fetch(session: aiohttp.ClientSession, url: str, headers: dict[str, str]) -> tuple[Fetched, bytes]:
    async with session.get(url, headers=headers, allow_redirects=False) as response:
        raw = await response.read()  # the session does not decompress: this is what crossed the wire
        header = 17 + sum(len(k) + len(v) + 4 for k, v in response.raw_headers) + 2
        return Fetched(url, response.status, len(raw), header, dict(response.headers)), raw


async def open_page(
    session: aiohttp.ClientSession, url: str, headers: dict[str, str], auth: dict[str, str]
) -> tuple[list[Fetched], str, bytes]:
    """A page as a browser opens it: a dashdock proxy link redirects to the page's view URL, which is
    fetched without Jupyter's credentials (the sandboxed page has none). Returns what crossed the
    wire, the page's final URL and its body."""
    first, body = await fetch(session, url, {**headers, **auth})
    location = first.headers.get("Location", "")
    if first.status != 302 or "/dashdock/view/" not in location:
        return [first], url, body
    view = urljoin(url, location)
    page, body = await fetch(session, view, headers)
    return [first, page], view, body


def cacheable(headers: dict[str, str]) -> bool:
    """Whether a browser reuses the response without asking (fresh for the next reopen)."""
    value = headers.get("Cache-Control", "").lower()
    if "no-cache" in value or "no-store" in value:
        return False
    match = _MAX_AGE.search(value)
    return "immutable" in value or (match is not None and int(match[1]) > 0)


@dataclass
class PaneLoad:
    cold: list[Fetched]
    warm: list[Fetched]
    warm_requests: int
    token: str | None


async def cold_and_warm(
    session: aiohttp.ClientSession, page_url: str, auth: dict[str, str], encodings: str = "gzip, deflate"
) -> PaneLoad:
    browser = {**BROWSER, "Accept-Encoding": encodings}
    cold, view_url, html = await open_page(session, page_url, browser, auth)
    page_requests = len(cold)
    text = html.decode("utf-8", "replace")
    scripts = [urljoin(view_url, src) for src in _SCRIPT_SRC.findall(text)]
    for url in scripts:
        cold.append((await fetch(session, url, {**browser, "Accept": "*/*"}))[0])
    # Warm reopen: the page again, then only what the cache cannot answer by itself.
    warm, _, _ = await open_page(session, page_url, browser, auth)
    requests = len(warm)
    for item in cold[page_requests:]:
        if cacheable(item.headers):
            continue
        conditional = {**browser, "Accept": "*/*"}
        if "ETag" in item.headers:
            conditional["If-None-Match"] = item.headers["ETag"]
        if "Last-Modified" in item.headers:
            conditional["If-Modified-Since"] = item.headers["Last-Modified"]
        warm.append((await fetch(session, item.url, conditional))[0])
        requests += 1
    token = _TOKEN.search(text)
    return PaneLoad(cold, warm, requests, token[1] if token else None)


def short(url: str) -> str:
    path = url.split("/static/", 1)[1] if "/static/" in url else url.rsplit("/", 1)[-1]
    return path.split("?", 1)[0][-34:]


def token_leaks(token: str) -> str:
    """Credentials of the page request that Bokeh's session token embeds (it copies headers and cookies)."""
    from bokeh.util.token import get_token_payload

    payload = get_token_payload(token)
    headers = {k.lower() for k in payload.get("headers", {})}
    found = sorted(headers & {"authorization", "cookie", "x-xsrftoken"})
    found += ["cookies"] if payload.get("cookies") else []
    return ", ".join(found) if found else "none"


async def first_document(
    session: aiohttp.ClientSession, page_url: str, origin: str, auth: dict[str, str]
) -> tuple[float, float, int]:
    """Seconds from websocket open to ACK, from PULL-DOC-REQ to the whole reply, and the reply's bytes."""
    opened, view_url, html = await open_page(session, page_url, BROWSER, auth)
    match = _TOKEN.search(html.decode("utf-8", "replace"))
    assert match, "no Bokeh token in the page"
    ws_url = view_url.replace("http://", "ws://", 1) + "/ws"
    if len(opened) > 1:  # a sandboxed page under its view URL: an opaque origin, no credentials
        origin, auth = "null", {}
    start = time.perf_counter()
    async with session.ws_connect(
        ws_url, protocols=("bokeh", match[1]), headers={"Origin": origin, **auth}
    ) as ws:
        ack = json.loads(await ws.receive_str(timeout=30))
        assert ack["msgtype"] == "ACK", ack
        for _ in range(2):
            await ws.receive_str(timeout=30)
        acked = time.perf_counter()
        for part in ('{"msgid":"b1","msgtype":"PULL-DOC-REQ"}', "{}", "{}"):
            await ws.send_str(part)
        header_text = await ws.receive_str(timeout=30)
        header = json.loads(header_text)
        assert header["msgtype"] == "PULL-DOC-REPLY", header
        size = len(header_text)
        for _ in range(2 + 2 * header.get("num_buffers", 0)):
            message = await ws.receive(timeout=30)
            size += len(message.data)
        done = time.perf_counter()
    return acked - start, done - acked, size


async def run(server: JupyterServer, cluster: Cluster) -> None:
    async with aiohttp.ClientSession(headers=AUTH) as api:
        async with api.post(f"{server.url}/dashdock/api/sources", json={"url": cluster.link}) as response:
            source = await response.json()
            assert response.status in (200, 201), source
    prefixes = {"direct": cluster.dashboard, "dashdock": server.dashdock(source["id"])}
    if server.with_jsp:
        prefixes["jsp"] = server.jsp(cluster.port)
    origins = {"direct": cluster.dashboard, "dashdock": server.url, "jsp": server.url}
    auths = {"direct": {}, "dashdock": AUTH, "jsp": AUTH}  # the browser's credentials go to Jupyter only
    print(f"  cluster dashboard {cluster.dashboard}, dashdock source id {source['id']}")

    heading(f"cold pane {PANE}: bytes on the wire (compressed bodies + response headers)")
    results: dict[str, PaneLoad] = {}

    async def load(name: str, prefix: str, auth: dict[str, str], encodings: str = "gzip, deflate") -> None:
        session = aiohttp.ClientSession(auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar())
        async with session:
            results[name] = await cold_and_warm(session, prefix + PANE, auth, encodings)

    # dashdock first: its precompression began with the server, and this figure is the one before it.
    await load("dashdock, first seconds", prefixes["dashdock"], AUTH)
    if cache_complete(server):
        print("  NOTE: precompression was already done: 'first seconds' is not the gzip -9 figure")
    for name, prefix in prefixes.items():
        if name != "dashdock":
            await load(name, prefix, auths[name])
    started = time.perf_counter()
    ready = await server_cache_ready(server)
    waited = f"{time.perf_counter() - started:.0f} s"
    state = "done after another" if ready else "NOT done in"
    print(f"  dashdock's BokehJS precompression (low priority, once per bokeh version): {state} {waited}")
    print("  'dashdock' rows below: measured after it was done")
    await load("dashdock", prefixes["dashdock"], AUTH)
    await load("dashdock, offering br", prefixes["dashdock"], AUTH, "gzip, deflate, br")
    detail = [["path", "file", "status", "bytes", "encoding", "Cache-Control"]]
    for name, result in results.items():
        for item in result.cold:
            encoding = item.headers.get("Content-Encoding", "-")
            cache = item.headers.get("Cache-Control", "-")[:38]
            detail.append([name, short(item.url), str(item.status), f"{item.body:,}", encoding, cache])
    table(detail)
    base = sum(i.wire for i in results["direct"].cold)
    rows = [
        [
            "path",
            "requests",
            "cold bytes",
            "ratio",
            "warm requests",
            "warm bytes",
            "warm JS bytes",
            "token has",
        ]
    ]
    for name, result in results.items():
        cold = sum(i.wire for i in result.cold)
        warm = sum(i.wire for i in result.warm)
        warm_js = sum(i.wire for i in result.warm if "/static/" in i.url)
        leaks = token_leaks(result.token) if result.token else "no token"
        row = [str(len(result.cold)), f"{cold:,}", ratio(cold, base), str(result.warm_requests), f"{warm:,}"]
        rows.append([name, *row, f"{warm_js:,}", leaks])
    table(rows)
    print(
        "  target: dashdock cold pane <= 1.2 MB; 'token has': credentials that Bokeh's session token embeds"
    )

    heading(f"time to first Bokeh document (ms), {DOC_RUNS} interleaved runs per path")
    timings: dict[str, list[tuple[float, float, int]]] = {name: [] for name in prefixes}
    async with aiohttp.ClientSession() as session:
        for name, prefix in prefixes.items():
            await first_document(session, prefix + PANE, origins[name], auths[name])  # warmup
        names = list(prefixes)
        for n in range(DOC_RUNS):
            for name in names[n % len(names) :] + names[: n % len(names)]:
                url = prefixes[name] + PANE
                timings[name].append(await first_document(session, url, origins[name], auths[name]))
    base = median([a + b for a, b, _ in timings["direct"]])
    rows = [["path", "open->ACK p50", "PULL-DOC p50", "PULL-DOC p99", "total p50", "ratio", "doc bytes"]]
    for name, values in timings.items():
        total = median([a + b for a, b, _ in values])
        pulls = [b for _, b, _ in values]
        acks = median([a for a, _, _ in values])
        size = median([s for _, _, s in values])
        row = [f"{acks * 1e3:.1f}", f"{median(pulls) * 1e3:.1f}", f"{percentile(pulls, 99) * 1e3:.1f}"]
        rows.append([name, *row, f"{total * 1e3:.1f}", ratio(total, base), f"{size:,.0f}"])
    table(rows)
    not_installed_note(server)


async def server_cache_ready(server: JupyterServer, timeout: float = 300.0) -> bool:
    """Whether the server's BokehJS cache holds zopfli and brotli of every local BokehJS file."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cache_complete(server):
            return True
        await asyncio.sleep(0.5)
    return False


def cache_complete(server: JupyterServer) -> bool:
    js_dir = local_js_dir()
    assert js_dir is not None
    wanted = 2 * len(list(js_dir.glob("bokeh*.min.js")))
    return len(list(cache_dir(server).glob("*.min.js.*[zr]"))) >= wanted


def cache_dir(server: JupyterServer) -> Path:
    return Path(server.tmp) / "cache" / "dashdock"


def main() -> None:
    print(f"pane_bytes: task-stream pane of a LocalCluster on {HOST}, direct vs dashdock vs jsp")
    tmp = tempfile.mkdtemp(prefix="dashdock-bench-")
    # An empty BokehJS cache of its own: the run shows the first seconds and what follows.
    with Cluster() as cluster, JupyterServer(tmp=tmp, extra_env={"XDG_CACHE_HOME": f"{tmp}/cache"}) as server:
        asyncio.run(server.wait_ready())
        asyncio.run(run(server, cluster))
        server.log_errors()


if __name__ == "__main__":
    main()
