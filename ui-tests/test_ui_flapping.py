"""A flapping dashboard reloads no pane whose relay held (issue 40, item 2).

A dashboard whose ``/health`` answers 503 and 200 in turn used to have every open pane of it
reload each time it came back up. Now a pane reloads on "came back" only when a relay of the
source was lost meanwhile (the source's ``lost`` moved): a failed health check under a page whose
websocket held reloads nothing, while a dashboard that really drops the page's websocket still has
the pane load its page again.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from helpers import pane, pane_frame, wait_until
from lab import Lab, open_lab, screenshot
from playwright.sync_api import Browser, Page, expect

PLOT = "/individual-flappy"
# A plain page whose script opens a websocket to its dashboard (relative, so through the proxy's
# relay, as a Bokeh page's does) and says on the page when it is open.
PAGE = b"""<!doctype html><html><body><h1>Flappy page</h1><p id="ws">connecting</p>
<script>
  const url = new URL('ws' + location.search, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(url);
  socket.onopen = () => { document.getElementById('ws').textContent = 'open'; };
  socket.onclose = () => { document.getElementById('ws').textContent = 'closed'; };
</script></body></html>"""
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
WAIT = 60_000  # ms: a state the Lab reaches by its own polls, on a loaded machine


class FlappingDashboard:
    """A dashboard of one plain page whose /health says 200 or 503 as the test sets it; counts the
    page's loads, and holds each websocket the page opens until the test drops them."""

    def __init__(self) -> None:
        self.healthy = True
        self.page_loads = 0
        self.sockets_opened = 0
        self._held: list[threading.Event] = []
        lock = threading.Lock()
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                if path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
                    self._hold_websocket()
                    return
                status, body, kind = 200, b"", "text/html; charset=utf-8"
                with lock:
                    if path == "/individual-plots.json":
                        body, kind = b'{"Flappy": "/individual-flappy"}', "application/json"
                    elif path == PLOT:
                        dashboard.page_loads += 1
                        body = PAGE
                    elif path == "/health":
                        status, body, kind = (200 if dashboard.healthy else 503), b"ok", "text/plain"
                    else:
                        status = 404
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _hold_websocket(self) -> None:
                key = self.headers["Sec-WebSocket-Key"]
                accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest()).decode()
                held = threading.Event()
                self.send_response(101, "Switching Protocols")
                self.send_header("Upgrade", "websocket")
                self.send_header("Connection", "Upgrade")
                self.send_header("Sec-WebSocket-Accept", accept)
                self.end_headers()
                self.wfile.flush()
                with lock:
                    dashboard.sockets_opened += 1
                    dashboard._held.append(held)
                held.wait()  # then the connection is closed under the page: the dashboard went away
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self._lock = lock
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def drop_websockets(self) -> None:
        """Close every websocket held open now, as a dashboard that went away does."""
        with self._lock:
            held, self._held = self._held, []
        for event in held:
            event.set()

    def close(self) -> None:
        self.drop_websockets()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def flapping() -> Iterator[FlappingDashboard]:
    dashboard = FlappingDashboard()
    yield dashboard
    dashboard.close()


def _source(lab: Lab, source_id: str) -> dict:
    listing = lab.api("dashdock/api/sources")
    assert isinstance(listing, dict)
    return next(s for s in listing["sources"] if s["id"] == source_id)


def _expect_status(page: Page, status: str) -> None:
    expect(pane(page, "Flappy")).to_have_attribute("data-status", status, timeout=WAIT)


def _expect_page_shown(page: Page) -> None:
    """The pane shows the dashboard's page, its websocket open through the relay."""
    frame = pane_frame(page, "Flappy")
    frame.wait_for_function("() => document.getElementById('ws')?.textContent === 'open'", timeout=WAIT)


def test_a_flapping_health_check_reloads_no_pane_whose_relay_held(
    browser: Browser, lab: Lab, flapping: FlappingDashboard
) -> None:
    source = lab.api("dashdock/api/sources", "POST", {"url": flapping.url})
    assert isinstance(source, dict)
    source_id = source["id"]
    page = open_lab(browser, lab, "flapping")
    page.evaluate(
        "([source, path]) => window.jupyterapp.commands.execute('dashdock:open-plot', {source, path})",
        [source_id, PLOT],
    )
    _expect_page_shown(page)
    _expect_status(page, "live")
    assert (flapping.page_loads, flapping.sockets_opened) == (1, 1)
    lost = _source(lab, source_id)["lost"]

    for _ in range(2):
        flapping.healthy = False
        _expect_status(page, "reconnecting")
        assert _source(lab, source_id)["health"]["status"] == "down"
        flapping.healthy = True
        _expect_status(page, "live")
        assert _source(lab, source_id)["health"]["status"] == "up"

    screenshot(page, "flapping-held")
    # Nothing reloaded: the page loaded once, its one websocket still open, no relay lost.
    assert flapping.page_loads == 1, f"the pane reloaded {flapping.page_loads - 1} times on a flap"
    assert flapping.sockets_opened == 1
    assert pane_frame(page, "Flappy").evaluate("() => document.getElementById('ws').textContent") == "open"
    assert _source(lab, source_id)["lost"] == lost

    # The dashboard really goes away under the page (its websocket is closed, /health still says
    # 200): the relay reports it lost, and the pane loads its page again by itself.
    flapping.drop_websockets()
    wait_until(lambda: _source(lab, source_id)["lost"] == lost + 1, timeout=60)
    wait_until(lambda: flapping.page_loads == 2, timeout=60)
    _expect_page_shown(page)
    _expect_status(page, "live")
    assert flapping.sockets_opened == 2
    screenshot(page, "flapping-lost-reloaded")
