"""The recorder process (``python -m dashdock.history.recorder``): what reads schedulers and writes the store.

Runs outside the Jupyter server, under a memory cap; the server starts it by name (service.py) and
speaks to it over pipes, and imports none of its modules. It imports the records' shapes
(``history.model``) and the store (``history.store``), never the server side of history (service,
handlers, views, pages, report).
"""
