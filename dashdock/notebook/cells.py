"""What a kernel's cells computed, as the kernel last reported it, for the Lab's cell strips.

A kernel writes the latest report of its recent computing cells to ``<kernel id>.cells`` in the
clients directory (``dashdock/kernel/cells.py``). The file is the kernel's input to the server,
not trusted: it is read within a size bound and only a well-formed entry is answered.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from dashdock.errors import Invalid, NotFound
from dashdock.ids import is_kernel_id
from dashdock.kernel.protocol import MAX_CELLS_FILE_BYTES, cells_file_name

_CELL_ID = re.compile(r"^[0-9a-f]{32}$")
_NUMBERS = ("tasks", "done", "erred", "cancelled", "wall", "produced_bytes", "moved_bytes", "memory_peak")


def read_cell(directory: Path, kernel_id: str, cell_id: str) -> dict[str, Any]:
    """The kernel's latest report of one cell: ``{"label", "report"}``. Runs in a thread."""
    if not is_kernel_id(kernel_id):
        raise Invalid("That is not a kernel id.")
    if not _CELL_ID.match(cell_id):
        raise Invalid("That is not a cell id.")
    path = directory / cells_file_name(kernel_id)
    try:
        with open(path, "rb") as file:
            body = file.read(MAX_CELLS_FILE_BYTES + 1)
    except OSError:
        raise NotFound("This kernel has reported no computing cells (it may have stopped).") from None
    try:
        if len(body) > MAX_CELLS_FILE_BYTES:
            raise ValueError("too large")
        entry = json.loads(body)["cells"][cell_id]
    except (ValueError, KeyError, TypeError):
        raise NotFound("The kernel has no report of this cell any more.") from None
    if not _well_formed(entry):
        raise NotFound("The kernel's report of this cell is damaged.")
    return {"label": entry["label"], "report": entry["report"]}


def _well_formed(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("label"), str):
        return False
    report = entry.get("report")
    if not isinstance(report, dict) or not isinstance(report.get("settled"), bool):
        return False
    return all(
        isinstance(report.get(name), (int, float)) and not isinstance(report.get(name), bool)
        for name in _NUMBERS
    )
