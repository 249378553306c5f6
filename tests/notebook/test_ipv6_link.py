"""An IPv6 scheduler's ``dashboard_link`` opens through the proxy.

Dask's link template (``.../proxy/{host}:{port}/status``, which kernels get) writes an IPv6 host
bare: ``/dashdock/proxy/::1:8787/status``. A server on the IPv6 loopback (standing for the
dashboard: Dask's own dashboard address option does not take an IPv6 host) answers it, and so
does the bracketed form.
"""

from __future__ import annotations

import socket

import pytest
import tornado.httpserver
import tornado.web
from _support import Jupyter


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


class _Status(tornado.web.RequestHandler):
    def get(self) -> None:
        self.finish("<html><head></head><body>status on ::1</body></html>")


@pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")
async def test_a_bare_ipv6_link_opens_the_dashboard(jupyter: Jupyter) -> None:
    with socket.socket(socket.AF_INET6) as listener:
        listener.bind(("::1", 0))
        listener.listen(16)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        server = tornado.httpserver.HTTPServer(tornado.web.Application([(r"/status", _Status)]))
        server.add_socket(listener)
        try:
            for segment in (f"::1:{port}", f"[::1]:{port}"):
                page = await jupyter.proxied(f"dashdock/proxy/{segment}/status")
                assert page.code == 200, (segment, page.code, page.body[:300])
                assert b"status on ::1" in page.body
        finally:
            server.stop()
