"""Who started a navigation to a proxy link, and the page that asks the user when it was not them.

A proxy link opens a dashboard with the user's session and the credentials the server holds for
it. The Lab (a pane, a notebook's link, Dask's "Launch dashboard"), a bookmark or a typed address
may open it at once; a page of another site, or a proxied page in its opaque origin (a popup it
opens), may not: the browser says which through ``Sec-Fetch-Site``, which no page can set.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

# "same-origin": the Lab's own pages; "none": typed, bookmarked, opened from another program.
# Old browsers send no Sec-Fetch-Site at all, nor do programs that hold Jupyter's token.
_STARTED_HERE = frozenset({"same-origin", "none", ""})
# The confirmation runs no script, loads nothing, and is never framed (no click can be tricked).
CONFIRMATION_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; form-action 'none'"
)


def started_elsewhere(headers: Mapping[str, str]) -> bool:
    return headers.get("Sec-Fetch-Site", "").strip().lower() not in _STARTED_HERE


def confirmation_page(netloc: str, here: str) -> str:
    """Asks whether to open the dashboard at ``netloc``; its link is this same URL, which the
    user's click then opens as a navigation of this server's own page."""
    host, link = html.escape(netloc), html.escape(here, quote=True)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dashdock: open a dashboard?</title>"
        "</head><body style='font-family: sans-serif; padding: 1em'>"
        f"<h3>Open the dashboard at {host}?</h3>"
        "<p>Another page asked to open it. dashdock opens a dashboard with your Jupyter session "
        "and any credentials it holds for it, so it asks first.</p>"
        f"<p><a id='dashdock-open' href='{link}'>Open the dashboard at {host}</a></p></body></html>"
    )
