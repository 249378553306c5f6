"""What bounds a watched run, and how it says it ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Every bound of the recorder, each with the default the server uses."""

    tick: float = 1.0  # seconds between two reads of a scheduler
    # While a drawn page is open, seconds between the reads that keep its mirror fresh: the task
    # stream (cheap: the counter, then what is new) and the plot state. What they read is recorded
    # with the next tick. Dask's own pages change up to ten times a second on a busy cluster, and
    # drawn pages look every 100 ms: the mirror moves a little more often, so each look sees news.
    live_tick: float = 0.08
    live_state_tick: float = 0.16
    max_runs: int = 16  # schedulers recorded at once
    max_records_per_tick: int = 50_000  # above Dask's throughput at a 1 s tick; more counts as a gap
    samples_every: int = 1  # ticks between worker samples (memory, CPU, joined/left)
    progress_every: int = 2  # ticks between task-group progress rows
    call_timeout: float = 5.0  # seconds for one call to a scheduler
    gone_after: float = 30.0  # a scheduler failing for this long ends its run
    # A scheduler that answers too late is said to have a problem only once it has for this long:
    # busy with 30,000 tasks on 2 loaded cores, one answered the task-stream read 4.3 s late.
    busy_grace: float = 10.0
    max_workers: int = 1024  # workers sampled per scheduler
    max_groups: int = 1000  # task groups in one progress sample
    max_exceptions_per_tick: int = 100  # "exception" events per tick (every erred task keeps its text)
    max_departures_per_tick: int = 16  # workers that left whose reason is asked for, per tick
    # Ticks between reads of Fine Performance Metrics totals (kept only when they changed; the
    # last tick of a run reads them too).
    fine_metrics_every: int = 30
    # Idle ticks after work before its totals are read as well (workers' heartbeats bring a
    # computation's last figures): a computation's own window then begins and ends on a snapshot.
    fine_metrics_settle: int = 3
    state_offer_every: int = 5  # ticks between asking a scheduler whether it offers its plot state
    # Add dashdock's plot-state plugin to a scheduler that does not offer it (a plain one added by URL).
    install_plugin: bool = True
    max_line_bytes: int = 1 << 20  # one command on stdin


Emit = Callable[[dict[str, object]], None]


class Ended(Exception):
    """A run ends; the argument is the reason, written for the user."""
