"""The proxy's two URL families, links (the Jupyter session) and views (a capability), and the
local BokehJS the Lab hands to framed views."""

from __future__ import annotations

from typing import Any

from dashdock.proxy.bokehjs import lab_handler
from dashdock.proxy.link_handler import ProxyHandler
from dashdock.proxy.services import ProxyServices
from dashdock.proxy.view_handler import ViewHandler


def routes(services: ProxyServices) -> list[tuple[str, Any, dict[str, Any]]]:
    relay = {"services": services}
    return [
        (r"/dashdock/proxy/.*", ProxyHandler, relay),
        (r"/dashdock/view/.*", ViewHandler, relay),
        lab_handler.route(services.bokeh_js),
    ]
