"""Per-cell accounting: each cell that computes with Dask says what it computed, exactly.

Real kernels started through the server (so they get the client preload), a real Dask cluster in
the kernel, and the scheduler's ledger pickled to it as it is in use.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _kernels import Kernel
from _support import Jupyter

from dashdock.kernel.protocol import (
    CELL_MIME_TYPE,
)

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

NEW_CLIENT = """
from distributed import Client, LocalCluster
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                       host="127.0.0.1", dashboard_address="127.0.0.1:0")
client = Client(cluster)
def inc(x):
    return x + 1
"""


def strips(kernel: Kernel) -> list[dict[str, Any]]:
    """Every cell strip the kernel showed, at its latest update, in the order they appeared."""
    order = [bundle[CELL_MIME_TYPE]["cell_id"] for bundle in kernel.displayed if CELL_MIME_TYPE in bundle]
    return [kernel.by_display_id[cell_id] for cell_id in order]


async def settled_report(jupyter: Jupyter, kernel: Kernel, cell_id: str) -> dict[str, Any]:
    """The cell's report as the Lab reads it after the cell ended, once its work is over."""
    for _ in range(120):
        status, body = await jupyter.api("GET", f"kernels/{kernel.id}/cells/{cell_id}")
        if status == 200 and body["report"]["settled"]:
            return body["report"]
        await asyncio.sleep(0.25)
    raise AssertionError(f"cell {cell_id} never settled: {status} {body}")


async def test_each_cell_counts_its_own_tasks_and_a_cell_without_dask_work_shows_nothing(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT)
        assert strips(kernel) == []  # the cell that made the client is not counted
        await kernel.run("first = client.gather(client.map(inc, range(1234)))")
        await kernel.run("second = client.gather(client.map(inc, range(10_000, 10_567)))")
        await kernel.run("plain = sum(range(100))")
        shown = strips(kernel)
        # The scheduler's task stream, each task as (first start, last stop): what the history records.
        spans = json.loads(
            await kernel.run(
                "import json\n"
                "print(json.dumps([(min(s['start'] for s in t['startstops']), "
                "max(s['stop'] for s in t['startstops'])) for t in client.get_task_stream()]))"
            )
        )

    # Dask's spans would put the second map into the first cell's span (same task group, "inc").
    assert len(shown) == 2, shown
    first, second = (bundle[CELL_MIME_TYPE]["report"] for bundle in shown)
    assert (first["tasks"], first["done"], first["settled"]) == (1234, 1234, True)
    assert (second["tasks"], second["done"], second["settled"]) == (567, 567, True)
    assert second["groups"] == [["inc", 567, 567, 0]]
    first_label, second_label = (bundle[CELL_MIME_TYPE]["label"] for bundle in shown)
    assert int(second_label.strip("[]")) == int(first_label.strip("[]")) + 1  # In [n] of each cell
    assert shown[0]["text/plain"].startswith(f"Dask, cell {first_label}: 1,234 tasks in ")
    assert shown[1]["text/plain"].startswith(f"Dask, cell {second_label}: 567 tasks in ")
    assert "Groups: inc 567/567" in shown[1]["text/plain"]
    assert second["seconds"]["compute"] > 0 and second["produced_bytes"] > 0
    # Where the second cell's time went: its one group, on the two worker threads that ran it.
    assert [row[0] for row in second["group_seconds"]] == ["inc"]
    assert second["group_seconds"][0][1] == pytest.approx(second["seconds"]["compute"])
    assert second["threads"] == 2
    assert "Thread time, summed over 2 threads: compute " in shown[1]["text/plain"]
    # Each cell's task window holds exactly its own tasks, on the clock the task stream uses.
    for report, tasks in ((first, 1234), (second, 567)):
        low, high = report["ran"]
        assert sum(low <= start and stop <= high for start, stop in spans) == tasks


async def test_a_future_that_finishes_after_its_cell_is_counted_for_that_cell(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT + "import time")
        await kernel.run("slow = client.submit(time.sleep, 4, pure=False)")
        quick = "quick = client.gather(client.map(inc, range(20_000, 20_050)))\nprint(slow.status)"
        status = await kernel.run(quick)
        first, second = strips(kernel)
        first_id = first[CELL_MIME_TYPE]["cell_id"]
        late = await settled_report(jupyter, kernel, first_id)

    assert status.strip() == "pending"  # the first cell's task outlived the second cell
    assert first[CELL_MIME_TYPE]["report"]["tasks"] == 1
    assert (late["tasks"], late["done"], late["settled"]) == (1, 1, True)
    assert second[CELL_MIME_TYPE]["report"]["tasks"] == 50  # not 51: the slow task is the first cell's


async def test_a_failing_task_is_one_error_with_its_exception_and_traceback(
    jupyter: Jupyter, jp_serverapp: Any
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT)
        await kernel.run(
            "def boom(x):\n    return x / 0\nresults = client.gather(client.map(boom, [1]), errors='skip')"
        )
        (strip,) = strips(kernel)

    report = strip[CELL_MIME_TYPE]["report"]
    assert (report["tasks"], report["erred"], report["settled"]) == (1, 1, True)
    assert "ZeroDivisionError" in report["error"]["exception"]
    assert report["error"]["key"].startswith("boom-")
    assert "in boom" in report["error"]["traceback"]
    assert "Errors: 1 task erred: ZeroDivisionError" in strip["text/plain"]
    assert "ZeroDivisionError" in strip["text/html"] and "<script" not in strip["text/html"]


async def test_a_notebook_can_turn_its_strips_off(jp_serverapp: Any) -> None:
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT)
        assert await kernel.run("import dashdock\ndashdock.cell_strips(False)") == ""
        await kernel.run("client.gather(client.map(inc, range(30_000, 30_010)))")
        off = strips(kernel)
        await kernel.run("dashdock.cell_strips(True)")
        await kernel.run("client.gather(client.map(inc, range(40_000, 40_010)))")
        on = strips(kernel)
    assert off == []
    assert [bundle[CELL_MIME_TYPE]["report"]["tasks"] for bundle in on] == [10]


def cells_file(jp_serverapp: Any, kernel_id: str) -> Path:
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    return Path(app.kernel_clients.directory) / f"{kernel_id}.cells"


CELL = "0123456789abcdef0123456789abcdef"
COUNTS = ("tasks", "done", "erred", "cancelled", "produced_bytes", "moved_bytes", "memory_peak")
REPORT = {"settled": True, **dict.fromkeys(COUNTS, 1), "wall": 0.5}
DAMAGED = {"cells": {CELL: {"label": "[1]", "report": {**REPORT, "tasks": "many"}}}}


@pytest.mark.parametrize(
    ("kernel_id", "cell_id", "content", "status", "message"),
    [
        ("k-1", CELL, {"cells": {CELL: {"label": "[1]", "report": REPORT}}}, 200, None),
        ("k.1", CELL, None, 400, "not a kernel id"),
        ("k-1", "ZZZ", None, 400, "not a cell id"),
        ("k-2", CELL, None, 404, "reported no computing cells"),
        ("k-1", CELL, b"{not json", 404, "no report of this cell"),
        ("k-1", CELL, DAMAGED, 404, "damaged"),
        ("k-1", CELL, b"[" * 2_200_000, 404, "no report of this cell"),
    ],
)
async def test_the_cells_api_answers_well_formed_reports_only(
    jupyter: Jupyter,
    jp_serverapp: Any,
    kernel_id: str,
    cell_id: str,
    content: Any,
    status: int,
    message: str | None,
) -> None:
    if content is not None:
        body = content if isinstance(content, bytes) else json.dumps(content).encode()
        cells_file(jp_serverapp, "k-1").write_bytes(body)
    got, answer = await jupyter.api("GET", f"kernels/{kernel_id}/cells/{cell_id}")
    assert got == status, answer
    if message is None:
        assert answer == {"label": "[1]", "report": REPORT}
    else:
        assert message in answer["message"]
    unauthenticated, _ = await jupyter.api("GET", f"kernels/k-1/cells/{CELL}", auth=False)
    assert unauthenticated == 403
