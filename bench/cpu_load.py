"""A stand-in neighbour: processes that keep a given number of cores busy and do nothing else.

On a two-core machine a scheduler's CPU seconds for the same work grow while anything else runs
beside it (shared caches, more preemptions): two busy-looping processes made a 30,000-task workload
cost its scheduler about 1.09x the CPU seconds of a quiet run here. A bench that puts browsers on the
scheduler's machine measures that growth too; a row with this load instead of the browsers, as much
CPU as they used, says how much of a figure it is.

Each process keeps to its share by its own CPU clock: busy while it has had less than its share of
the time so far, asleep while it has had more. A fixed duty cycle (busy 40 % of every 10 ms) got
about two thirds of its share on a full machine (28.5 of the 42.4 CPU-s the browser used), so
the control ran lighter than what it stood in for. What it falls behind is made up within
``CATCH_UP`` seconds, never as one long burst.
"""

from __future__ import annotations

import math
import subprocess
import sys

from _common import cpu_seconds

CATCH_UP = 0.5  # seconds of share a process may be behind; past that, what is missed is let go

# Busy while its CPU time is under ``duty`` of the time since it started, asleep while over, in
# steps of at most 10 ms, until its stdin closes.
_WORKER = """
import sys, threading, time
duty, catch_up = float(sys.argv[1]), float(sys.argv[2])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
wall0, cpu0 = time.monotonic(), time.process_time()
while not stop.is_set():
    behind = duty * (time.monotonic() - wall0) - (time.process_time() - cpu0)
    if behind > catch_up * duty:  # starved for long: start counting again from here
        wall0 += (behind - catch_up * duty) / duty
        behind = catch_up * duty
    if behind > 0:
        until = time.perf_counter() + min(behind, 0.01)
        while time.perf_counter() < until:
            pass
    else:
        time.sleep(min(-behind / duty if duty > 0 else 0.01, 0.01))
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
            subprocess.Popen([sys.executable, "-c", _WORKER, str(duty), str(CATCH_UP)], stdin=subprocess.PIPE)
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
