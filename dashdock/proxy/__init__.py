"""The proxy: a dashboard's pages, scripts and websockets relayed into JupyterLab, isolated.

Owns the two URL families (``dashdock/proxy/`` links, ``dashdock/view/`` capability URLs), the
header rules, view capabilities, the local BokehJS and the websocket relays. May import
``dashdock.targets``, ``dashdock.upstream``, ``dashdock.errors``, ``dashdock.http`` and, for where a
source id points, ``dashdock.sources`` and ``dashdock.panes``; nothing imports the proxy but ``app``.
"""
