"""Files replaced whole, safely in a directory others can write to: written once, here.

Readers see the old file or the complete new one, never half of it. The temporary file is created
exclusively under a unique name and written through its descriptor, so nothing planted beside
the target (a symlink, a file of another user) can redirect the write. It lives with what runs
in kernels (which may load this package by path, without the rest of dashdock: see
``dashdock/_preload``), and the server imports it from here.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def replacing(target: Path, mode: int = 0o600) -> Iterator[tuple[BinaryIO, Path]]:
    """A new file beside ``target``, open for writing (and its path, for tools that open it by
    name), that replaces ``target`` when the block ends without an error and is removed if it raises."""
    descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".new")
    temporary = Path(name)
    try:
        with os.fdopen(descriptor, "wb") as file:
            os.fchmod(file.fileno(), mode)
            yield file, temporary
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_atomically(target: Path, body: bytes, mode: int = 0o600) -> None:
    """Replace ``target`` with ``body``."""
    with replacing(target, mode) as (file, _):
        file.write(body)
