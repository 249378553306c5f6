"""A scheduler's individual-plots.json becomes plots named and grouped for people."""

from __future__ import annotations

import pytest

from dashdock.sources.catalog import GROUPS, Plot, describe, display_name, group_of, parse_catalog


@pytest.mark.parametrize(
    ("title", "name", "group"),
    [
        ("Individual Task Stream", "Task Stream", "tasks"),
        ("Individual Workers Cpu Timeseries", "Workers CPU Timeseries", "workers"),
        ("Individual Gpu Memory", "GPU Memory", "gpu"),
        ("Individual Gpu Utilization", "GPU Utilization", "gpu"),
        ("Individual Rmm Memory", "RMM Memory", "gpu"),
        ("Individual Workers Memory", "Workers Memory", "memory"),
        ("Individual Workers Disk", "Workers Disk", "memory"),
        ("Individual Nprocessing", "Processing", "workers"),
        ("Individual Cluster Map", "Cluster Map", "workers"),
        ("Individual Compute Time Per Key", "Compute Time Per Key", "tasks"),
        ("Individual Something New", "Something New", "other"),
        ("Individual", "Individual", "other"),
    ],
)
def test_plot_titles_are_named_and_grouped_for_people(title: str, name: str, group: str) -> None:
    assert display_name(title) == name
    assert group_of(name) == group


def test_a_catalog_is_ordered_by_group_with_the_usual_plots_first() -> None:
    plots = parse_catalog(
        {
            "Individual Workers Memory Timeseries": "/individual-workers-memory-timeseries",
            "Individual Gpu Memory": "/individual-gpu-memory",
            "Individual Aggregate Time Per Action": "/individual-aggregate-time-per-action",
            "Individual Cluster Memory": "/individual-cluster-memory",
            "Individual Task Stream": "/individual-task-stream",
            "Individual Workers Memory": "/individual-workers-memory",
            "Individual Progress": "/individual-progress",
            "Individual Foo": "/individual-foo",
        }
    )
    assert [plot.name for plot in plots] == [
        "Task Stream",
        "Progress",
        "Aggregate Time Per Action",
        "Workers Memory",
        "Cluster Memory",
        "Workers Memory Timeseries",
        "GPU Memory",
        "Foo",
    ]
    assert [plot.group for plot in plots] == sorted((plot.group for plot in plots), key=GROUPS.index)
    assert Plot("Task Stream", "tasks", "/individual-task-stream") in plots


@pytest.mark.parametrize(
    ("title", "path"),
    [
        ("Individual Absolute", "http://10.0.0.1/x"),
        ("Individual Protocol Relative", "//10.0.0.1/x"),
        ("Individual Relative", "individual-x"),
        ("Individual Dotdot", "/statics/../../etc/passwd"),
        ("Individual Script", "/x<script>"),
        ("Individual Query", "/x?token=1"),
        ("Individual Empty", ""),
        ("Individual Long", "/" + "a" * 300),
        ("Individual Number", 7),
        ("Individual Null", None),
    ],
)
def test_entries_that_are_not_plain_dashboard_paths_are_skipped(title: str, path: object) -> None:
    plots = parse_catalog({title: path, "Individual Task Stream": "/individual-task-stream"})
    assert plots == [Plot("Task Stream", "tasks", "/individual-task-stream")]


def test_a_static_page_plot_is_kept() -> None:
    (plot,) = parse_catalog({"Individual Cluster Map": "/statics/individual-cluster-map.html"})
    assert plot.path == "/statics/individual-cluster-map.html"


@pytest.mark.parametrize("document", [[], ["/individual-task-stream"], "plots", None, 3])
def test_a_catalog_that_is_not_a_json_object_raises(document: object) -> None:
    with pytest.raises(ValueError, match="not a JSON object"):
        parse_catalog(document)


def test_an_empty_catalog_has_no_plots() -> None:
    assert parse_catalog({}) == []


# The plots Dask 2026.8's /individual-plots.json lists (33), as the catalog names them.
DASK_PLOT_TITLES = [
    "Individual Task Stream",
    "Individual Progress",
    "Individual Graph",
    "Individual Groups",
    "Individual Group Progress",
    "Individual Workers Memory",
    "Individual Cluster Memory",
    "Individual Workers Transfer Bytes",
    "Individual Cpu",
    "Individual Nprocessing",
    "Individual Occupancy",
    "Individual Workers",
    "Individual Exceptions",
    "Individual Bandwidth Types",
    "Individual Bandwidth Workers",
    "Individual Workers Network",
    "Individual Workers Disk",
    "Individual Workers Network Timeseries",
    "Individual Workers Cpu Timeseries",
    "Individual Workers Memory Timeseries",
    "Individual Workers Disk Timeseries",
    "Individual Memory By Key",
    "Individual Compute Time Per Key",
    "Individual Aggregate Time Per Action",
    "Individual Scheduler System",
    "Individual Contention",
    "Individual Fine Performance Metrics",
    "Individual Profile",
    "Individual Profile Server",
    "Individual Gpu Memory",
    "Individual Gpu Utilization",
    "Individual Rmm Memory",
    "Individual Cluster Map",
]


def test_every_dask_plot_says_what_it_shows_in_a_sentence_of_its_own() -> None:
    plots = parse_catalog({title: "/" + title.lower().replace(" ", "-") for title in DASK_PLOT_TITLES})
    assert len(plots) == len(DASK_PLOT_TITLES)
    descriptions = [plot.description for plot in plots]
    generic = {describe("Something New", group) for group in GROUPS}
    for plot in plots:
        assert plot.description.endswith("."), plot
        assert plot.description not in generic, plot
        assert len(plot.description) <= 120, plot
    assert len(set(descriptions)) == len(descriptions), "two plots share a description"


def test_gpu_plots_say_they_need_gpus_on_the_workers() -> None:
    for plot in parse_catalog(
        {"Individual Gpu Memory": "/a", "Individual Rmm Memory": "/b", "Individual Gpu X": "/c"}
    ):
        assert plot.group == "gpu"
        assert "needs NVIDIA GPUs on the workers" in plot.description, plot


@pytest.mark.parametrize(
    ("title", "words"),
    [
        ("Individual Task Something", "tasks"),
        ("Individual Memory Something", "memory"),
        ("Individual Worker Something", "workers"),
        ("Individual Something New", "dashboard"),
    ],
)
def test_a_plot_dask_adds_later_is_described_by_its_group(title: str, words: str) -> None:
    (plot,) = parse_catalog({title: "/individual-x"})
    assert words in plot.description
