"""Compress BokehJS harder than a server can afford per request.

Run as ``python -m dashdock.proxy.bokehjs.precompress``.

Started by the server, at the lowest priority, once per bokeh version: zopfli
writes gzip that every browser reads and that is about 5 % smaller than ``gzip -9`` (56 KB per plot
page, which is what brings a cold pane under 1.2 MB), and brotli at its highest quality serves
browsers that offer it (Chromium does over HTTPS, as on JupyterHub). The results are cached on disk
under names that carry the sha512 of the file they compress.

Usage: python -m dashdock.proxy.bokehjs.precompress SOURCE_DIR CACHE_DIR NAME [NAME ...]
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

from dashdock.kernel.files import write_atomically

# One zopfli iteration gets 90 % of what fifteen get, in a fifth of the time.
ZOPFLI_ITERATIONS = 1
BROTLI_QUALITY = 11
# Temporary files older than this were left by a run that was killed (the server stopped).
_ABANDONED_AFTER = 3600.0


def cache_name(version: str, name: str, encoding: str) -> str:
    """``{sha512[:40]}.{file name}.{gz|br}``: a new bokeh never finds an old file's entry."""
    return f"{version[:40]}.{name}.{encoding}"


def compressors() -> dict[str, Callable[[bytes], bytes]]:
    """The encodings available here (each library is optional: without it, gzip -9 is served)."""
    found: dict[str, Callable[[bytes], bytes]] = {}
    try:
        import zopfli.gzip

        found["gz"] = lambda raw: zopfli.gzip.compress(raw, numiterations=ZOPFLI_ITERATIONS)
    except ImportError:
        pass
    try:
        import brotli

        found["br"] = lambda raw: brotli.compress(raw, quality=BROTLI_QUALITY)
    except ImportError:
        pass
    return found


def decode(body: bytes, encoding: str, limit: int) -> bytes | None:
    """``body`` decoded, or None unless it is exactly one complete stream of at most ``limit`` bytes.

    The limit matters because a cache directory may be shared or tampered with: a small file can
    decode to gigabytes, and deciding whether an entry is the file must not cost the server that.
    """
    try:
        if encoding == "gz":
            inflate = zlib.decompressobj(wbits=31)  # one gzip member, its CRC and length checked
            out = inflate.decompress(body, limit + 1)
            complete = inflate.eof and not inflate.unused_data
        elif encoding == "br":
            import brotli

            decompressor = brotli.Decompressor()
            # Stops growing its output past the limit (overshooting by at most about as much again).
            out = decompressor.process(body, output_buffer_limit=limit + 1)
            complete = decompressor.is_finished()
        else:
            return None
    except Exception:  # zlib.error, brotli.error, or brotli missing: not an entry we can vouch for
        return None
    return out if complete and len(out) <= limit else None


def precompress(source_dir: Path, cache_dir: Path, names: list[str]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    _remove_abandoned(cache_dir)
    for name in names:
        raw = (source_dir / name).read_bytes()
        version = hashlib.sha512(raw).hexdigest()
        for encoding, compress in compressors().items():
            target = cache_dir / cache_name(version, name, encoding)
            with contextlib.suppress(OSError):
                if decode(target.read_bytes(), encoding, len(raw)) == raw:
                    continue  # a damaged or foreign entry is made again below
            write_atomically(target, compress(raw), mode=0o644)  # public JavaScript


def _remove_abandoned(cache_dir: Path) -> None:
    cutoff = time.time() - _ABANDONED_AFTER
    for temporary in cache_dir.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if temporary.stat().st_mtime < cutoff:
                temporary.unlink()


def main() -> None:
    os.nice(19)  # the notebook server and the user's work come first
    source_dir, cache_dir, *names = sys.argv[1:]
    precompress(Path(source_dir), Path(cache_dir), names)


if __name__ == "__main__":
    main()
