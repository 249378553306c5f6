"""What crosses the proxy boundary: request headers and query going up, response headers coming down.

Going up, only headers a dashboard needs pass (an allowlist, so a new credential header is never
forwarded by accident): the browser's Jupyter cookies, ``Authorization``, XSRF token and ``token``
query parameter stay on this server. Coming down, an allowlist again: redirects are kept on the
same dashboard, cookies are confined to the page's own path, and the dashboard's content security
policy is kept under dashdock's sandbox, which puts every proxied page in an opaque origin.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit

from tornado.httputil import HTTPHeaders

from dashdock.targets import Target

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
_CREDENTIAL_QUERY_KEYS = frozenset({"token", "_xsrf"})
_PRIVATE_QUERY_KEYS = _CREDENTIAL_QUERY_KEYS | {"dashdock-pane"}

# Response headers a dashboard may send to the browser (an allowlist, like the request side): what a
# page needs to be read, cached and ranged. Everything else is dropped, notably
# Service-Worker-Allowed, Access-Control-*, Strict-Transport-Security, WWW-Authenticate (a password
# prompt that would carry this server's name), Refresh, Link and any X-*. Set-Cookie, Location and
# Content-Security-Policy are passed only through the functions below.
PASSED_RESPONSE_HEADERS = frozenset(
    {
        "accept-ranges",
        "age",
        "cache-control",
        "content-disposition",
        "content-encoding",
        "content-language",
        "content-length",
        "content-range",
        "content-type",
        "etag",
        "expires",
        "last-modified",
        "retry-after",
        "vary",
    }
)

# Every proxied response runs in an opaque origin: no access to Jupyter's cookies, storage, APIs,
# service worker scope or the Lab window. Scripts run (Bokeh needs them), popups open sandboxed too,
# and Bokeh's save tool may download a picture. Lab may frame the page, whatever framing policy the
# deployment sets elsewhere.
SANDBOX = "sandbox allow-scripts allow-popups allow-downloads"
PROXIED_PAGE_POLICY = f"{SANDBOX}; frame-ancestors 'self'"
# What dashdock's own error pages may do: nothing but show inline-styled text.
ERROR_PAGE_POLICY = "sandbox; frame-ancestors 'self'; default-src 'none'; style-src 'unsafe-inline'"

# Where a page's requests may go: its own view URL, whatever the scheme it is reached by (TLS may
# end in front of Jupyter). Scripts run inline and by eval (Bokeh, Panel), pictures may be data or
# blob URLs; nothing else of any host, this one's other paths (Jupyter's API) included.
_CONFINED_SCHEMES = ("http", "https", "ws", "wss")
_HOST_RE = re.compile(r"^[A-Za-z0-9.\-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$")
# Characters a CSP source expression's path may hold as they are (';', ',' and spaces would end it).
_PATH_SAFE = "/:@!$&'()*+=-._~"

# Directives of a dashboard's own policy that are not its to decide: framing (Lab frames it) and
# reporting (where violations are sent). Every other directive is kept, so the policies only add up.
_DROPPED_DIRECTIVES = frozenset({"frame-ancestors", "report-uri", "report-to"})
_DIRECTIVE_NAME_RE = re.compile(r"^[a-z0-9-]+$")
# Bounds on what is parsed of a dashboard's policy.
_MAX_POLICY_HEADERS = 8
_MAX_POLICY_LENGTH = 8192


def upstream_request_headers(browser_headers: Mapping[str, str]) -> dict[str, str]:
    """The browser's headers that may reach the dashboard."""
    # Every value of a repeated header, as tornado keeps them (``HTTPHeaders.get_all``).
    items = browser_headers.get_all() if isinstance(browser_headers, HTTPHeaders) else browser_headers.items()
    return {name: value for name, value in items if name.lower() in FORWARDED_REQUEST_HEADERS}


def upstream_query(query: str) -> str:
    """The query string without Jupyter credentials and dashdock's own keys, otherwise as sent."""
    return _without_keys(query, _PRIVATE_QUERY_KEYS)


def query_without_credentials(query: str) -> str:
    """The query string without Jupyter credentials (a view URL must not carry the user's token)."""
    return _without_keys(query, _CREDENTIAL_QUERY_KEYS)


def _without_keys(query: str, keys: frozenset[str]) -> str:
    if not query:
        return ""
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(key in keys for key, _ in pairs):
        return query
    return urlencode([(key, value) for key, value in pairs if key not in keys])


def passed_response_headers(upstream_headers: Mapping[str, str]) -> list[tuple[str, str]]:
    """Response headers that pass unchanged (aiohttp's multidict gives every value of a name)."""
    return [
        (name, value) for name, value in upstream_headers.items() if name.lower() in PASSED_RESPONSE_HEADERS
    ]


def readable_picture(content_type: str) -> bool:
    """A picture a page may read in CORS mode: Bokeh loads images with ``crossOrigin`` set (Task
    Groups' library logos), and a sandboxed page's origin is opaque, so without this header a
    picture of the page's own view URL is refused. A picture reveals nothing the page holding its
    view URL cannot already show; no credential rides on the request (a CORS request from an
    opaque origin carries no cookie)."""
    return content_type.split(";")[0].strip().lower().startswith("image/")


def content_security_policies(upstream_policies: list[str]) -> list[str]:
    """The policies a proxied response carries: dashdock's sandbox, then the dashboard's own.

    A browser enforces every policy it is sent, so the dashboard's directives still hold (its
    ``script-src``, its own ``sandbox``); only framing and reporting directives are left out.
    """
    kept = [PROXIED_PAGE_POLICY]
    for header in upstream_policies[:_MAX_POLICY_HEADERS]:
        if len(header) > _MAX_POLICY_LENGTH:
            continue
        for policy in header.split(","):
            directives = []
            for directive in policy.split(";"):
                words = directive.split()
                if not words or not _DIRECTIVE_NAME_RE.match(words[0].lower()):
                    continue
                if words[0].lower() not in _DROPPED_DIRECTIVES:
                    directives.append(" ".join(words))
            if directives:
                kept.append("; ".join(directives))
    return kept


def confinement_policy(hosts: list[str], view_prefix: str) -> str:
    """The policy that keeps a page's requests (fetch, websockets, pictures, fonts, frames, forms,
    scripts) on its own view URL, under each name the browser may know this server by."""
    path = quote(view_prefix.rstrip("/") + "/", safe=_PATH_SAFE)
    valid = [host for host in dict.fromkeys(hosts) if _HOST_RE.match(host)]
    own = " ".join(f"{scheme}://{host}{path}" for host in valid for scheme in _CONFINED_SCHEMES) or "'none'"
    return f"default-src {own} 'unsafe-inline' 'unsafe-eval' data: blob:; form-action {own}; base-uri {own}"


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
