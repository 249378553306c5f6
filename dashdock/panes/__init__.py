"""Panes: what the server knows of an open plot pane (paused, update interval, its relays).

Owns ``PaneRegistry`` and the ``dashdock/api/panes`` handlers. May import only the base
(``dashdock.errors``, ``ids``, ``targets``, ``upstream``, ``http``): the relays report to it, it
never reaches into them.
"""
