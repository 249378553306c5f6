"""Each Dask collection computed in a cell: no warning caused by dashdock, and exact counts.

dask.dataframe (query planning) warns about any annotation set when a collection is made, and
every cell runs under dashdock's tag (dashdock/kernel/quiet_annotations.py). A real kernel started
through the server, a real cluster in it; what a cell printed is what the user would see.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _kernels import Kernel
from test_cell_accounting import NEW_CLIENT, strips

from dashdock.kernel.protocol import CELL_MIME_TYPE

pytestmark = pytest.mark.slow  # a real kernel and cluster

# Each computes one collection, and prints how many tasks the scheduler ran for it.
COUNTED = """
from distributed import get_task_stream
with get_task_stream(client) as stream:
    result = {expression}
print("ran", len(stream.data))
"""

COLLECTIONS = {
    "dataframe": (
        "import dask.dataframe as dd, pandas as pd",
        "dd.from_pandas(pd.DataFrame({'a': range(1000), 'b': range(1000)}), npartitions=7)"
        ".groupby('b').a.sum().compute()",
    ),
    "array": ("import dask.array as da", "da.ones((400, 400), chunks=100).sum().compute()"),
    "bag": ("import dask.bag as db", "db.from_sequence(range(100), npartitions=5).map(inc).sum().compute()"),
    "delayed": ("import dask", "dask.compute([dask.delayed(inc)(i) for i in range(9)])"),
}


async def test_no_collection_shows_a_warning_caused_by_dashdock_and_each_counts_exactly(
    jp_serverapp: Any,
) -> None:
    async with Kernel(jp_serverapp) as kernel:
        await kernel.run(NEW_CLIENT)
        printed: dict[str, str] = {}
        for name, (imports, expression) in COLLECTIONS.items():
            await kernel.run(imports)
            printed[name] = await kernel.run(COUNTED.format(expression=expression))
        # The user's own annotation still gets dask.dataframe's warning, in this cell and a later one.
        own = "with dask.annotate(retries=2):\n    frame = dd.from_pandas(pd.DataFrame({'a': [1]}), 1)"
        first_own, second_own = await kernel.run(own), await kernel.run(own)
        quiet_dataframe = await kernel.run(
            "frame = dd.from_pandas(pd.DataFrame({'a': [1]}), npartitions=1)\nprint(frame.a.sum().compute())"
        )
        shown = strips(kernel)

    for name, output in printed.items():
        assert "annotation" not in output.lower() and "Warning" not in output, (name, output)
    assert "annotation" not in quiet_dataframe.lower(), quiet_dataframe
    for output in (first_own, second_own):  # it names every annotation in force, the user's among them
        assert "Dask annotations {" in output and "'retries': 2} detected" in output, output
    reports = [bundle[CELL_MIME_TYPE]["report"] for bundle in shown]
    ran = [int(output.split("ran ")[1].split()[0]) for output in printed.values()]
    # One strip per computing cell, in order, each counting exactly the tasks its collection ran.
    assert [report["tasks"] for report in reports[: len(ran)]] == ran, json.dumps(reports)[:2000]
    assert all(report["done"] == report["tasks"] for report in reports[: len(ran)])
    assert all(count > 1 for count in ran)
