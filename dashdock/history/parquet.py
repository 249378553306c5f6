"""The task table of a run (or a window of it) as a Parquet file, for pandas, Polars or DuckDB.

One row per task; times are Unix seconds (float64) as everywhere in History, and the time a task
spent computing, transferring its inputs and on disk is summed from its spans. Rows are written
in row groups of ``row_group`` tasks, so memory stays bounded whatever the run's size.

A row group is gathered as columns of plain values (strings and numbers, which Python's cycle
collector does not track), never as the tasks themselves: 20,000 tasks held at once are 60,000
tracked objects (task, spans, span) that live long enough to reach the oldest generation, and so
made the collector run a full collection, which holds the GIL and so stalls the server's event
loop for 150-200 ms, nearly every time such a run was exported.
"""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

from dashdock.errors import NotFound
from dashdock.history.model import TaskRecord
from dashdock.history.store import HistoryStore

if TYPE_CHECKING:
    import pyarrow as pa

ROW_GROUP = 64 * 1024
# A row group is also written once its tasks' texts (key, group, worker, exception) reach this many
# characters: each is clipped where it is stored (model.py), so memory stays bounded in bytes too.
ROW_GROUP_TEXT = 8 * 1024 * 1024
# The kinds of span whose seconds are summed into a column each ("disk" sums disk-read and disk-write).
_SUMMED = ("compute", "transfer", "disk")


def tasks_parquet(
    store: HistoryStore,
    run_id: str,
    start: float | None,
    end: float | None,
    out: IO[bytes],
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
        rows = _Rows(schema.names)
        for task in store.tasks(run_id, start, end):
            rows.add(task)
            if rows.count >= row_group or rows.text >= ROW_GROUP_TEXT:
                writer.write_table(rows.table(schema))
        if rows.count:  # with no rows at all, the file still has the schema
            writer.write_table(rows.table(schema))


class _Rows:
    """One row group's columns, each a list of plain values; emptied as it becomes a table."""

    def __init__(self, names: list[str]) -> None:
        self._names = names
        self._columns: dict[str, list[object]] = {name: [] for name in names}
        self.count = 0
        self.text = 0  # characters of its texts

    def add(self, task: TaskRecord) -> None:
        seconds = dict.fromkeys(_SUMMED, 0.0)
        for span in task.spans:
            kind = "disk" if span.action.startswith("disk") else span.action
            if kind in seconds:
                seconds[kind] += span.stop - span.start
        values = {
            "key": task.key,
            "group": task.group,
            "worker": task.worker,
            "thread": task.thread,
            "start": task.start,
            "stop": task.stop,
            "status": task.status,
            "nbytes": task.nbytes,
            "compute_seconds": seconds["compute"],
            "transfer_seconds": seconds["transfer"],
            "disk_seconds": seconds["disk"],
            "exception": task.exception,
        }
        for name, column in self._columns.items():
            column.append(values[name])
        self.count += 1
        self.text += len(task.key) + len(task.group) + len(task.worker) + len(task.exception or "")

    def table(self, schema: pa.Schema) -> pa.Table:
        import pyarrow as pa

        table = pa.Table.from_pydict(self._columns, schema=schema)
        self._columns = {name: [] for name in self._names}
        self.count = self.text = 0
        return table


# Custom metric samples are a few per second per line: a million fits a row group of this size.
METRIC_ROWS = 1_000_000


def metrics_parquet(
    store: HistoryStore, run_id: str, start: float | None, end: float | None, out: IO[bytes]
) -> None:
    """Write the custom metric samples (``dashdock.metric``) in [start, end] to ``out``: one row per
    sample (time, metric, line, value), at most ``METRIC_ROWS`` (the newest are left out)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if store.run(run_id) is None:
        raise NotFound(f"No recorded run {run_id}.")
    samples = store.metric_samples(run_id, start, end, limit=METRIC_ROWS)
    table = pa.table(
        {
            "time": pa.array([s.time for s in samples], pa.float64()),
            "metric": pa.array([s.metric for s in samples], pa.string()),
            "line": pa.array([s.line for s in samples], pa.string()),
            "value": pa.array([s.value for s in samples], pa.float64()),
        }
    )
    pq.write_table(table, out)
