"""What crosses the proxy boundary: request headers and query going up, response headers coming down.

Going up, only headers a dashboard needs pass (an allowlist, so a new credential header is never
forwarded by accident): the browser's Jupyter cookies, ``Authorization``, XSRF token and ``token``
query parameter stay on this server. Coming down, redirects are kept on the same dashboard and
cookies are confined to the proxy's own path.
"""

from __future__ import annotations

from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

from .targets import Target

# Request headers a dashboard may see. Everything else (Cookie, Authorization, X-XSRFToken,
# Referer with its possible ?token=, X-Forwarded-*, Origin) is dropped.
FORWARDED_REQUEST_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "content-type",
        "if-match",
        "if-modified-since",
        "if-none-match",
        "if-range",
        "pragma",
        "range",
        "user-agent",
    }
)

# Query parameters that authenticate to Jupyter, or address dashdock itself: they stay here.
_PRIVATE_QUERY_KEYS = frozenset({"token", "_xsrf", "dashdock-pane"})

# Hop-by-hop and framing headers that the relay sets itself.
_DROPPED_RESPONSE_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "server",
        "date",
        "content-security-policy",
        "x-frame-options",
        "set-cookie",
        "location",
    }
)

# Proxied pages are framed by the Lab page, whatever framing policy the deployment sets elsewhere.
FRAME_POLICY = "frame-ancestors 'self'"


def upstream_request_headers(browser_headers: dict[str, str] | object) -> dict[str, str]:
    """The browser's headers that may reach the dashboard."""
    items = browser_headers.get_all() if hasattr(browser_headers, "get_all") else browser_headers.items()  # type: ignore[union-attr]
    return {name: value for name, value in items if name.lower() in FORWARDED_REQUEST_HEADERS}


def upstream_query(query: str) -> str:
    """The query string without Jupyter credentials and dashdock's own keys, otherwise as sent."""
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(key in _PRIVATE_QUERY_KEYS for key, _ in pairs):
        return query
    return urlencode([(key, value) for key, value in pairs if key not in _PRIVATE_QUERY_KEYS])


def passed_response_headers(upstream_headers: object) -> list[tuple[str, str]]:
    """Response headers that pass unchanged."""
    return [
        (name, value)
        for name, value in upstream_headers.items()  # type: ignore[attr-defined]
        if name.lower() not in _DROPPED_RESPONSE_HEADERS
    ]


def rewrite_location(
    location: str, target: Target, upstream_root: str, request_url: str, proxy_prefix: str
) -> str | None:
    """Map a dashboard redirect onto the proxy, or ``None`` when it leaves the dashboard.

    ``request_url`` is the upstream URL that was requested, so relative locations resolve as the
    dashboard meant them; only locations on the same target and under the dashboard root survive.
    """
    absolute = urljoin(request_url, location)
    parts = urlsplit(absolute)
    try:
        same_target = (
            parts.scheme == target.scheme
            and parts.hostname is not None
            and parts.hostname.lower() == target.host
            and (parts.port or (443 if parts.scheme == "https" else 80)) == target.port
            and not parts.username
        )
    except ValueError:
        return None
    if not same_target:
        return None
    path = parts.path or "/"
    if upstream_root and not (path == upstream_root or path.startswith(upstream_root + "/")):
        return None
    rewritten = proxy_prefix + path[len(upstream_root) :]
    return rewritten + (f"?{parts.query}" if parts.query else "")


def confine_cookie(set_cookie: str, proxy_prefix: str) -> str | None:
    """Pin a dashboard's cookie to the proxy path of that dashboard, with no Domain attribute."""
    cookie = SimpleCookie()
    try:
        cookie.load(set_cookie)
    except CookieError:
        return None
    if len(cookie) != 1:
        return None
    (morsel,) = cookie.values()
    original_path = morsel["path"] or "/"
    morsel["domain"] = ""
    morsel["path"] = proxy_prefix.rstrip("/") + (original_path if original_path.startswith("/") else "/")
    return morsel.OutputString()
