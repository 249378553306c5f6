"""The proxy: a dashboard's pages, scripts and websockets relayed into JupyterLab, isolated.

Owns the two URL families (``dashdock/proxy/`` links, ``dashdock/view/`` capability URLs), the
header rules, view capabilities, the local BokehJS and the websocket relays. May import the base
(``dashdock.targets``, ``upstream``, ``errors``, ``ids``, ``http``), ``dashdock.kernel.files`` and,
for where a source id points and which pane a relay feeds, ``dashdock.sources`` and
``dashdock.panes``; nothing imports the proxy but ``app``.
"""
