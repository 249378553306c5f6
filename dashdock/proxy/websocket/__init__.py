"""Websocket relays: a browser's websocket joined to a dashboard's, frames followed, never parsed.

Owns the upgrade checks, the raw tunnel and its two transports (a socket taken from tornado, or
tornado's own stream over HTTPS), frame scanning and the upstream handshake. May import
``dashdock.targets``, ``dashdock.errors``, ``dashdock.upstream`` (its failure messages) and
``dashdock.panes.state`` (the pane a relay feeds); it knows no handler: ``proxy.relay_handler``
hands a ``WebSocketRelay`` the checked request and a function that accepts the upgrade.
"""
