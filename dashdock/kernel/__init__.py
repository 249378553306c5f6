"""What runs inside a user's kernel: the work of dashdock's Dask client preload (the repr, client
records, per-cell accounting), ``show`` and ``cell_strips``; and ``ledger``, which a kernel's client
sends to its scheduler, pickled by value, to run there.

Kernels reach this package through the preload (see ``dashdock/_preload``) or ``dashdock.show``.
It imports nothing of the rest of dashdock or of Jupyter's server; the server imports its
``protocol`` (the contract with kernels) and ``files`` (atomic replacement) from here. Its code
must run on the Python of any kernel the server starts (3.9 and later), because the preload loads
it by path in environments without dashdock.
"""
