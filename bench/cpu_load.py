"""A stand-in neighbour: processes that keep a given number of cores busy and do nothing else.

On a two-core machine a scheduler's CPU seconds for the same work grow while anything else runs
beside it (shared caches, more preemptions): two busy-looping processes made a 30,000-task workload
cost its scheduler about 1.09x the CPU seconds of a quiet run here. A bench that puts browsers on the
scheduler's machine measures that growth too; a row with this load instead of the browsers, as much
CPU as they used, says how much of a figure it is.
"""

from __future__ import annotations

import math
import subprocess
import sys

from _common import cpu_seconds

# Busy for ``duty`` of every 10 ms, asleep for the rest, until its stdin closes.
_WORKER = """
import sys, threading, time
duty = float(sys.argv[1])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
period = 0.01
while not stop.is_set():
    began = time.perf_counter()
    while time.perf_counter() - began < duty * period:
        pass
    if duty < 1:
        time.sleep(period * (1 - duty))
"""


# Spread over several processes: a browser is many, and on a full machine each process gets its
# share of the cores, so one busy process standing in for 0.75 of a core got less than half.
PROCESSES = 4


class CpuLoad:
    """``cores`` worth of busy processes (1.6: four processes each busy 40 % of the time)."""

    def __init__(self, cores: float) -> None:
        count = max(PROCESSES, math.ceil(cores))
        duty = min(1.0, max(0.0, cores / count))
        self.procs = [
            subprocess.Popen([sys.executable, "-c", _WORKER, str(duty)], stdin=subprocess.PIPE)
            for _ in range(count)
        ]

    def cpu(self) -> dict[int, float]:
        return {proc.pid: cpu_seconds(proc.pid) for proc in self.procs}

    def close(self) -> None:
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in self.procs:
            proc.wait(30)
