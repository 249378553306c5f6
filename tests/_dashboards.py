"""A fake Dask dashboard for tests that need many of them: it lists its plots under any path prefix,
so ``/d0``, ``/d1``, ... are as many dashboards (as many sources) on one port."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeDashboard:
    """A dashboard on 127.0.0.1 that lists its plots under any path prefix, answers /health, and
    counts what it is asked; ``plots_document`` may be swapped for a hostile one."""

    def __init__(self) -> None:
        self.plots_document = json.dumps({"Individual Task Stream": "/individual-task-stream"})
        self.health_requests = 0
        self._lock = threading.Lock()
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.endswith("/individual-plots.json"):
                    body = dashboard.plots_document.encode()
                elif self.path.endswith("/health"):
                    with dashboard._lock:
                        dashboard.health_requests += 1
                    body = b"ok"
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.request_queue_size = 1024
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def prefixed(self, n: int) -> str:
        """The URL of the n-th of as many dashboards as wanted on this one port."""
        return f"{self.url}/d{n}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
