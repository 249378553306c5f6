"""dask.dataframe's warning about dashdock's own per-cell annotations, kept out of the user's cells.

dask.dataframe (query planning) warns, once per process, when a collection is made while any
annotation is set: "Dask annotations {...} detected. Annotations will be ignored when using
query-planning." Every cell runs under dashdock's ``dashdock_cell`` annotation and a span named
after the cell (cells.py), so the first dataframe cell of every kernel would show that warning,
naming dashdock's internals. The warning is not true of them: the distributed client merges the
annotations in force when it submits into the whole graph, so each cell's dataframe tasks carry
its tag (tests/notebook/test_cell_collections.py counts them).

Only a warning whose annotations are dashdock's alone (its tag, and spans, which Dask merges the
same way) is ignored; one naming an annotation of the user's still shows. dask.dataframe turns
its warning off for good once it has warned, ignored or not, so a cell that began with it on
turns it back on: the user's own annotations still get their warning in a later cell.
"""

from __future__ import annotations

import re
import sys
import warnings

from .ledger import ANNOTATION

_TEXTS = r"\((?:'[^'\\]*'(?:, )?)*,?\)"
DASHDOCK_ONLY = re.compile(
    rf"Dask annotations \{{'{ANNOTATION}': '[^'\\]*'"
    rf"(?:, 'span': \{{'name': {_TEXTS}, 'ids': {_TEXTS}\}})?\}} detected\."
)
_COLLECTION_MODULE = "dask.dataframe.dask_expr._collection"
_FLAG = "_WARN_ANNOTATIONS"


def ignore_dashdock_annotation_warning() -> None:
    """Ignore dask.dataframe's annotation warning when it names only dashdock's annotations."""
    warnings.filterwarnings("ignore", message=DASHDOCK_ONLY.pattern, category=UserWarning)


def warning_armed() -> bool | None:
    """Whether dask.dataframe would still warn about annotations (None: it is not imported)."""
    module = sys.modules.get(_COLLECTION_MODULE)
    flag = getattr(module, _FLAG, None)
    return flag if isinstance(flag, bool) else None


def rearm_warning() -> None:
    """Let dask.dataframe warn about annotations again (after it warned about dashdock's)."""
    module = sys.modules.get(_COLLECTION_MODULE)
    if module is not None and isinstance(getattr(module, _FLAG, None), bool):
        setattr(module, _FLAG, True)
