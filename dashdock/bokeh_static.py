"""BokehJS served from the bokeh installed here, compressed, when it is the very file a dashboard asks for.

Every plot page loads ~3.9 MB of BokehJS that schedulers send uncompressed. The page asks for
``static/js/<file>?v=<sha512 of the file>``; when the local bokeh has a file with that exact hash
(the usual case: the same bokeh on both sides), we answer from memory, gzipped, with an immutable
cache lifetime, without a round trip to the scheduler. Any other request goes through the relay.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs

_BOKEH_JS = re.compile(r"^/static/js/(bokeh(?:-[a-z]+)?\.min\.js)$")
# The URL names the content, so it can never go stale.
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class StaticAsset:
    name: str
    version: str  # sha512 hex of the uncompressed bytes, as in the page's ?v=
    raw: bytes
    gzipped: bytes


def _local_js_dir() -> Path | None:
    try:
        import bokeh
    except ImportError:  # bokeh is a dependency, but the relay must work without it
        return None
    return Path(bokeh.__file__).parent / "server" / "static" / "js"


def _load(name: str) -> StaticAsset | None:
    directory = _local_js_dir()
    if directory is None:
        return None
    try:
        raw = (directory / name).read_bytes()
    except OSError:
        return None
    return StaticAsset(
        name, hashlib.sha512(raw).hexdigest(), raw, gzip.compress(raw, compresslevel=9, mtime=0)
    )


class LocalBokehJS:
    """Lazily hashed and compressed copies of the local BokehJS files (a few MB, once per server)."""

    def __init__(self) -> None:
        self._assets: dict[str, StaticAsset | None] = {}
        self._lock = asyncio.Lock()

    async def lookup(self, path: str, query: str) -> StaticAsset | None:
        """The local asset for a proxied path and query, or ``None`` when it must be relayed."""
        match = _BOKEH_JS.match(path)
        if not match:
            return None
        version = parse_qs(query).get("v", [""])[0]
        if not version:
            return None
        asset = await self._get(match[1])
        return asset if asset is not None and asset.version == version else None

    async def _get(self, name: str) -> StaticAsset | None:
        if name not in self._assets:
            async with self._lock:
                if name not in self._assets:
                    # Hashing and compressing megabytes would stall the event loop: use a thread.
                    self._assets[name] = await asyncio.to_thread(_load, name)
        return self._assets[name]
