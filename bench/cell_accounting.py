"""What per-cell strips cost a notebook: .venv/bin/python bench/cell_accounting.py [TASKS] [ROUNDS]

One IPython kernel (jupyter_client, with the environment a dashdock server gives its kernels) and
a LocalCluster of 2 worker processes, 1 thread each. Interleaved in the same kernel, strips on
(``dashdock.cell_strips(True)``) and off:
  (a) a cell mapping a tiny function over TASKS new items (default 100,000) and gathering them,
      timed from the execute request to the kernel's idle (what the user waits for);
  (b) 200 cells without Dask work (``x = 1``) in a kernel that has a client: time per cell.
Prints medians and the ratio on / off. Figures, no assertions. Issue target: (a) at most 3 %
slower, (b) nothing measurable.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashdock.kernel.protocol import CLIENTS_DIR_VARIABLE, PRELOAD_VARIABLE  # noqa: E402

PRELOAD = ROOT / "dashdock" / "_preload" / "dashdock_preload.py"
SETUP = """
from distributed import Client, LocalCluster
import dashdock
cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address="127.0.0.1:0")
client = Client(cluster)
def inc(x):
    return x + 1
"""
EMPTY_CELLS = 200


def run(kernel: Any, code: str) -> float:
    """Seconds from the execute request to idle; raises on an error in the cell."""
    start = time.perf_counter()
    reply = kernel.execute_interactive(code, timeout=3600, output_hook=lambda message: None)
    elapsed = time.perf_counter() - start
    if reply["content"]["status"] != "ok":
        raise RuntimeError(f"{code!r} failed: {reply['content']}")
    return elapsed


def main() -> None:
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    os.environ[PRELOAD_VARIABLE] = repr([str(PRELOAD)])
    os.environ[CLIENTS_DIR_VARIABLE] = tempfile.mkdtemp(prefix="dashdock-bench-")
    manager, kernel = start_new_kernel(kernel_name="python3")
    try:
        run(kernel, SETUP)
        run(kernel, "client.gather(client.map(inc, range(-1000, 0)))")  # warm the workers
        big: dict[bool, list[float]] = {True: [], False: []}
        empty: dict[bool, list[float]] = {True: [], False: []}
        offset = 0
        for round_number in range(rounds):
            for strips in (True, False) if round_number % 2 == 0 else (False, True):
                run(kernel, f"dashdock.cell_strips({strips})")
                offset += tasks
                code = f"_ = client.gather(client.map(inc, range({offset}, {offset + tasks})))"
                big[strips].append(run(kernel, code))
                empty[strips].extend(run(kernel, "x = 1") for _ in range(EMPTY_CELLS))
                print(
                    f"round {round_number + 1}, strips {'on ' if strips else 'off'}: "
                    f"{tasks:,} tasks {big[strips][-1]:.2f} s, "
                    f"empty cell median {statistics.median(empty[strips][-EMPTY_CELLS:]) * 1000:.2f} ms",
                    flush=True,
                )
    finally:
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)

    on, off = statistics.median(big[True]), statistics.median(big[False])
    print(f"\n(a) cell of {tasks:,} tasks, median of {rounds}: on {on:.2f} s, off {off:.2f} s", end="")
    print(f", ratio {on / off:.3f}")
    on_empty, off_empty = statistics.median(empty[True]), statistics.median(empty[False])
    print(
        f"(b) cell without Dask work, median of {len(empty[True])}: on {on_empty * 1000:.2f} ms, "
        f"off {off_empty * 1000:.2f} ms, ratio {on_empty / off_empty:.3f}"
    )


if __name__ == "__main__":
    main()
