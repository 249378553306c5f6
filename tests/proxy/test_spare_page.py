"""The spare page (proxy/page/spare.py): BokehJS and dashdock's page script, nothing of the dashboard's."""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlsplit

from _support import Jupyter

from dashdock.proxy.bokehjs.serve import local_js_dir
from dashdock.proxy.page.spare import SPARE_BOKEHJS, SPARE_PAGE_PATH

INERT = re.compile(rb'<script type="dashdock/deferred" src="([^"]+)"></script>')


async def test_a_spare_page_links_the_local_bokehjs_inert_under_its_view_in_a_sandbox(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    spare = await jupyter.proxied(f"dashdock/proxy/{source['id']}{SPARE_PAGE_PATH}")
    assert spare.code == 200
    assert spare.headers["Content-Type"].startswith("text/html")
    assert spare.headers["Cache-Control"] == "no-store"  # it names the view's capability
    policies = spare.headers.get_list("Content-Security-Policy")
    assert any(policy.startswith("sandbox allow-scripts") for policy in policies), policies
    view = urlsplit(spare.effective_url).path.rsplit(SPARE_PAGE_PATH, 1)[0]
    assert any(policy.startswith("default-src") and f"{view}/" in policy for policy in policies), policies

    # Every BokehJS file a dashboard's page links, named by this bokeh's hashes, below the view URL
    # the page itself is served under; and dashdock's page script, which runs them.
    js_dir = local_js_dir()
    assert js_dir is not None
    expected = [
        f"{view}/static/js/{name}?v={hashlib.sha512((js_dir / name).read_bytes()).hexdigest()}".encode()
        for name in SPARE_BOKEHJS
    ]
    assert INERT.findall(spare.body) == expected
    assert f"{view}/.dashdock/page.js?v=".encode() in spare.body
    assert spare.body.count(b"<script") == len(SPARE_BOKEHJS) + 1


async def test_a_spare_page_needs_a_valid_view_capability(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    forged = await jupyter.fetch(
        f"dashdock/view/{source['id']}/not-a-capability{SPARE_PAGE_PATH}", auth=False
    )
    assert forged.code == 403
