"""Giving the memory of closed pages back to the system, not only to this process's allocator.

A drawn page's document is thousands of small objects. Python's own allocator keeps them in
arenas it frees only when wholly empty, and a few survivors (an interned string, a cached model)
keep most arenas alive: after 480 pages opened and closed the watcher stayed 42 % above its
baseline. So the watcher allocates with the C library's malloc (``PYTHONMALLOC=malloc``, set by
history/supervision.py when it starts it), and after each collection of closed pages asks glibc
to return the free pages inside its heap too (``malloc_trim``, which releases pages in the middle
of the heap, not only its top): 17 % above, 15 s after the last page closed
(bench/watcher_memory.py). Once pages stop closing it asks once more (plot_server.py
``SETTLE_AFTER_S``). Nothing is done where there is no glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any


def _trimmer() -> Any:
    """glibc's ``malloc_trim``, or None."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to ask
        return None


_MALLOC_TRIM = _trimmer()


def give_back() -> None:
    """Return the heap's free pages to the system (after a collection has freed closed pages)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
