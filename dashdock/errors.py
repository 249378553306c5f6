"""What can go wrong, in words for people: the one error vocabulary of dashdock's domain code.

Domain code (sources, clusters, panes, the proxy's routing, the relays) raises these and knows no
HTTP; ``dashdock.http`` alone turns each kind into a status. A ``reason`` is shown to the user as
it is, so it names the thing and what to do, and never echoes raw request input.
"""

from __future__ import annotations


class DashdockError(Exception):
    """An operation failed; the subclass says how, ``reason`` says it for people."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Invalid(DashdockError):
    """The request is malformed: a field of the wrong type, a URL that is no URL."""


class NotAllowed(DashdockError):
    """The request is well formed but this server's policy refuses it."""


class NotFound(DashdockError):
    """What the request names does not exist (any more)."""


class Conflict(DashdockError):
    """It exists, but its state forbids this now (disabled, stopped, managed elsewhere)."""


class OverLimit(DashdockError):
    """A configured limit is reached; the reason names the trait that sets it."""


class NotADashboard(DashdockError):
    """The address answers, but not as a Dask dashboard."""


class NeedsCredentials(NotADashboard):
    """The dashboard answers 401 or 403: it wants a token, header or cookie dashdock does not have."""


class Unavailable(DashdockError):
    """Something dashdock relies on (a dashboard, a cluster process) failed or is unreachable."""


class TimedOut(Unavailable):
    """Something dashdock relies on did not answer in time."""


class Failed(DashdockError):
    """A cluster (or other tool dashdock drives) could not do what was asked."""


def host_not_allowed(netloc: str) -> NotAllowed:
    """The one way of saying that the allowlist refuses a host."""
    return NotAllowed(
        f"{netloc} is not an allowed dashboard host. "
        "An administrator can allow it with c.DashdockApp.allowed_targets."
    )
