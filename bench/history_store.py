"""Which embedded store for History: .venv/bin/python bench/history_store.py [tasks]

Writes the same synthetic run (default 1,000,000 TaskRecords: 200 groups, 8 workers x 4 threads,
1-3 spans each, about 26 minutes of recorded time) in batches of 1,000, as the recorder does, into:

- SQLite: dashdock's ``HistoryStore`` itself (WAL, one transaction per batch);
- DuckDB: one table, each batch inserted as an Arrow table (one transaction per batch);
- Parquet (pyarrow): one file per batch (what survives a crash without rewriting), and the same
  data compacted into files of 100,000 rows (what a periodic compaction would leave).

Then per store: the file size, a window query (every task overlapping a 10 s window in the middle,
read out as rows) and the overview (tasks finished per second over the whole run). Prints the
medians of a few rounds; figures, no assertions. DuckDB and Parquet need ``pip install duckdb
pyarrow``; missing ones are skipped.
"""

from __future__ import annotations

import collections
import importlib.util
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from _common import heading, table

from dashdock.history.model import Run, Span, TaskRecord
from dashdock.history.store import HistoryStore

TASKS = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
BATCH = 1_000
GROUPS = 200
WORKERS = 8
THREADS = 4
WINDOW = 10.0
ROUNDS = 5
T0 = 1_764_000_000.0


def synthetic_tasks(count: int, seed: int = 1) -> Iterator[TaskRecord]:
    """Tasks as 32 worker threads would finish them: 5-100 ms each, some with a transfer or a disk
    read first, in the order they finish."""
    rng = random.Random(seed)
    workers = [f"tcp://127.0.0.1:{40000 + w}" for w in range(WORKERS)]
    groups = [
        f"{rng.choice(['getitem', 'sum-partial', 'read-parquet', 'add', 'mean_chunk'])}-g{g}"
        for g in range(GROUPS)
    ]
    clocks = [T0 + rng.random() * 0.01 for _ in range(WORKERS * THREADS)]
    for n in range(count):
        lane = min(range(len(clocks)), key=clocks.__getitem__) if n % 64 == 0 else n % len(clocks)
        worker, thread = workers[lane // THREADS], 140_000_000_000_000 + lane % THREADS
        group = groups[rng.randrange(GROUPS)]
        start = clocks[lane] + rng.random() * 0.002
        spans = []
        t = start
        kind = rng.random()
        if kind < 0.25:
            spans.append(Span("transfer", t, t + 0.003, workers[rng.randrange(WORKERS)]))
            t += 0.003
        elif kind < 0.3:
            spans.append(Span("disk-read", t, t + 0.004))
            t += 0.004
        duration = 0.005 + rng.random() * 0.095
        spans.append(Span("compute", t, t + duration))
        stop = t + duration
        clocks[lane] = stop
        erred = rng.random() < 0.001
        yield TaskRecord(
            key=f"('{group}-{rng.getrandbits(64):016x}', {n % 5000})",
            group=group,
            worker=worker,
            thread=thread,
            start=start,
            stop=stop,
            status="error" if erred else "OK",
            spans=tuple(spans),
            nbytes=rng.randrange(100, 10_000_000),
            exception="ZeroDivisionError('division by zero')" if erred else None,
        )


def batches(count: int) -> Iterator[list[TaskRecord]]:
    batch: list[TaskRecord] = []
    for task in synthetic_tasks(count):
        batch.append(task)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def median_seconds(action: Callable[[], object], rounds: int = ROUNDS) -> tuple[float, object]:
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(
        p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file() and "lock" not in p.name
    )


def bench_sqlite(tmp: Path, middle: float) -> list[str]:
    path = tmp / "history.db"
    store = HistoryStore.open(path)
    run = Run(id="0123456789ab", source="s", name="bench", scheduler="tcp://127.0.0.1:1", start=T0)
    store.begin_run(run)
    started = time.perf_counter()
    for batch in batches(TASKS):
        store.add_tasks(run.id, batch)
    insert = time.perf_counter() - started
    store.end_run(run.id, middle * 2 - T0)
    window, rows = median_seconds(lambda: sum(1 for _ in store.tasks(run.id, middle, middle + WINDOW)))
    overview, rate = median_seconds(lambda: store.task_rate(run.id, 1.0))
    assert isinstance(rate, list) and sum(n for _, n in rate) == TASKS
    exports(store, run.id, middle)
    store.close()
    return [
        "SQLite (HistoryStore, WAL)",
        f"{insert:.1f}",
        f"{size_of(path) / 1e6:.0f}",
        f"{window * 1e3:.0f}",
        str(rows),
        f"{overview * 1e3:.0f}",
    ]


def exports(store: HistoryStore, run_id: str, middle: float) -> None:
    """What the exports cost from the chosen store: a trace and a Parquet file of (up to) 100,000
    tasks, and the HTML report of the 10 s window in the middle."""
    import io

    from dashdock.history.parquet import tasks_parquet
    from dashdock.history.report import html_report
    from dashdock.history.trace import chrome_trace

    *_, last = store.tasks(run_id, limit=min(TASKS, 100_000))
    rows = [["export", "tasks", "seconds", "MB"]]
    started = time.perf_counter()
    size = sum(len(chunk) for chunk in chrome_trace(store, run_id, None, last.start))
    rows.append(
        [
            "Chrome trace",
            f"{store_count(store, run_id, None, last.start):,}",
            f"{time.perf_counter() - started:.2f}",
            f"{size / 1e6:.1f}",
        ]
    )
    out = io.BytesIO()
    started = time.perf_counter()
    tasks_parquet(store, run_id, None, last.start, out)
    rows.append(
        [
            "Parquet",
            f"{store_count(store, run_id, None, last.start):,}",
            f"{time.perf_counter() - started:.2f}",
            f"{len(out.getvalue()) / 1e6:.1f}",
        ]
    )
    started = time.perf_counter()
    page = html_report(store, run_id, middle, middle + WINDOW)
    rows.append(
        [
            "HTML report (10 s window)",
            f"{store_count(store, run_id, middle, middle + WINDOW):,}",
            f"{time.perf_counter() - started:.2f}",
            f"{len(page) / 1e6:.1f}",
        ]
    )
    from dashdock.history.pages import PageAssets, history_page

    assets = PageAssets(bokeh_root="/dashdock/bokeh/", bokeh_version="bench", page_script="/page.js")
    for name, start, end in (("overview", None, None), ("task-stream", middle, middle + WINDOW)):
        # The first page a server makes imports Bokeh's plotting modules; every later one is warm.
        started = time.perf_counter()
        page = history_page(store, run_id, name, start, end, assets)
        first = time.perf_counter() - started
        warm, _ = median_seconds(lambda n=name, s=start, e=end: history_page(store, run_id, n, s, e, assets))
        rows.append(
            [
                f"History {name} page ({'whole run' if start is None else '10 s window'})",
                f"{store_count(store, run_id, start, end):,}",
                f"{warm:.2f} (first {first:.2f})",
                f"{len(page) / 1e6:.1f}",
            ]
        )
    heading("Exports and History pages from the SQLite store")
    table(rows)


def store_count(store: HistoryStore, run_id: str, start: float | None, end: float | None) -> int:
    return sum(1 for _ in store.tasks(run_id, start, end))


def arrow_batch(batch: list[TaskRecord]):
    import json

    import pyarrow as pa

    return pa.table(
        {
            "key": [t.key for t in batch],
            "group": [t.group for t in batch],
            "worker": [t.worker for t in batch],
            "thread": [t.thread for t in batch],
            "start": [t.start for t in batch],
            "stop": [t.stop for t in batch],
            "status": [t.status for t in batch],
            "nbytes": [t.nbytes for t in batch],
            "exception": pa.array([t.exception for t in batch], type=pa.string()),
            "spans": [json.dumps([[s.action, s.start, s.stop, s.source] for s in t.spans]) for t in batch],
        }
    )


def bench_duckdb(tmp: Path, middle: float) -> list[str]:
    import duckdb

    path = tmp / "history.duckdb"
    db = duckdb.connect(str(path))
    started = time.perf_counter()
    first = True
    for batch in batches(TASKS):
        frame = arrow_batch(batch)  # noqa: F841 (DuckDB reads the local by name)
        if first:
            db.execute("CREATE TABLE tasks AS SELECT * FROM frame")
            first = False
        else:
            db.execute("INSERT INTO tasks SELECT * FROM frame")
    db.execute("CHECKPOINT")
    insert = time.perf_counter() - started
    window, rows = median_seconds(
        lambda: len(
            db.execute(
                "SELECT * FROM tasks WHERE stop >= ? AND start <= ? ORDER BY start", [middle, middle + WINDOW]
            ).fetchall()
        )
    )
    overview, _ = median_seconds(
        lambda: db.execute(
            "SELECT CAST(floor((stop - ?) / 1.0) AS BIGINT) b, count(*) FROM tasks GROUP BY b ORDER BY b",
            [T0],
        ).fetchall()
    )
    db.close()
    return [
        "DuckDB (Arrow batches)",
        f"{insert:.1f}",
        f"{size_of(path) / 1e6:.0f}",
        f"{window * 1e3:.0f}",
        str(rows),
        f"{overview * 1e3:.0f}",
    ]


def bench_parquet(tmp: Path, middle: float, per_file: int) -> list[str]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    folder = tmp / f"parquet-{per_file}"
    folder.mkdir()
    started = time.perf_counter()
    pending: list[pa.Table] = []
    written = 0
    for batch in batches(TASKS):
        pending.append(arrow_batch(batch))
        if sum(t.num_rows for t in pending) >= per_file:
            pq.write_table(pa.concat_tables(pending), folder / f"{written:06d}.parquet")
            written += 1
            pending = []
    if pending:
        pq.write_table(pa.concat_tables(pending), folder / f"{written:06d}.parquet")
    insert = time.perf_counter() - started
    dataset = ds.dataset(folder, format="parquet")

    def window() -> int:
        found = dataset.to_table(filter=(pc.field("stop") >= middle) & (pc.field("start") <= middle + WINDOW))
        return len(found.sort_by("start").to_pylist())

    def overview() -> object:
        stops = dataset.to_table(columns=["stop"]).column("stop")
        buckets = pc.floor(pc.divide(pc.subtract(stops, T0), 1.0))
        return pc.value_counts(buckets)

    window_s, rows = median_seconds(window)
    overview_s, _ = median_seconds(overview)
    label = "Parquet, a file per batch" if per_file == BATCH else f"Parquet, files of {per_file:,} rows"
    return [
        label,
        f"{insert:.1f}",
        f"{size_of(folder) / 1e6:.0f}",
        f"{window_s * 1e3:.0f}",
        str(rows),
        f"{overview_s * 1e3:.0f}",
    ]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="dashdock-bench-history-"))
    try:
        last = collections.deque(synthetic_tasks(TASKS), maxlen=1)[0]
        middle = (T0 + last.stop) / 2
        heading(f"History store: {TASKS:,} tasks in batches of {BATCH:,}, run of {last.stop - T0:.0f} s")
        started = time.perf_counter()
        for _ in batches(TASKS):
            pass
        made = time.perf_counter() - started
        rows = [["store", "insert s", "MB", "10 s window ms", "tasks", "overview ms"]]
        rows.append(bench_sqlite(tmp, middle))
        heading("Stores compared")
        if importlib.util.find_spec("duckdb"):
            rows.append(bench_duckdb(tmp, middle))
        else:
            print("  duckdb: not installed (pip install duckdb)")
        if importlib.util.find_spec("pyarrow"):
            rows.append(bench_parquet(tmp, middle, BATCH))
            rows.append(bench_parquet(tmp, middle, 100_000))
        else:
            print("  pyarrow: not installed (pip install pyarrow)")
        table(rows)
        print(f"  window and overview: medians of {ROUNDS}; window rows read out as Python objects")
        print(f"  insert includes making the records in Python: {made:.1f} s of it")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
