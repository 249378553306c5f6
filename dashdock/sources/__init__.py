"""Sources: the dashboards this server knows, their health, plot catalogs, workers and saved file.

Owns the ``Source`` model and its ids, the registry, the SQLite store, health rounds, delta
listings and the ``dashdock/api/sources`` handlers. May import the base (``dashdock.errors``,
``ids``, ``targets``, ``upstream``, ``http``) and ``dashdock.kernel.files``; other concerns use
sources through ``SourceRegistry``.
"""
