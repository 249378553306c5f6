"""The history traits of the extension, as the history service takes them (``history_settings``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

# The recorder's address-space cap when none is configured: a full task stream decodes to ~200 MB.
DEFAULT_RECORDER_MAX_MEMORY = 1024**3
# The recorder begins a new source's run and asks its scheduler for its state within a few seconds
# (a sync, a connection, a tick); more when the server has just started the recorder.
DEFAULT_PLOTS_WAIT = 10.0


@dataclass(frozen=True)
class HistorySettings:
    """The history traits of the extension."""

    enabled: bool
    store: Path
    max_bytes: int
    max_age: float  # seconds
    max_runs: int  # recorded at once
    max_alerts: int  # distinct alerts one run keeps
    recorder_max_memory: int = DEFAULT_RECORDER_MAX_MEMORY  # the recorder's RLIMIT_AS; 0: none
    draw_plots: bool = False  # Dask's key plots served from the recorder (live/plot_server.py)
    plots_wait: float = DEFAULT_PLOTS_WAIT  # seconds a page waits for its source's run to begin
    # Add dashdock's plot-state plugin to recorded schedulers that lack it (kernel/state_plugin.py).
    install_plugin: bool = True
    live_tick: float = 0.08  # seconds between the watcher's reads while a drawn page is open


class HistoryTraits(Protocol):
    """The extension's traits the history reads (DashdockApp declares them)."""

    @property
    def history(self) -> bool: ...
    @property
    def history_file(self) -> str: ...
    @property
    def history_max_bytes(self) -> int: ...
    @property
    def history_max_age(self) -> float: ...
    @property
    def history_max_recorded(self) -> int: ...
    @property
    def alerts_max_per_run(self) -> int: ...
    @property
    def history_recorder_max_memory(self) -> int: ...
    @property
    def draw_key_plots(self) -> bool: ...
    @property
    def draw_key_plots_wait(self) -> float: ...
    @property
    def install_on_url_schedulers(self) -> bool: ...
    @property
    def draw_key_plots_refresh(self) -> float: ...


def history_settings(traits: HistoryTraits) -> HistorySettings:
    return HistorySettings(
        enabled=traits.history,
        store=Path(traits.history_file),
        max_bytes=traits.history_max_bytes,
        max_age=traits.history_max_age,
        max_runs=traits.history_max_recorded,
        max_alerts=traits.alerts_max_per_run,
        recorder_max_memory=traits.history_recorder_max_memory,
        draw_plots=traits.draw_key_plots,
        plots_wait=traits.draw_key_plots_wait,
        install_plugin=traits.install_on_url_schedulers,
        live_tick=traits.draw_key_plots_refresh,
    )
