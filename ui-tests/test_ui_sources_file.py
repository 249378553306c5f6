"""A user sees what the sources file could not keep: saved sources that cannot be used now (listed
disabled, with the reason, and removable) and a source that was added but not saved."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import add_source, open_sidebar
from lab import DaskCluster, Lab, open_lab, screenshot, start_lab, stop_lab
from playwright.sync_api import Browser, expect


@pytest.fixture(scope="module")
def seeded_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    tmp = tmp_path_factory.mktemp("seeded-lab")
    entries = [{"url": "http://10.9.9.9:8787", "name": "Far away"}, {"url": 8787, "name": "Broken"}]
    (tmp / "sources.json").write_text(json.dumps({"sources": entries}))
    server = start_lab(tmp)
    yield server
    stop_lab(server)


def test_disabled_sources_and_an_unsaved_add_are_shown(
    browser: Browser, seeded_lab: Lab, dask_cluster: DaskCluster
) -> None:
    page = open_lab(browser, seeded_lab, "sources-file")
    sidebar = open_sidebar(page)
    disabled = sidebar.locator(".jp-dashdock-Source.jp-mod-disabled")
    expect(disabled).to_have_count(2)
    far = disabled.filter(has_text="Far away")
    expect(far.locator(".jp-dashdock-Source-reason")).to_contain_text("no longer an allowed dashboard host")
    # Nothing to select: no plots are asked for a disabled source. The row is aria-disabled (not
    # selectable), which playwright takes for "do not click"; a person can click it all the same.
    far.click(force=True)
    expect(sidebar.locator(".jp-dashdock-Source.jp-mod-selected")).to_have_count(0)

    # The file's place becomes a directory: the next add cannot be saved, and the user sees it.
    sources_file = Path(seeded_lab.log).parent / "sources.json"
    os.unlink(sources_file)
    os.mkdir(sources_file)
    add_source(page, dask_cluster.dashboard)
    usable = sidebar.locator(".jp-dashdock-Source:not(.jp-mod-disabled)")
    expect(usable).to_have_count(1)
    expect(usable.locator(".jp-dashdock-Source-unsaved")).to_be_visible()
    warning = sidebar.locator(".jp-dashdock-SourceWarning")
    expect(warning).to_contain_text("not saved")
    screenshot(page, "sources-file-disabled-and-unsaved")

    warning.locator(".jp-dashdock-SourceWarning-dismiss").click()
    expect(warning).to_have_count(0)
    # Its remove button works (Delete on the row does the same); force: inside an aria-disabled row.
    sidebar.locator(".jp-dashdock-Source.jp-mod-disabled", has_text="Broken").locator(
        ".jp-dashdock-Source-remove"
    ).click(force=True)
    expect(disabled).to_have_count(1)
