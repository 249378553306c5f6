"""History: every computation of the sources dashdock knows, recorded, kept, and exported.

Owns the records' shapes (model.py), the store they live in (store.py, its reads and writes),
what a run's watcher writes (run_writes.py), the service in the server that decides what is
recorded and keeps the watcher process (``dashdock.watcher``) running (service.py, supervision.py),
the pages and exports (pages.py, figures.py, trace.py, parquet.py, report.py, and export.py for
kernels) and the ``dashdock/api/history`` routes (handlers.py). May import the base
(``dashdock.errors``, ``ids``, ``targets``, ``http``, ``sqlite``), ``dashdock.kernel.protocol`` (the
environment kernels get), and
``dashdock.sources``, ``dashdock.clusters`` and the drawn plots' contract (``dashdock.live.plots``).
"""
