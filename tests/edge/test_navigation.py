"""A page cannot make the server open a dashboard with the user's session or its credentials.

A proxied page may open popups (its sandbox allows them, for links a dashboard offers), and any web
site may open a window on the Jupyter server: such a top-level navigation carries the login cookie.
A proxy link (and an expired view link, which a signed-in navigation renews) would have the server
fetch the dashboard, credentials included. Only navigations the user or the Lab started do; the
browser tells which in ``Sec-Fetch-Site``, which no page can set.
"""

from __future__ import annotations

import pytest
from _support import Jupyter, RecordingUpstream

NAVIGATION = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
async def test_a_popup_of_a_proxied_page_gets_a_question_not_the_dashboard(
    jupyter: Jupyter, recorder: RecordingUpstream, site: str
) -> None:
    cookie = await jupyter.login_cookie()
    headers = {**NAVIGATION, "Cookie": cookie, "Sec-Fetch-Site": site}
    link = await jupyter.fetch(f"dashdock/proxy/{recorder.netloc}/page?x=1", headers=headers, auth=False)
    assert link.code == 200 and "Location" not in link.headers
    assert recorder.seen == []  # nothing fetched, no view link minted
    body = link.body.decode()
    assert f"Open the dashboard at {recorder.netloc}?" in body
    assert f"href='/dashdock/proxy/{recorder.netloc}/page?x=1'" in body
    policy = link.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "default-src 'none'" in policy  # no script, no frame
    assert link.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("site", ["same-origin", "none", None])
async def test_the_lab_a_bookmark_or_a_program_opens_a_proxy_link_at_once(
    jupyter: Jupyter, recorder: RecordingUpstream, site: str | None
) -> None:
    cookie = await jupyter.login_cookie()
    headers = {**NAVIGATION, "Cookie": cookie, **({"Sec-Fetch-Site": site} if site else {})}
    link = await jupyter.fetch(f"dashdock/proxy/{recorder.netloc}/page", headers=headers, auth=False)
    assert link.code == 302 and "/dashdock/view/" in link.headers["Location"]


async def test_an_invalid_view_link_is_renewed_only_for_a_navigation_the_user_started(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    cookie = await jupyter.login_cookie()
    link = await jupyter.fetch(
        f"dashdock/proxy/{recorder.netloc}/page", headers={"Cookie": cookie}, auth=False
    )
    # An expired or forged capability: a signed-in navigation would have a new one minted.
    forged = link.headers["Location"].rsplit("/", 2)[0] + "/forged/page"
    recorder.clear()
    popup = {**NAVIGATION, "Cookie": cookie, "Sec-Fetch-Site": "cross-site"}
    refused = await jupyter.fetch(forged, headers=popup, auth=False, absolute=True)
    assert refused.code == 403 and recorder.seen == []
    typed = {**NAVIGATION, "Cookie": cookie, "Sec-Fetch-Site": "none"}
    renewed = await jupyter.fetch(forged, headers=typed, auth=False, absolute=True)
    assert renewed.code == 302 and "/dashdock/view/" in renewed.headers["Location"]
