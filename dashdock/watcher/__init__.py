"""The watcher: one process (``python -m dashdock.watcher <store>``) that watches every recorded scheduler.

It owns the one connection per scheduler (comm.py, scheduler.py) and reads it once a tick
(run_watcher.py); what it read goes to three consumers, each in its own package: recording and
the store (``dashdock.history``: run_writes.py), alert detection (``dashdock.alerts.detection``)
and live drawing (``dashdock.live``: the mirror and the plot server). This package wires them.

Runs outside the Jupyter server, under a memory cap; the server starts it by name
(history/supervision.py) and speaks to it over pipes, importing none of its modules.
"""
