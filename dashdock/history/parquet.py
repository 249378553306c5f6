"""The task table of a run (or a window of it) as a Parquet file, for pandas, Polars or DuckDB.

One row per task; times are Unix seconds (float64) as everywhere in History, and the time a task
spent computing, transferring its inputs and on disk is summed from its spans. Rows are written
in row groups of ``row_group`` tasks, so memory stays bounded whatever the run's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, BinaryIO

from dashdock.errors import NotFound
from dashdock.history.model import TaskRecord
from dashdock.history.store import HistoryStore

if TYPE_CHECKING:
    import pyarrow as pa

ROW_GROUP = 64 * 1024


def tasks_parquet(
    store: HistoryStore,
    run_id: str,
    start: float | None,
    end: float | None,
    out: BinaryIO,
    row_group: int = ROW_GROUP,
) -> None:
    """Write the tasks overlapping [start, end] (the whole run when left out) to ``out``."""
    # pyarrow is imported here: only an export needs it, and it takes a while to import.
    import pyarrow as pa
    import pyarrow.parquet as pq

    if store.run(run_id) is None:
        raise NotFound(f"No recorded run {run_id}.")
    schema = pa.schema(
        [
            ("key", pa.string()),
            ("group", pa.string()),
            ("worker", pa.string()),
            ("thread", pa.int64()),
            ("start", pa.float64()),
            ("stop", pa.float64()),
            ("status", pa.string()),
            ("nbytes", pa.int64()),
            ("compute_seconds", pa.float64()),
            ("transfer_seconds", pa.float64()),
            ("disk_seconds", pa.float64()),
            ("exception", pa.string()),
        ]
    )
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        batch: list[TaskRecord] = []
        for task in store.tasks(run_id, start, end):
            batch.append(task)
            if len(batch) >= row_group:
                writer.write_table(_table(schema, batch))
                batch = []
        if batch:  # with no rows at all, the file still has the schema
            writer.write_table(_table(schema, batch))


def _table(schema: pa.Schema, tasks: Sequence[TaskRecord]) -> pa.Table:
    import pyarrow as pa

    seconds: dict[str, list[float]] = {"compute": [], "transfer": [], "disk": []}
    for task in tasks:
        totals = dict.fromkeys(seconds, 0.0)
        for span in task.spans:
            kind = "disk" if span.action.startswith("disk") else span.action
            if kind in totals:
                totals[kind] += span.stop - span.start
        for kind, total in totals.items():
            seconds[kind].append(total)
    columns = {
        "key": [t.key for t in tasks],
        "group": [t.group for t in tasks],
        "worker": [t.worker for t in tasks],
        "thread": [t.thread for t in tasks],
        "start": [t.start for t in tasks],
        "stop": [t.stop for t in tasks],
        "status": [t.status for t in tasks],
        "nbytes": [t.nbytes for t in tasks],
        "compute_seconds": seconds["compute"],
        "transfer_seconds": seconds["transfer"],
        "disk_seconds": seconds["disk"],
        "exception": [t.exception for t in tasks],
    }
    return pa.Table.from_pydict(columns, schema=schema)
