"""History: every computation of the sources dashdock knows, recorded, kept, and exported.

Owns the records' shapes (model.py), the store they live in (store.py, its reads and writes),
the recorder process that reads schedulers outside the server's event loop (recorder/), the
service in the server that decides what is recorded and keeps the recorder running (service.py),
the pages and exports (pages.py, figures.py, trace.py, parquet.py, report.py, and export.py for
kernels) and the ``dashdock/api/history`` routes (handlers.py). May import the base
(``dashdock.errors``, ``ids``, ``targets``, ``http``, ``sqlite``), ``dashdock.kernel.protocol`` (the
environment kernels get), and
``dashdock.sources`` and ``dashdock.clusters``; the recorder process imports only this package.
"""
