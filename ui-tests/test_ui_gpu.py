"""A cluster whose workers have GPUs: its GPU plots are offered unfolded, described as available.

This machine has no GPU, so the workers' GPU metrics are faked: a worker plugin adds to each
worker's metrics what NVML's would add (distributed/system_monitor.py), and Dask's scheduler and
its GPU plots take them as they take real ones. A cluster without GPUs keeps the group folded.
"""

from __future__ import annotations

import sys
from typing import Any

import cloudpickle
from distributed import Client, WorkerPlugin
from helpers import open_sidebar, pane_frame, plot_item, wait_for_bokeh_plot, wait_until
from lab import DaskCluster, Lab, open_lab, screenshot, start_cluster, stop_cluster
from playwright.sync_api import Browser, expect

GPU_GROUP = '.jp-dashdock-PlotGroup[data-group="gpu"]'
# The GPU Memory plot's data: one bar per GPU, its memory used (Dask's nvml.py).
_GPU_BARS = """() => {
    const sources = [...Bokeh.documents[0].all_models].filter(m => m.data && m.data.has
        ? m.data.has('memory') : m.data && 'memory' in m.data);
    const data = sources.length ? sources[0].data : null;
    if (!data) return null;
    const memory = data instanceof Map ? data.get('memory') : data.memory;
    return Array.from(memory);
}"""


class FakeGpus(WorkerPlugin):
    """What a worker with a working NVML reports in its heartbeat."""

    def setup(self, worker: Any) -> None:
        worker.metrics["gpu_utilization"] = lambda w: 37
        worker.metrics["gpu_memory_used"] = lambda w: 2**30
        worker.metrics["gpu-memory-total"] = lambda w: 16 * 2**30


def test_gpu_plots_unfold_on_a_cluster_that_reports_gpus(
    browser: Browser, lab: Lab, dask_cluster: DaskCluster
) -> None:
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers cannot import this file
    cluster = start_cluster()
    try:
        with Client(cluster.scheduler, timeout=30) as client:
            client.register_plugin(FakeGpus(), name="fake-gpus")
            add = "dashdock/api/sources"
            gpu_source = lab.api(add, "POST", {"url": cluster.dashboard, "name": "GPU box"})
            plain = lab.api(add, "POST", {"url": dask_cluster.dashboard, "name": "CPU box"})
            assert isinstance(gpu_source, dict) and isinstance(plain, dict)

            page = open_lab(browser, lab, "gpu-plots")
            sidebar = open_sidebar(page)
            sidebar.locator(".jp-dashdock-Source", has_text="GPU box").click()
            group = sidebar.locator(GPU_GROUP)
            # Once the history has read the workers' metrics: unfolded, and says how many have GPUs.
            expect(group).to_have_attribute("aria-expanded", "true", timeout=120_000)
            expect(group).to_contain_text("2 workers with GPUs")
            expect(group).not_to_contain_text("needs NVIDIA GPUs")
            plot_item(page, "GPU Memory").click()
            wait_for_bokeh_plot(page, "GPU Memory")
            bars = wait_until(lambda: pane_frame(page, "GPU Memory").evaluate(_GPU_BARS), timeout=60)
            assert bars == [2**30, 2**30], bars  # both workers' GPUs, as the fake reports them
            screenshot(page, "gpu-plots")

            # A cluster without GPUs: the group stays folded and says what it needs.
            sidebar.locator(".jp-dashdock-Source", has_text="CPU box").click()
            wait_until(lambda: lab.api("dashdock/api/sources") and _gpus(lab, plain["id"]) == 0, timeout=120)
            expect(group).to_have_attribute("aria-expanded", "false")
            expect(group).to_contain_text("needs NVIDIA GPUs on the workers")
            page.close()
    finally:
        stop_cluster(cluster)


def _gpus(lab: Lab, source_id: str) -> object:
    listing = lab.api("dashdock/api/sources")
    assert isinstance(listing, dict)
    return next(source.get("gpus") for source in listing["sources"] if source["id"] == source_id)
