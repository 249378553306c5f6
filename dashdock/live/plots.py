"""Which of Dask's plots dashdock draws live, and how the server and the plot server agree on them.

The contract between the two processes: the watcher's plot server (plot_server.py) serves these
paths behind ``SECRET_HEADER`` and draws the run ``RUN_ARGUMENT`` names; the server side
(history/drawn.py) routes a recorded source's panes of them there.
"""

from __future__ import annotations

# Dask's paths of the plots drawn from the recorder's mirrors: a pane's URL stays the same. The
# task stream is read from every scheduler; the workers and task prefixes only from those that
# offer them (kernel/plot_state.py), whose runs the recorder names in a "state" event.
DRAWN_FROM_STREAM = ("/individual-task-stream",)
DRAWN_FROM_STATE = (
    "/individual-progress",
    "/individual-workers-memory",
    "/individual-cluster-memory",
    "/individual-cpu",
    "/individual-nprocessing",
    "/individual-occupancy",
    "/individual-workers",
    "/individual-bandwidth-types",
    "/individual-bandwidth-workers",
    "/individual-workers-network",
    "/individual-workers-disk",
    "/individual-workers-transfer-bytes",
    "/individual-compute-time-per-key",
    "/individual-aggregate-time-per-action",
    "/individual-workers-network-timeseries",
    "/individual-workers-cpu-timeseries",
    "/individual-workers-memory-timeseries",
    "/individual-workers-disk-timeseries",
    "/individual-exceptions",
    "/individual-memory-by-key",
    "/individual-gpu-memory",
    "/individual-gpu-utilization",
    "/individual-rmm-memory",
    "/individual-scheduler-system",
    "/individual-contention",
    "/individual-groups",
    "/individual-group-progress",
    "/individual-graph",
    "/individual-fine-performance-metrics",
)
DRAWN = DRAWN_FROM_STREAM + DRAWN_FROM_STATE
# The header with the plot server's secret: the Jupyter server adds it to each request.
SECRET_HEADER = "X-Dashdock-Plots"
# The query argument that names the run a page draws.
RUN_ARGUMENT = "run"

# The costlier parts of the state, and the plot whose open pages make the recorder ask for them.
WATCHED_PARTS = {
    "memory_by_key": "/individual-memory-by-key",
    "task_groups": "/individual-groups",
    "group_timing": "/individual-group-progress",
    "graph": "/individual-graph",
    "fine_metrics": "/individual-fine-performance-metrics",
}
# Parts asked less often than the state; the mirror keeps the last answer between. Memory by key's
# pass over every task in memory (3.6 ms at 30,000 held, bench/plot_state_cost.py) was two thirds
# of what 8 fresh panes cost a busy scheduler when it was asked with every state read (profiled
# with py-spy). It is asked with every other state read (320 ms): at 0.5 s it came every fourth
# (640 ms), and its page trailed Dask's own by 0.37 s (median, bench/drawn_freshness.py). Dask's
# page walks them every 500 ms, splitting every key's text, which costs it three times as much.
PART_EVERY_S = {"memory_by_key": 0.25}


def is_drawn(path: str) -> bool:
    """Whether ``path`` is a page (or below a page) of a plot the recorder may draw."""
    return below(path, DRAWN)


def below(path: str, plots: tuple[str, ...]) -> bool:
    """Whether ``path`` is one of ``plots``' pages or below one (its websocket)."""
    return any(path == plot or path.startswith(plot + "/") for plot in plots)
