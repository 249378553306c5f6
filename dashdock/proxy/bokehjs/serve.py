"""BokehJS served from the bokeh installed here, compressed, when it is the very file a dashboard asks for.

Every plot page loads ~3.9 MB of BokehJS that schedulers send uncompressed. The page asks for
``static/js/<file>?v=<sha512 of the file>``; when the local bokeh has a file with that exact hash
(the usual case: the same bokeh on both sides), we answer from memory, compressed, with an immutable
cache lifetime, without a round trip to the scheduler. Any other request goes through the relay.

At first ``gzip -9`` (made in a thread in a fraction of a second); meanwhile a low-priority process
(precompress.py) makes zopfli gzip and brotli once per bokeh version into a disk cache,
which replaces it as soon as it is ready. That process starts with the server when the cache lacks
an entry, so the first pane after an install or upgrade usually finds it done. A cache entry is used
only if it decompresses to exactly the file, so a stale, damaged or planted entry is never served;
the process replaces such an entry.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import logging
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs

from dashdock.proxy.bokehjs.precompress import cache_name, compressors, decode

_BOKEH_JS = re.compile(r"^/static/js/(bokeh(?:-[a-z]+)?\.min\.js)$")
# The URL names the content, so it can never go stale.
IMMUTABLE = "public, max-age=31536000, immutable"
# Content-Encoding -> the suffix of its cache entries, best first.
_ENCODINGS = {"br": "br", "gzip": "gz"}

log = logging.getLogger(__name__)


@dataclass
class StaticAsset:
    name: str
    version: str  # sha512 hex of the uncompressed bytes, as in the page's ?v=
    raw: bytes
    encoded: dict[str, bytes] = field(default_factory=dict)  # Content-Encoding -> body

    def body_for(self, accept_encoding: str) -> tuple[str | None, bytes]:
        """The smallest body the client accepts, and its Content-Encoding (None: identity)."""
        offered = _accepted(accept_encoding)
        for encoding in _ENCODINGS:
            if encoding in offered and encoding in self.encoded:
                return encoding, self.encoded[encoding]
        return None, self.raw


def _accepted(header: str) -> set[str]:
    accepted = set()
    for item in header.lower().split(","):
        coding, _, parameters = item.partition(";")
        if parameters.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            continue
        accepted.add(coding.strip())
    return accepted


def local_js_dir() -> Path | None:
    try:
        import bokeh
    except ImportError:  # bokeh is a dependency, but the relay must work without it
        return None
    return Path(bokeh.__file__).parent / "server" / "static" / "js"


def _load(directory: Path, name: str) -> StaticAsset | None:
    try:
        raw = (directory / name).read_bytes()
    except OSError:
        return None
    asset = StaticAsset(name, hashlib.sha512(raw).hexdigest(), raw)
    asset.encoded["gzip"] = gzip.compress(raw, compresslevel=9, mtime=0)
    return asset


def _read_cached(asset: StaticAsset, cache_dir: Path) -> bool:
    """Take the cache's better encodings of ``asset``; True when every one this machine can make is there.

    An entry that is not exactly the file is left alone: the precompression process replaces it,
    and deleting it here could delete a good one that process has just put in its place.
    """
    complete = True
    for encoding, suffix in _ENCODINGS.items():
        if suffix not in compressors():
            continue
        try:
            body = (cache_dir / cache_name(asset.version, asset.name, suffix)).read_bytes()
        except OSError:
            body = None
        if body is not None and decode(body, suffix, len(asset.raw)) == asset.raw:
            asset.encoded[encoding] = body
        else:
            complete = False
    return complete


def _any_missing(js_dir: Path, cache_dir: Path) -> bool:
    """Whether some local BokehJS file lacks a cache entry (presence only: serving checks content)."""
    suffixes = compressors()
    for path in js_dir.glob("bokeh*.min.js"):
        version = hashlib.sha512(path.read_bytes()).hexdigest()
        if any(not (cache_dir / cache_name(version, path.name, s)).exists() for s in suffixes):
            return True
    return False


class LocalBokehJS:
    """Lazily hashed and compressed copies of the local BokehJS files (a few MB, once per server)."""

    def __init__(self, cache_dir: Path | None = None, js_dir: Path | None = None) -> None:
        self._cache_dir = cache_dir
        self._js_dir = js_dir if js_dir is not None else local_js_dir()
        self._assets: dict[str, StaticAsset | None] = {}
        self._lock = asyncio.Lock()
        self._precompressing: asyncio.Task[None] | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._again = False  # an asset found the cache incomplete while a run was under way
        self._failed = False  # a run failed: another would too (unwritable cache, ...)

    def start(self) -> None:
        """At server start, precompress in the background if the cache lacks an entry: it takes
        seconds of CPU, and a first pane opened after that gets the small form at once."""
        if self._js_dir is not None and self._cache_dir is not None:
            self._precompressing = asyncio.ensure_future(self._precompress(only_if_missing=True))

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

    async def local(self, names: tuple[str, ...]) -> list[StaticAsset]:
        """The local files of these names that exist, in that order."""
        assets = [await self._get(name) for name in names]
        return [asset for asset in assets if asset is not None]

    @property
    def precompressing(self) -> asyncio.Task[None] | None:
        """The latest background compression, done or under way (benchmarks and tests wait for it)."""
        return self._precompressing

    async def close(self) -> None:
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            await self._process.wait()
        if self._precompressing is not None:
            self._precompressing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._precompressing

    async def _get(self, name: str) -> StaticAsset | None:
        if name not in self._assets:
            async with self._lock:
                if name not in self._assets and self._js_dir is not None:
                    # Hashing and compressing megabytes would stall the event loop: use a thread.
                    asset = await asyncio.to_thread(_load, self._js_dir, name)
                    self._assets[name] = asset
                    if asset is not None and self._cache_dir is not None:
                        if not await asyncio.to_thread(_read_cached, asset, self._cache_dir):
                            self._want_precompression()
        return self._assets.get(name)

    def _want_precompression(self) -> None:
        if self._failed:
            return
        if self._precompressing is None or self._precompressing.done():
            self._precompressing = asyncio.ensure_future(self._precompress())
        else:
            # The run under way may already have passed this file (or found nothing missing).
            self._again = True

    async def _precompress(self, only_if_missing: bool = False) -> None:
        assert self._js_dir is not None and self._cache_dir is not None
        try:
            if not only_if_missing or await asyncio.to_thread(_any_missing, self._js_dir, self._cache_dir):
                await self._run_precompression()
            while self._again:
                self._again = False
                await self._run_precompression()
        except Exception as exc:  # gzip -9 is still served: worth a warning, not a failed request
            self._failed = True
            log.warning("dashdock: BokehJS precompression failed: %s", exc)

    async def _run_precompression(self) -> None:
        """Every local BokehJS file at once (a page asks for several), then take the results."""
        assert self._js_dir is not None and self._cache_dir is not None
        names = sorted(p.name for p in self._js_dir.glob("bokeh*.min.js"))
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dashdock.proxy.bokehjs.precompress",
            str(self._js_dir),
            str(self._cache_dir),
            *names,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, errors = await self._process.communicate()
        if self._process.returncode != 0:
            raise RuntimeError(errors.decode(errors="replace")[-500:])
        for asset in list(self._assets.values()):
            if asset is not None:
                await asyncio.to_thread(_read_cached, asset, self._cache_dir)
