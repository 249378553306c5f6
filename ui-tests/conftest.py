"""The fixtures of the browser tests, made of the real parts in lab.py.

Every page and browser context a test opens is closed when the test ends, passed or failed, so a
failing test leaves no page running into the next one.
"""

from __future__ import annotations

import faulthandler
import re
from collections.abc import Iterator
from typing import Any

import pytest
from lab import (
    CHROMIUM_ARGS,
    DaskCluster,
    Lab,
    browser_executable,
    open_lab,
    start_cluster,
    start_lab,
    stop_cluster,
    stop_lab,
    warm_pages,
    warm_profile,
)
from playwright.sync_api import Browser, Page, sync_playwright

_SHARED_CLUSTER = pytest.StashKey[DaskCluster]()


def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, the controller starts the sample cluster once for all its workers.

    It only runs work that the tests watch, so one serves them all: a cluster per worker cost the
    browser suite a third of the machine's CPU (two schedulers, four worker processes).
    """
    if not hasattr(config, "workerinput") and (config.getoption("numprocesses", None) or 0) > 0:
        config.stash[_SHARED_CLUSTER] = start_cluster()


def pytest_unconfigure(config: pytest.Config) -> None:
    cluster = config.stash.get(_SHARED_CLUSTER, None)
    if cluster is not None:
        stop_cluster(cluster)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist's hook: tell a worker where the controller's cluster is."""
    cluster = node.config.stash.get(_SHARED_CLUSTER, None)
    if cluster is not None:
        node.workerinput["dashdock_sample_cluster"] = [cluster.dashboard, cluster.scheduler]


@pytest.fixture(scope="session")
def dask_cluster(request: pytest.FixtureRequest) -> Iterator[DaskCluster]:
    """The sample cluster: the controller's under xdist, else one of this session's own."""
    shared = getattr(request.config, "workerinput", {}).get("dashdock_sample_cluster")
    if shared:
        yield DaskCluster(dashboard=shared[0], process=None, scheduler=shared[1])
        return
    cluster = start_cluster()
    yield cluster
    stop_cluster(cluster)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Lab]:
    base_url = getattr(request, "param", "/")
    server = start_lab(tmp_path_factory.mktemp("lab"), base_url)
    yield server
    stop_lab(server)


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Chromium, with the warm profile open_lab opens Lab pages in (lab.py warm_profile)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=browser_executable(), args=CHROMIUM_ARGS)
        profile = warm_profile(launched, tmp_path_factory.mktemp("chromium-profile"))
        yield launched
        profile.close()
        launched.close()


@pytest.fixture
def page(browser: Browser, lab: Lab, request: pytest.FixtureRequest) -> Page:
    """Lab in a new page, on a workspace named after the test (closed with the test)."""
    workspace = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:60]
    return open_lab(browser, lab, workspace)


@pytest.fixture(autouse=True)
def _watchdog(request: pytest.FixtureRequest) -> Iterator[None]:
    """Past twice pytest-timeout, print every thread's stack and end the run.

    pytest-timeout interrupts a test, but a ``finally`` or teardown that then waits on the browser
    (Playwright's evaluate has no timeout) would wait forever and CI would only say it timed out.
    """
    faulthandler.dump_traceback_later(2 * float(request.config.getini("timeout")), exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def _close_pages(request: pytest.FixtureRequest) -> Iterator[None]:
    """The pages and browser contexts a test opened (open_lab), closed when it ends, however it
    ends (the warm profile stays open for the next test)."""
    yield
    if "browser" in request.fixturenames:
        browser: Browser = request.getfixturevalue("browser")
        for page in warm_pages(browser):
            page.close()
        for context in list(browser.contexts):
            context.close()
