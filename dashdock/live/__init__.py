"""Live drawing: Dask's key plots drawn by dashdock, with Dask's own page code, from a mirror of a
scheduler that the watcher fills from its one read a tick.

Owns the mirror (mirror*.py: what Dask's components read, checked), the plot server that serves
the pages behind a secret header (plot_server.py), the fixes dashdock carries for Dask's page
functions (groups_page.py, text_only.py) and the line saying how old a page's data is
(stale.py). plots.py is the contract with the server side (history/drawn.py). Runs in the watcher
process; imports only the records' shapes (``dashdock.history.model``) of dashdock.
"""
