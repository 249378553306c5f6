"""Where a dashboard's scheduler is, so that the history can record a source added by its URL.

A scheduler's info page (``/info/main/workers.html``, which keeps answering on a busy cluster where
``/json/identity.json`` fails) names the scheduler's address in its title. What a dashboard says
never widens what the server may reach: the address must be ``tcp://`` on a host the allowlist
admits, or the source is not recorded, and why is said in one line.
"""

from __future__ import annotations

import html
import math
import re
import time
from dataclasses import dataclass

from dashdock.sources.model import Source
from dashdock.targets import Allowlist, TargetError, parse_target_segment
from dashdock.upstream import UpstreamClient, UpstreamError

# Seconds between two looks for the scheduler of a source added by URL while it is unknown (its
# info page did not answer: a busy or starting cluster).
SCHEDULER_RETRY = 10.0

INFO_PAGE = "/info/main/workers.html"
_TITLE = re.compile(r"<h1[^>]*>\s*Scheduler\s+([^\s<]{1,300})\s*</h1>", re.IGNORECASE)
_LOOKED_AT = 64 * 1024  # of the page: the title comes first


@dataclass(frozen=True)
class SchedulerLookup:
    """The scheduler's address to record, or why there is none (for people)."""

    address: str | None
    problem: str = ""


def scheduler_of(page: str, allowlist: Allowlist) -> SchedulerLookup:
    """The scheduler an info page names, judged by the allowlist."""
    match = _TITLE.search(page[:_LOOKED_AT])
    if match is None:
        return SchedulerLookup(None, "Its dashboard does not say where its scheduler is (no info pages).")
    address = html.unescape(match[1])
    scheme, _, netloc = address.partition("://")
    if scheme == "tls":
        return SchedulerLookup(
            None,
            f"Its scheduler speaks TLS ({address}): recording it needs the cluster's security "
            "settings, which a dashboard does not give. Connect a notebook to it to record it.",
        )
    if scheme != "tcp":
        return SchedulerLookup(
            None, f"Its scheduler's address {address} is not one dashdock records (tcp://)."
        )
    try:
        target = parse_target_segment(netloc)
    except TargetError:
        return SchedulerLookup(None, f"Its scheduler's address {address} is not one dashdock can read.")
    if not allowlist.allows(target):
        return SchedulerLookup(
            None,
            f"Its scheduler is at {target.netloc}, on a host allowed_targets does not admit: "
            "dashdock does not connect to it.",
        )
    return SchedulerLookup(f"tcp://{target.netloc}")


def scheduler_due(source: Source, was_up: bool) -> bool:
    """Whether to look for the scheduler of a Dask dashboard added by URL: when first up, again
    when back up (a restart may move it), and while its info page does not answer at most every
    ``SCHEDULER_RETRY``."""
    if source.kind != "url" or source.flavour != "dask":
        return False
    if not was_up or source.scheduler_checked == 0.0:
        return True
    # Its info page did not answer last time (an answer makes it infinite): look again.
    return time.monotonic() - source.scheduler_checked > SCHEDULER_RETRY


async def learn_scheduler(source: Source, client: UpstreamClient, allowlist: Allowlist) -> None:
    """Read the scheduler's address from the dashboard's info page into ``source`` (or why not)."""
    source.scheduler_checked = time.monotonic()
    try:
        page = await client.get_text(source.dashboard.url + INFO_PAGE)
    except UpstreamError as exc:
        # A scheduler it named before is kept (and so its run): a flapping or busy dashboard whose
        # page fails now and then must not end and begin a run each time (issue 40). A page that
        # answers again says whether it moved.
        if source.scheduler is None:
            source.unrecorded = (
                f"Its dashboard's info page, which names its scheduler, did not answer: {exc.reason}"
            )
        return
    found = scheduler_of(page, allowlist)
    source.scheduler, source.unrecorded = found.address, found.problem
    # Its page answered: that is the answer until the dashboard goes down and comes back.
    source.scheduler_checked = math.inf
