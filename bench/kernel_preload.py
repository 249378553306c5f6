"""What dashdock's kernel integration costs a kernel: .venv/bin/python bench/kernel_preload.py

Two IPython kernels (jupyter_client, as a Jupyter server starts them), one with the environment a
dashdock server gives its kernels (the Dask client preload and a clients directory), one without.
Interleaved in each kernel:
  (a) kernel start until it answers, and `import sys` with nothing of Dask imported (the preload is
      only an environment variable until distributed is imported);
  (b) `import distributed` in a fresh kernel (Dask parses the variable);
  (c) `Client(cluster)` + `client.close()` against a LocalCluster in the kernel, 30 times (the preload
      registers the repr, asks the scheduler for its identity and writes the client's record).
Prints medians and the ratio with / without. Figures, no assertions.
"""

from __future__ import annotations

import ast
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

PRELOAD_FILE = str(ROOT / "dashdock" / "_preload" / "dashdock_preload.py")
ROUNDS = 5
CLIENTS = 30

CLIENT_TIMINGS = f"""
import time, statistics
from distributed import Client, LocalCluster
cluster = LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                       dashboard_address="127.0.0.1:0")
times = []
for _ in range({CLIENTS}):
    start = time.perf_counter()
    client = Client(cluster)
    client.close()
    times.append(time.perf_counter() - start)
cluster.close()
print("CLIENT", statistics.median(times))
"""


def environment(with_dashdock: bool, records: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (PRELOAD_VARIABLE, CLIENTS_DIR_VARIABLE)}
    if with_dashdock:
        env[PRELOAD_VARIABLE] = repr([PRELOAD_FILE])
        env[CLIENTS_DIR_VARIABLE] = records
    return env


def run(client: Any, code: str) -> str:
    output: list[str] = []

    def hook(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            output.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            raise RuntimeError("\n".join(message["content"]["traceback"]))

    client.execute_interactive(code, timeout=300, output_hook=hook)
    return "".join(output)


def one_round(with_dashdock: bool, records: str) -> dict[str, float]:
    start = time.perf_counter()
    manager, client = start_new_kernel(kernel_name="python3", env=environment(with_dashdock, records))
    try:
        figures = {"start": time.perf_counter() - start}
        checked = run(
            client, "import os, sys\nprint(sorted(m for m in ('dask', 'distributed') if m in sys.modules))"
        )
        assert ast.literal_eval(checked.strip()) == [], checked
        preload = run(client, f"import os; print(os.environ.get('{PRELOAD_VARIABLE}', ''))")
        assert ("dashdock_preload" in preload) == with_dashdock
        start = time.perf_counter()
        run(client, "import distributed")
        figures["import"] = time.perf_counter() - start
        figures["client"] = float(run(client, CLIENT_TIMINGS).split()[-1])
        return figures
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def main() -> None:
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory() as records:
        for _ in range(ROUNDS):
            for with_dashdock in (False, True):
                results[with_dashdock].append(one_round(with_dashdock, records))
        leftover = os.listdir(records)
    print(f"{ROUNDS} rounds, interleaved; medians")
    print(f"{'':32} {'without':>10} {'with dashdock':>14} {'ratio':>7}")
    for key, label, scale, unit in (
        ("start", "kernel start until it answers", 1000, "ms"),
        ("import", "import distributed", 1000, "ms"),
        ("client", f"Client() + close() (x{CLIENTS})", 1000, "ms"),
    ):
        without = statistics.median(r[key] for r in results[False]) * scale
        with_ = statistics.median(r[key] for r in results[True]) * scale
        print(f"{label:32} {without:8.1f}{unit} {with_:12.1f}{unit} {with_ / without:6.2f}x")
    print(f"client records left behind after every client closed: {len(leftover)}")


if __name__ == "__main__":
    main()
