"""Panes open from the browser's cache: BokehJS reaches a pane's page from the Lab, not the network.

A pane is an opaque origin, for which Chromium keeps no cache beyond the page, so before this each
warm pane downloaded about 950 KB of BokehJS again. What a pane's page receives is read from the
browser's own accounting of each request (bytes on the wire: headers and encoded body).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread
from typing import Any

import pytest
from helpers import add_source, open_sidebar, pane, pane_frame, plot_item, wait_for_bokeh_plot
from lab import DaskCluster, Lab
from playwright.sync_api import Page, Request, expect

from dashdock.proxy.bokehjs.serve import local_js_dir
from dashdock.proxy.page.spare import SPARE_BOKEHJS

pytestmark = pytest.mark.parametrize("lab", ["/user/alice/"], indirect=True)

WARM_PANE_BYTES = 20_000


class Received:
    """Every finished request of the page and its frames: URL and bytes received."""

    def __init__(self, page: Page) -> None:
        self.requests: list[tuple[str, int]] = []
        page.on("requestfinished", self._add)

    def _add(self, request: Request) -> None:
        sizes = request.sizes()
        self.requests.append((request.url, sizes["responseBodySize"] + sizes["responseHeadersSize"]))

    def of_panes(self) -> list[tuple[str, int]]:
        panes = ("/dashdock/view/", "/dashdock/proxy/")
        return [(url, size) for url, size in self.requests if any(part in url for part in panes)]

    def urls(self, part: str) -> list[str]:
        return [url for url, _ in self.requests if part in url]


def _open(page: Page, name: str) -> None:
    plot_item(page, name).click()
    wait_for_bokeh_plot(page, name)


def _close(page: Page, name: str) -> None:
    tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=name)
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    expect(pane(page, name)).to_have_count(0)


def test_a_warm_pane_receives_no_bokehjs_and_a_reload_downloads_it_at_most_once(
    page: Page, lab: Lab, dask_cluster: DaskCluster
) -> None:
    received = Received(page)
    open_sidebar(page)
    add_source(page, dask_cluster.dashboard)
    _open(page, "Task Stream")
    assert received.urls("/dashdock/bokehjs/bokeh.min.js?v="), "the Lab fetches BokehJS for the pane"
    assert not received.urls("/static/js/bokeh"), "the pane did not download BokehJS itself"
    _close(page, "Task Stream")

    received.requests.clear()
    _open(page, "Task Stream")
    pane_bytes = sum(size for _, size in received.of_panes())
    assert 0 < pane_bytes <= WARM_PANE_BYTES, received.of_panes()
    assert not received.urls("/static/js/bokeh")
    # The page ran as it was written: its scripts are live, its plot is themed and drawn.
    assert (
        pane_frame(page, "Task Stream").evaluate(
            "() => document.querySelectorAll('script[type=\"dashdock/deferred\"]').length"
        )
        == 0
    )

    for name in ("Progress", "Workers Memory", "CPU"):
        _open(page, name)
    received.requests.clear()
    page.reload()
    for name in ("Task Stream", "Progress", "Workers Memory", "CPU"):
        wait_for_bokeh_plot(page, name)
    fetched = received.urls("/dashdock/bokehjs/")
    assert len(fetched) == len(set(fetched)), fetched  # each file at most once, for four panes
    assert not received.urls("/static/js/bokeh")


def _local_version() -> tuple[str, int]:
    js_dir = local_js_dir()
    assert js_dir is not None
    raw = (js_dir / "bokeh.min.js").read_bytes()
    return hashlib.sha512(raw).hexdigest(), len(raw)


# A page that asks the Lab for what is not BokehJS, then for BokehJS over and over, and keeps
# every answer. The last request is a valid one, so once its answer is in, the Lab has seen all.
ASKING_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Asking</title></head><body>
<script>
const LOCAL = %(version)s;
const got = (window.__got = {pending: 0, files: []});
window.addEventListener('message', event => {
  const data = event.data;
  if (data && data.type === 'dashdock:bokehjs-pending') got.pending++;
  if (data && data.type === 'dashdock:bokehjs') {
    got.files.push({name: data.name, version: data.version,
                    blob: data.source instanceof Blob, size: data.source ? data.source.size : null});
  }
});
const ask = files => window.parent.postMessage({type: 'dashdock:bokehjs', files}, '*');
ask([{name: '../../api/contents', version: LOCAL}]);
ask([{name: 'bokeh.min.js', version: LOCAL + '/../../api/contents'}]);
ask([{name: 'bokeh.min.js', version: 'f'.repeat(128)}]);
for (let i = 0; i < 10; i++) ask([{name: 'bokeh.min.js', version: LOCAL}]);
</script></body></html>"""


@pytest.fixture
def asking_dashboard() -> Iterator[str]:
    version, _ = _local_version()
    body = (ASKING_PAGE % {"version": f'"{version}"'}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/individual-plots.json"):
                self._send("application/json", b'{"Asking": "/individual-asking"}')
            elif self.path.startswith("/individual-asking"):
                self._send("text/html; charset=utf-8", body)
            else:
                self._send("text/plain", b"ok")

        def _send(self, kind: str, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_page_gets_nothing_from_the_lab_but_public_bokehjs_a_few_times(
    page: Page, lab: Lab, asking_dashboard: str
) -> None:
    received = Received(page)
    source: Any = lab.api("dashdock/api/sources", "POST", {"url": asking_dashboard})
    page.evaluate(
        "args => window.jupyterapp.commands.execute('dashdock:open-plot', args)",
        {"source": source["id"], "path": "/individual-asking", "name": "Asking"},
    )
    expect(pane(page, "Asking")).to_be_visible()
    frame = pane_frame(page, "Asking")
    frame.wait_for_function("() => window.__got && window.__got.files.some(f => f.blob)", timeout=30_000)
    got = frame.evaluate("() => window.__got")
    version, size = _local_version()
    # Malformed requests are not answered at all; a well-formed one for a file this server has not
    # gets null; the real file comes as a Blob of exactly its bytes. And no more than four answers.
    assert got["pending"] <= 4, got
    assert {(f["name"], f["version"]) for f in got["files"]} <= {
        ("bokeh.min.js", version),
        ("bokeh.min.js", "f" * 128),
    }, got
    assert all(f["size"] == size for f in got["files"] if f["blob"]), got
    assert all(not f["blob"] for f in got["files"] if f["version"] != version), got
    # The Lab asked its server for nothing but BokehJS files by name and hash: the page's, and the
    # local ones its source's spare frame runs (panes/spares.ts).
    js_dir = local_js_dir()
    assert js_dir is not None
    spare = {f"{name}?v={hashlib.sha512((js_dir / name).read_bytes()).hexdigest()}" for name in SPARE_BOKEHJS}
    asked = {f"bokeh.min.js?v={version}", f"bokeh.min.js?v={'f' * 128}"} | spare
    for url in received.urls("/dashdock/bokehjs/"):
        assert url.split("/dashdock/bokehjs/")[1] in asked, url
    lab.api(f"dashdock/api/sources/{source['id']}", "DELETE")
