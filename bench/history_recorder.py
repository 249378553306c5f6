"""What recording a scheduler costs: .venv/bin/python bench/history_recorder.py [tasks] [rounds]

A fresh LocalCluster (2 worker processes, 1 thread each, its scheduler in this process, as a
notebook's would be) runs ``client.gather(client.map(inc, range(tasks)))`` (default 100,000),
once while the recorder process (``python -m dashdock.watcher``, default 1 s tick) records
it and once without, interleaved for ``rounds`` rounds (default 2). A fresh cluster each time, so the
"without" runs do not carry the task stream the recorder made the scheduler keep. Prints the wall
times (median), their ratio (target: < 3 % slower), the recorder's CPU seconds per run, what it
recorded and missed, and the store's bytes per 1M tasks (its files after the recorder closed it,
extrapolated). Figures, no assertions; about 2-3 minutes on 2 cores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import cpu_seconds, heading, median, table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashdock.history.model import Run  # noqa: E402
from dashdock.history.store import HistoryStore  # noqa: E402


def inc(x: int) -> int:
    return x + 1


class Recorder:
    """The recorder process recording one scheduler into a fresh store."""

    def __init__(self, store: Path, scheduler: str) -> None:
        self.store = store
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dashdock.watcher", str(store)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        self.run = Run(
            id="b0b0b0b0b0b0", source="bench0000000", name="bench", scheduler=scheduler, start=time.time()
        )
        self.send({"op": "record", "run": self.run.to_store_json()})
        self.wait_for("recording")

    def send(self, command: dict[str, object]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, event: str) -> dict[str, object]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            if message.get("event") == event:
                return message
            if message.get("event") == "error":
                print("  recorder:", message.get("message"))
        raise RuntimeError(f"the recorder ended before {event!r}")

    def finish(self) -> tuple[float, int, int, int]:
        """Stop recording; CPU seconds, tasks recorded, tasks missed, store bytes."""
        self.send({"op": "stop", "run_id": self.run.id})
        self.wait_for("ended")
        cpu = cpu_seconds(self.proc.pid)
        self.send({"op": "quit"})
        self.proc.wait(60)
        store = HistoryStore.open(self.store)
        (run,) = store.runs()
        store.close()
        size = sum(p.stat().st_size for p in self.store.parent.glob(self.store.name + "*") if p.is_file())
        return cpu, run.tasks, run.gaps, size


def one_run(tasks: int, record: bool, workdir: Path, n: int) -> dict[str, float]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None, protocol="tcp"
        ) as cluster,
        Client(cluster) as client,
    ):
        client.gather(client.map(inc, range(100), key=[f"warm-{i}" for i in range(100)]))
        recorder = (
            Recorder(workdir / f"run{n}" / "history.sqlite", cluster.scheduler_address) if record else None
        )
        start, cpu_start = time.perf_counter(), time.process_time()
        client.gather(client.map(inc, range(tasks)))
        wall = time.perf_counter() - start
        # CPU of this process (the scheduler and the client): what recording adds to the scheduler,
        # and less disturbed than wall time by other load on the machine.
        figures = {"wall": wall, "main_cpu": time.process_time() - cpu_start}
        if recorder is not None:
            time.sleep(1.5)  # the last tick's tasks are read before the recorder is stopped
            cpu, recorded, missed, size = recorder.finish()
            figures.update(cpu=cpu, recorded=recorded, missed=missed, size=size)
        return figures


def main() -> None:
    tasks = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    heading(f"recorder cost: {tasks:,} tiny tasks, 2 worker processes, {rounds} interleaved rounds")
    without: list[dict[str, float]] = []
    with_: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="dashdock-bench-history-") as tmp:
        for r in range(rounds):
            # Alternate which goes first, so a machine warming up or slowing down hurts both alike.
            for record in (r % 2 == 0, r % 2 == 1):
                figures = one_run(tasks, record, Path(tmp), len(with_))
                (with_ if record else without).append(figures)
                print(
                    f"  round {r + 1}, {'with' if record else 'without'} recorder: {figures['wall']:.2f} s",
                    flush=True,
                )
    base = median([w["wall"] for w in without])
    recorded = median([w["wall"] for w in with_])
    base_cpu = median([w["main_cpu"] for w in without])
    recorded_cpu = median([w["main_cpu"] for w in with_])
    table(
        [
            ["", "wall (median)", "tasks/s", "scheduler+client CPU"],
            ["without recorder", f"{base:.2f} s", f"{tasks / base:,.0f}", f"{base_cpu:.2f} s"],
            ["with recorder", f"{recorded:.2f} s", f"{tasks / recorded:,.0f}", f"{recorded_cpu:.2f} s"],
        ]
    )
    print(f"  wall: slower by {100 * (recorded / base - 1):+.1f} % (target < 3 %)")
    print(f"  scheduler+client CPU: {100 * (recorded_cpu / base_cpu - 1):+.1f} %")
    print(f"  load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for w in with_:
        per_million = w["size"] / max(1, w["recorded"]) * 1_000_000
        print(
            f"  recorder CPU {w['cpu']:.2f} s for {w['wall']:.1f} s of work; recorded {w['recorded']:,.0f}, "
            f"missed {w['missed']:,.0f}; store {w['size'] / 1e6:.1f} MB "
            f"= {per_million / 1e6:.0f} MB per 1M tasks"
        )


if __name__ == "__main__":
    main()
