"""Bokeh servers as sources: reading a hostile index, rewriting static links, publishing from a kernel."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

import dashdock
from dashdock.kernel.protocol import valid_record
from dashdock.proxy.page.script import with_proxied_static
from dashdock.sources.bokeh_apps import _app_path
from dashdock.targets import parse_dashboard_url


def test_only_apps_right_below_the_root_of_the_same_server_are_plots() -> None:
    root = parse_dashboard_url("http://127.0.0.1:5006/prefix")
    assert _app_path(root, "/prefix/sliders") == "/sliders"
    assert _app_path(root, "sliders") == "/sliders"  # relative to the root's index page
    assert _app_path(root, "./crossfilter/") == "/crossfilter"
    refused = [
        "//evil.example/prefix/app",
        "http://127.0.0.1:5007/prefix/app",
        "https://bokeh.org/prefix/app",
        "/elsewhere/app",
        "/prefix/a/b",
        "/prefix/static",
        "/prefix/app?x=1",
        "/prefix/..",
        "javascript:alert(1)",
    ]
    assert [href for href in refused if _app_path(root, href) is not None] == []


def test_static_links_of_the_server_go_through_the_proxy_and_nothing_else_changes() -> None:
    head = (
        b'<script src="/static/js/bokeh.min.js?v=1"></script>'
        b"<link href='/static/css/a.css'>"
        b'<script src="/other/static/js/x.js"></script>'
        b'<script src="static/js/relative.js"></script>'
        b'<a href="https://example.org/static/x">x</a>'
    )
    rewritten = with_proxied_static(head, "", "/user/alice/dashdock/view/abc/cap/")
    assert rewritten == (
        b'<script src="/user/alice/dashdock/view/abc/cap/static/js/bokeh.min.js?v=1"></script>'
        b"<link href='/user/alice/dashdock/view/abc/cap/static/css/a.css'>"
        b'<script src="/other/static/js/x.js"></script>'
        b'<script src="static/js/relative.js"></script>'
        b'<a href="https://example.org/static/x">x</a>'
    )
    prefixed = with_proxied_static(b'<script src="/apps/static/js/b.js">', "/apps", "/view/s/c")
    assert prefixed == b'<script src="/view/s/c/static/js/b.js">'


def test_a_kernel_record_names_its_flavour_and_an_unknown_one_is_refused() -> None:
    record = {
        "kernel_id": "k-1",
        "client_id": "published",
        "dashboard": "http://127.0.0.1:41000",
        "started": 1.0,
        "flavour": "bokeh",
    }
    assert valid_record(record)["flavour"] == "bokeh"  # type: ignore[index]
    assert valid_record({**record, "flavour": "script"}) is None
    assert (
        valid_record({key: value for key, value in record.items() if key != "flavour"})["flavour"] == "dask"
    )  # type: ignore[index]


def test_publishing_serves_the_figure_and_unpublishing_takes_it_away() -> None:
    source = ColumnDataSource({"x": [0], "y": [1]})
    plot = figure(title="Published")
    plot.line("x", "y", source=source)
    published = dashdock.publish(plot, "A <b>bold</b> name")
    try:
        index = urllib.request.urlopen(published.url.rsplit("/", 1)[0] + "/", timeout=10).read().decode()
        assert "A &lt;b&gt;bold&lt;/b&gt; name" in index  # a name is text, never markup
        page = urllib.request.urlopen(published.url, timeout=10).read().decode()
        assert "Bokeh" in page and "static/js/bokeh" in page
        with pytest.raises(ValueError, match="already shown elsewhere"):
            dashdock.publish(plot, "Again")  # a Bokeh model belongs to one document
        with pytest.raises(TypeError, match=r"Bokeh models .* and Panel objects, not int"):
            dashdock.publish(42, "Number")
        with pytest.raises(ValueError, match="a name of 1 to 100 characters"):
            dashdock.publish(figure(), " ")
    finally:
        assert dashdock.unpublish("A <b>bold</b> name") is True
    assert dashdock.unpublish("A <b>bold</b> name") is False
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(published.url, timeout=10)
    assert gone.value.code == 404
