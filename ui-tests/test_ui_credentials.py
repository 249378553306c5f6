"""A dashboard behind authentication: the Lab asks for its credentials once, the server keeps them,
and the browser never sees them. Real Lab, a real LocalCluster behind a real authenticating proxy."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from auth_proxy import AuthProxy
from helpers import add_source, open_sidebar, plot_item, wait_for_bokeh_plot
from lab import DaskCluster, Lab, open_lab, screenshot
from playwright.sync_api import Browser, expect

SECRET = "s3cret-7f2e9a41c0"
ROTATED = "r0tated-8c3b"


@pytest.fixture
def guarded(dask_cluster: DaskCluster) -> Iterator[AuthProxy]:
    proxy = AuthProxy(dask_cluster.root, SECRET).start()
    yield proxy
    proxy.stop()


def test_a_dashboard_behind_a_token_works_once_given_and_never_shows_it(
    browser: Browser, lab: Lab, guarded: AuthProxy
) -> None:
    page = open_lab(browser, lab, "credentials")
    sidebar = open_sidebar(page)
    add_source(page, guarded.url)

    dialog = page.locator(".jp-Dialog")
    host = guarded.url.split("://", 1)[1].split("/")[0]
    expect(dialog.locator(".jp-Dialog-header")).to_have_text(f"Credentials for {host}")
    expect(dialog).to_contain_text("asks for credentials (HTTP 401)")
    expect(dialog.get_by_label("Sent as")).to_have_value("header")
    expect(dialog.get_by_label("Name")).to_have_value("Authorization")
    value = dialog.get_by_label("Value")
    expect(value).to_be_focused()
    expect(value).to_have_attribute("type", "password")
    page.keyboard.type(f"Bearer {SECRET}")
    screenshot(page, "credentials-dialog")
    page.keyboard.press("Enter")

    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_count(1, timeout=30_000)
    # A plot dashdock never draws itself (the recorder draws Task Stream and the others without
    # the credential): its page, BokehJS and websocket all go through the guard.
    plot_item(page, "Profile").click()
    wait_for_bokeh_plot(page, "Profile")
    assert any("/ws" in uri for uri in guarded.seen), guarded.seen

    # What the browser can get: the sources API, every page and frame. None holds the secret.
    listing = page.evaluate(
        """async () => (await (await fetch(
            window.jupyterapp.serviceManager.serverSettings.baseUrl + 'dashdock/api/sources',
            {headers: {Authorization: 'token ' + window.jupyterapp.serviceManager.serverSettings.token}}
        )).text())"""
    )
    assert "credentials" in listing and '"kind": "header"' in listing
    assert SECRET not in listing
    for frame in page.frames:
        assert SECRET not in frame.content(), frame.url
    screenshot(page, "credentials-plot")

    # On the server: a file only the user can read, and nothing in the log.
    kept = Path(lab.log).parent / "data" / "dashdock" / "credentials.json"
    assert SECRET in kept.read_text()
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    assert SECRET not in Path(lab.log).read_text()

    # The site rotates its token: the source says so and offers to take the new one.
    guarded.token = ROTATED
    give = sidebar.locator(".jp-dashdock-Source-credentials")
    expect(give).to_be_visible(timeout=90_000)
    expect(give).to_have_accessible_name(re.compile("Give the credentials of"))
    give.click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("were refused (HTTP 401)")
    expect(dialog.get_by_label("Value")).to_be_focused()
    page.keyboard.type(f"Bearer {ROTATED}")
    page.keyboard.press("Enter")
    expect(give).to_be_hidden(timeout=30_000)
    wait_for_bokeh_plot(page, "Profile")  # the pane reloaded with them
    assert ROTATED in kept.read_text() and SECRET not in kept.read_text()


def test_wrong_credentials_say_so_and_nothing_is_added(
    browser: Browser, lab: Lab, guarded: AuthProxy
) -> None:
    page = open_lab(browser, lab, "wrong-credentials")
    sidebar = open_sidebar(page)
    before = sidebar.locator(".jp-dashdock-Source-name").count()
    add_source(page, guarded.url)
    dialog = page.locator(".jp-Dialog")
    dialog.get_by_label("Value").fill("Bearer wrong")
    dialog.get_by_role("button", name="Use them").click()
    # Asked again, saying the server refused what was given.
    expect(page.locator(".jp-Dialog")).to_contain_text("refused the credentials given (HTTP 401)")
    page.locator(".jp-Dialog").get_by_role("button", name="Cancel").click()
    expect(sidebar.locator(".jp-dashdock-AddSource-error")).to_contain_text("refused the credentials")
    expect(sidebar.locator(".jp-dashdock-AddSource-url")).to_have_value(guarded.url)  # kept to correct
    expect(sidebar.locator(".jp-dashdock-Source-name")).to_have_count(before)
