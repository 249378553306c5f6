"""The history traits of the extension, as the history service takes them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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
    draw_plots: bool = False  # Dask's key plots served from the recorder (recorder/plot_server.py)
    plots_wait: float = DEFAULT_PLOTS_WAIT  # seconds a page waits for its source's run to begin
    # Add dashdock's plot-state plugin to recorded schedulers that lack it (kernel/state_plugin.py).
    install_plugin: bool = False
