"""What the plots dashdock draws cost a scheduler: its handler's time per read, part by part,
against what Dask's own page of the same plot costs it per second.

A drawn plot's panes cost the scheduler one read a second by dashdock's recorder
(``dashdock_plot_state``, kernel/plot_state.py), whatever the number of panes; the costlier parts
are read only while a page of their plot is open. Each of Dask's pages is a Bokeh session whose
redraw runs in the scheduler's event loop every 100-500 ms, per page.

Set-up: a real ``LocalCluster`` (2 worker processes of 1 thread; its scheduler in this process),
``HELD`` small results kept in memory across the workers, in two spans tagged "alpha" and
"beta". Timed in the scheduler's event loop (``Client.run_on_scheduler``), the median of
``REPEATS``:
  ours    the handler's answer with nothing costlier, and with each part (the Graph's at this
          size sends the count only; ``graph, 4,000 held`` is a second state where it sends
          every task), then msgpack's encoding of the answer, as the handler's reply is sent;
  Dask's  one redraw of Dask's page of that plot (its periodic callback, on the scheduler) and
          its period: what one open page costs the scheduler per second.

Printed: per part, ms per read, the answer's KiB, ms per second at one read a second; Dask's ms
per redraw, its period, and ms per second for one page and for 24. The state does not change
between repeats, so a page of Dask's that redraws only what changed (most do) does little here:
its figures are a floor, and under load it costs more. Figures only, nothing asserted.

    .venv/bin/python bench/plot_state_cost.py [held] [repeats]   (30000 and 20; about a minute)
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import Any

from _common import heading, table

HELD = 30_000
REPEATS = 20
SMALL_GRAPH = 4_000
# Part -> (the handler's keyword arguments, the plot whose page reads it).
PARTS: dict[str, tuple[dict[str, Any], str]] = {
    "base (every drawn plot)": ({}, "/individual-progress"),
    "memory_by_key": ({"parts": ["memory_by_key"]}, "/individual-memory-by-key"),
    "task_groups": ({"parts": ["task_groups"]}, "/individual-groups"),
    "group_timing": ({"parts": ["group_timing"]}, "/individual-group-progress"),
    "graph": ({"graph_items": 5000}, "/individual-graph"),
    "fine_metrics": ({"fine_metrics_tags": []}, "/individual-fine-performance-metrics"),
    "fine_metrics, a tag selected": ({"fine_metrics_tags": [["alpha"]]}, ""),
}


def keep(x: int) -> bytes:
    return x.to_bytes(8, "little")


def ours(asked: dict[str, Any], repeats: int, dask_scheduler: Any = None) -> tuple[float, int]:
    """Median ms of the handler's answer and its encoding; the encoded bytes."""
    import msgpack

    from dashdock.kernel import plot_state

    plot_state.snapshot(dask_scheduler, **asked)  # a first read (GroupTiming starts with it)
    times, size = [], 0
    for _ in range(repeats):
        begin = time.perf_counter()
        size = len(msgpack.dumps(plot_state.snapshot(dask_scheduler, **asked)))
        times.append(time.perf_counter() - begin)
    return 1000 * statistics.median(times), size


def dasks(path: str, repeats: int, dask_scheduler: Any = None) -> tuple[float, int]:
    """Median ms of one redraw of Dask's page of ``path``, and its period in ms."""
    from bokeh.document import Document
    from distributed.dashboard.scheduler import applications

    doc = Document()
    applications[path](dask_scheduler, {"prefix": "/"}, doc)
    (callback,) = list(doc.session_callbacks)[:1]
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        callback.callback()
        times.append(time.perf_counter() - begin)
    return 1000 * statistics.median(times), int(callback.period)


def measure(
    client: Any, label_suffix: str, parts: dict[str, tuple[dict[str, Any], str]], repeats: int
) -> list[list[str]]:
    rows = []
    for part, (asked, path) in parts.items():
        ms, size = client.run_on_scheduler(ours, asked, repeats)
        row = [part + label_suffix, f"{ms:.2f}", f"{size / 1024:.1f}", f"{ms:.2f}"]
        if path:
            redraw, period = client.run_on_scheduler(dasks, path, repeats)
            per_second = redraw * 1000 / period
            row += [f"{redraw:.2f}", str(period), f"{per_second:.1f}", f"{24 * per_second:.0f}"]
        else:
            row += ["-"] * 4
        rows.append(row)
    return rows


def main(held: int, repeats: int) -> None:
    from distributed import Client, LocalCluster, span, wait

    heading(f"What a read for the drawn plots costs the scheduler: {held:,} results held, {repeats} repeats")
    header = [
        "part",
        "ours ms/read",
        "answer KiB",
        "ours ms/s",
        "Dask ms/redraw",
        "Dask period ms",
        "Dask ms/s, 1 page",
        "24 pages",
    ]
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        with span("alpha"):
            first = client.map(keep, range(held // 2))
        with span("beta"):
            second = client.map(keep, range(held // 2, held))
        wait(first + second)
        rows = [header, *measure(client, "", PARTS, repeats)]
        del first, second
        small = client.map(keep, range(held, held + SMALL_GRAPH))
        wait(small)
        while len(cluster.scheduler.tasks) > SMALL_GRAPH:  # the released ones forgotten
            time.sleep(0.05)
        rows += measure(client, f", {SMALL_GRAPH:,} held", {"graph": PARTS["graph"]}, repeats)
        table(rows)
        del small


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else HELD,
        int(sys.argv[2]) if len(sys.argv) > 2 else REPEATS,
    )
