"""The shapes of the ids in dashdock's URLs, and how source ids are made: written once, here.

A source id is 12 lowercase hex characters, whatever made the source: derived from what
identifies it (a dashboard URL, a kernel's client), so re-adding it or restoring a layout finds
the same source, or random for a managed cluster. The proxy tells a source id from a literal
``host:port`` target by this shape.
"""

from __future__ import annotations

import hashlib
import re
import secrets

SOURCE_ID = r"[0-9a-f]{12}"
PANE_ID = r"[A-Za-z0-9_-]{1,80}"  # made by the browser (Lumino widget ids)
KERNEL_ID = r"[A-Za-z0-9-]{1,64}"  # made by Jupyter's kernel manager (UUIDs)

_SOURCE_ID_RE = re.compile(rf"^{SOURCE_ID}$")
_PANE_ID_RE = re.compile(rf"^{PANE_ID}$")
_KERNEL_ID_RE = re.compile(rf"^{KERNEL_ID}$")


def derived_source_id(key: str) -> str:
    """The id of the source ``key`` identifies; the same key gives the same id in every server."""
    return hashlib.sha1(key.encode()).hexdigest()[:12]


def new_source_id() -> str:
    return secrets.token_hex(6)


def is_source_id(text: str) -> bool:
    return _SOURCE_ID_RE.match(text) is not None


def is_pane_id(text: str) -> bool:
    return _PANE_ID_RE.match(text) is not None


def is_kernel_id(text: str) -> bool:
    return _KERNEL_ID_RE.match(text) is not None
