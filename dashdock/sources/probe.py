"""Finding the dashboard behind a typed URL: its root is where Dask lists its plots."""

from __future__ import annotations

from dashdock.errors import NeedsCredentials, NotADashboard, Unavailable
from dashdock.sources.catalog import parse_catalog
from dashdock.targets import DashboardURL
from dashdock.upstream import UnreadableDocument, UpstreamClient, UpstreamError

# How deep a typed URL may sit below the dashboard root (``/proxy/8787/status`` is 3).
_MAX_ROOT_SEARCH = 6
# Statuses of a dashboard that wants credentials.
LOCKED = (401, 403)


async def find_root(client: UpstreamClient, typed: DashboardURL) -> DashboardURL:
    """The root of the Dask dashboard a typed URL (the root or any page below it) belongs to."""
    for candidate in root_candidates(typed.path):
        root = DashboardURL(typed.target, candidate)
        try:
            document = await client.get_json(root.url + "/individual-plots.json")
        except UnreadableDocument as exc:
            raise Unavailable(
                f"{typed.target.netloc} answered with a plot list dashdock cannot read: {exc.reason}"
            ) from exc
        except UpstreamError as exc:
            if exc.unreachable:
                raise Unavailable(f"Could not reach {typed.target.netloc}: {exc.reason}") from exc
            if exc.status in LOCKED:
                given = typed.target.origin in client.credentials
                raise needs_credentials(typed.target.netloc, exc.status, given) from exc
            continue
        if isinstance(document, dict) and parse_catalog(document):
            return root
    raise NotADashboard(f"{typed.target.netloc} answers, but not as a Dask dashboard (it lists no plots).")


def needs_credentials(netloc: str, status: int | None, given: bool) -> NeedsCredentials:
    if given:
        return NeedsCredentials(f"{netloc} refused the credentials given (HTTP {status}): check them.")
    return NeedsCredentials(
        f"{netloc} asks for credentials (HTTP {status}): give its token, header or cookie with the URL."
    )


def root_candidates(path: str) -> list[str]:
    """'/a/b/status' -> ['/a/b/status', '/a/b', '/a', '']: a page of a dashboard or the root itself."""
    segments = [segment for segment in path.split("/") if segment]
    candidates = ["/" + "/".join(segments[:end]) if end else "" for end in range(len(segments), -1, -1)]
    return candidates[:_MAX_ROOT_SEARCH]
