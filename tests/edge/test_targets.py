"""What may be proxied: dashboard URL parsing, proxy target segments and the allowlist."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote, urlsplit

import pytest
from _support import Jupyter, RecordingUpstream
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from yarl import URL

from dashdock.targets import (
    DEFAULT_ALLOWED_TARGETS,
    Allowlist,
    Target,
    TargetError,
    parse_dashboard_url,
    parse_target_segment,
)

PORT = 4242
ALLOWED = Allowlist([f"127.0.0.1:{PORT}"])


@pytest.mark.parametrize(
    ("typed", "scheme", "host", "port", "path"),
    [
        ("127.0.0.1:8787", "http", "127.0.0.1", 8787, ""),
        ("http://127.0.0.1:8787/", "http", "127.0.0.1", 8787, ""),
        (" http://LocalHost.:8787/status/ ", "http", "localhost", 8787, "/status"),
        (
            "https://dask.example.org/user/alice/proxy/8787/status",
            "https",
            "dask.example.org",
            443,
            "/user/alice/proxy/8787/status",
        ),
        ("http://scheduler", "http", "scheduler", 80, ""),
        ("http://[::1]:8787/individual-task-stream", "http", "::1", 8787, "/individual-task-stream"),
        ("http://[0:0::1]:8787", "http", "::1", 8787, ""),
    ],
)
def test_a_typed_dashboard_url_is_understood(
    typed: str, scheme: str, host: str, port: int, path: str
) -> None:
    parsed = parse_dashboard_url(typed)
    assert parsed.target == Target(scheme, host, port)
    assert parsed.path == path


def test_an_ipv6_dashboard_has_a_bracketed_netloc() -> None:
    parsed = parse_dashboard_url("http://[::1]:8787/status")
    assert parsed.target.netloc == "[::1]:8787"
    assert parsed.url == "http://[::1]:8787/status"


@pytest.mark.parametrize(
    "typed",
    [
        "",
        "   ",
        "ftp://127.0.0.1:8787",
        "javascript:alert(1)",
        "http://user@127.0.0.1:8787",
        "http://user:pw@127.0.0.1:8787",
        "http://127.0.0.1:8787@10.0.0.1/",
        "http://127.0.0.1:99999",
        "http://127.0.0.1:0",
        "http://127.0.0.1:port",
        "http://2130706433:8787",
        "http://0x7f000001:8787",
        "http://0177.0.0.1:8787",
        "http://127.1:8787",
        "http://127.0.0.1\\@10.0.0.1/",
        "http://127.0.0.1:8787/\r\nHost: evil",
        "http://127.0.0.1:8787/<script>",
        "http://exa mple.com",
        "http://-bad-.example",
        "http://" + "a" * 2100,
        "http://[::1",
        "http://:8787",
    ],
)
def test_a_url_that_cannot_be_a_dashboard_is_rejected(typed: str) -> None:
    with pytest.raises(TargetError):
        parse_dashboard_url(typed)


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        ("127.0.0.1:8787", Target("http", "127.0.0.1", 8787)),
        ("LocalHost.:80", Target("http", "localhost", 80)),
        ("[::1]:8787", Target("http", "::1", 8787)),
        # Bare, as Dask's link template "{host}:{port}" writes an IPv6 host: split at the last colon.
        ("::1:8787", Target("http", "::1", 8787)),
        ("fe80::a:1:80", Target("http", "fe80::a:1", 80)),
        ("scheduler-0.dask:8787", Target("http", "scheduler-0.dask", 8787)),
    ],
)
def test_a_proxy_target_segment_is_host_and_port(segment: str, expected: Target) -> None:
    assert parse_target_segment(segment) == expected


@pytest.mark.parametrize(
    "segment",
    [
        "127.0.0.1",
        "127.0.0.1:",
        ":8787",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "127.0.0.1:123456",
        "a@127.0.0.1:8787",
        "127.0.0.1%3A8787",
        "%31%32%37.0.0.1:8787",
        "127.0.0.1:8787%2F..",
        "[127.0.0.1]:8787",
        "[::1]",
        "::1",
        "1:2:8787",
        "::1:8787:",
        "::g:8787",
        "2130706433:8787",
        "0x7f000001:8787",
        "0177.0.0.1:8787",
        "127.1:8787",
        "localhost\\:8787",
        "127.0.0.1:8787\r\n",
        "<script>:1",
    ],
)
def test_a_target_segment_that_is_not_plain_host_and_port_is_rejected(segment: str) -> None:
    with pytest.raises(TargetError):
        parse_target_segment(segment)


def test_target_errors_never_echo_their_input() -> None:
    hostile = "<script>alert(1)</script>"
    for parse in (parse_target_segment, parse_dashboard_url):
        with pytest.raises(TargetError) as error:
            parse(hostile)
        assert "script" not in str(error.value)


def test_the_default_allowlist_is_loopback_only() -> None:
    allowlist = Allowlist(list(DEFAULT_ALLOWED_TARGETS))
    for host in ("127.0.0.1", "127.8.9.10", "::1", "localhost"):
        assert allowlist.allows(Target("http", host, 8787)), host
    for host in (
        "10.1.2.3",
        "192.168.0.1",
        "::ffff:10.0.0.1",
        "localhost.example.com",
        "example.com",
        "0.0.0.0",
    ):
        assert not allowlist.allows(Target("http", host, 8787)), host


def test_allowlist_entries_of_each_kind() -> None:
    allowlist = Allowlist(["10.0.0.0/8", "Scheduler.Internal.", "dask.example.org:8787", "[::1]:9000"])
    assert allowlist.allows(Target("http", "10.200.0.1", 1))
    assert allowlist.allows(Target("https", "scheduler.internal", 443))
    assert allowlist.allows(Target("http", "dask.example.org", 8787))
    assert not allowlist.allows(Target("http", "dask.example.org", 8788))
    assert allowlist.allows(Target("http", "::1", 9000))
    assert not allowlist.allows(Target("http", "::1", 9001))
    # A network only matches IP literals, never a name that looks like one.
    assert not allowlist.allows(Target("http", "10.evil.example", 80))
    assert Allowlist(["*"]).allows(Target("http", "anything.example", 1))


# -- property: no spelling of a host reaches anything but the allowed host:port ----------------

_FRAGMENTS = [
    "127.0.0.1",
    f":{PORT}",
    ":80",
    ":",
    "@",
    "a@b",
    "user:pw@",
    "%40",
    "%2f",
    "%2F",
    "%252f",
    "%2e",
    "%2e%2e",
    "..",
    ".",
    "/",
    "\\",
    "%5c",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[",
    "]",
    "2130706433",
    "0x7f000001",
    "0177.0.0.1",
    "127.1",
    "127.0.0.1.",
    "LOCALHOST",
    "localhost.",
    "10.9.9.9",
    "evil.example",
    "\r\n",
    "\t",
    " ",
    "#",
    "?",
    "%3a",
    "http://",
    "https://",
    "//",
    "0",
    "\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3",  # circled "localhost"
    "\uff0e",  # fullwidth dot
]
# Spellings of a host, most of them of loopback, several of them ambiguous or smuggling another host.
_HOSTS = [
    "127.0.0.1",
    "127.0.0.1.",
    "127.0.0.2",
    "127.1",
    "127.000.000.001",
    "2130706433",
    "0x7f000001",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "localhost",
    "LOCALHOST.",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[127.0.0.1]",
    "10.9.9.9",
    "evil.example",
    "127.0.0.1.evil.example",
    "a@127.0.0.1",
    "127.0.0.1@evil.example",
    f"127.0.0.1:{PORT}@evil.example",
    "127.0.0.1%2f",
    "%31%32%37.0.0.1",
    "127.0.0.1\\",
    "127.0.0.1%00",
    "\uff11\uff12\uff17.0.0.1",  # fullwidth digits
]
_PORTS = [
    str(PORT),
    f"0{PORT}",
    "80",
    "0",
    "65536",
    "",
    f"{PORT}@evil.example",
    f"{PORT}%2f..",
    f"{PORT}.",
    " 80",
]
_SEPARATORS = [":", ":", ":", "%3a", "@", ""]

fragments = st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=6).map("".join)
host_and_port = st.builds(
    lambda host, separator, port: host + separator + port,
    st.sampled_from(_HOSTS),
    st.sampled_from(_SEPARATORS),
    st.sampled_from(_PORTS),
)
hostile_segments = st.one_of(host_and_port, host_and_port, fragments, st.text(max_size=30))
hostile_rests = st.one_of(st.just(""), fragments.map(lambda rest: "/" + rest))
hostile_paths = st.builds(lambda segment, rest: segment + rest, hostile_segments, hostile_rests)
hostile_urls = st.builds(
    lambda scheme, path: scheme + path,
    st.sampled_from(["", "http://", "https://", "HTTP://", "http:/", "http:\\\\", "//", "ftp://"]),
    hostile_paths,
)


def _connects_to(url: str) -> tuple[str | None, int | None]:
    """Where an HTTP client (yarl, as aiohttp uses it) would connect for this URL."""
    parsed = URL(url, encoded=True)
    return parsed.host, parsed.port


@settings(max_examples=500, deadline=None)
@given(hostile_paths)
@example(f"127.0.0.1:{PORT}/individual-task-stream")
@example(f"127.0.0.1:{PORT}/@10.9.9.9/x")
def test_a_hostile_proxy_path_is_rejected_or_reaches_only_its_literal_target(text: str) -> None:
    # How the proxy handler splits a path below dashdock/proxy/ into target and rest.
    segment, _, below = text.partition("/")
    try:
        target = parse_target_segment(segment)
    except TargetError:
        return
    if ALLOWED.allows(target):
        assert (target.host, target.port) == ("127.0.0.1", PORT)
        assert _connects_to(target.origin + "/" + below) == ("127.0.0.1", PORT)


@settings(max_examples=500, deadline=None)
@given(hostile_urls)
@example(f"http://127.0.0.1:{PORT}/status")
@example(f"127.0.0.1:{PORT}")
def test_a_hostile_dashboard_url_is_rejected_or_reaches_only_its_literal_target(text: str) -> None:
    try:
        dashboard = parse_dashboard_url(text)
    except TargetError:
        return
    if ALLOWED.allows(dashboard.target):
        assert (dashboard.target.host, dashboard.target.port) == ("127.0.0.1", PORT)
        assert _connects_to(dashboard.url + "/individual-plots.json") == ("127.0.0.1", PORT)
        # A second, independent reading of what the user typed agrees on the host.
        # (One trailing dot names the same host, as for a WHATWG URL parser.)
        typed = urlsplit(text.strip() if "://" in text else "http://" + text.strip())
        assert ((typed.hostname or "").removesuffix("."), typed.port) == ("127.0.0.1", PORT)


# -- property through the real server ----------------------------------------------------------

_SERVER_SEGMENTS = [
    *(host.replace(str(PORT), "APORT") for host in _HOSTS),
    "127.0.0.1:OPORT",
    "localhost:OPORT",
    "[::1]:OPORT",
    "[::ffff:127.0.0.1]:OPORT",
    "127.1:OPORT",
    "2130706433:OPORT",
    "127.0.0.1:APORT@127.0.0.1:OPORT",
    "127.0.0.1:OPORT@127.0.0.1:APORT",
    "127.0.0.1%3AOPORT",
    "127.0.0.1:APORT%2F..%2F127.0.0.1:OPORT",
    "127.0.0.1:APORT",
]
_SERVER_RESTS = [
    *(fragment for fragment in _FRAGMENTS if fragment not in ("\r\n", "\t", " ")),
    "127.0.0.1:OPORT",
    "@127.0.0.1:OPORT",
    "redirect?to=http://127.0.0.1:OPORT/",
    "redirect?to=//127.0.0.1:OPORT/",
    "redirect?to=http://127.0.0.1:APORT@127.0.0.1:OPORT/",
    "ws",
]
server_paths = st.builds(
    lambda segment, separator, port, rest: segment + separator + port + "/" + "".join(rest),
    st.sampled_from(_SERVER_SEGMENTS),
    st.sampled_from(["", "", ":"]),
    st.sampled_from(["", "OPORT", "APORT"]),
    st.lists(st.sampled_from(_SERVER_RESTS), max_size=4),
)


def _as_a_browser_sends(path: str) -> str:
    """Percent-encode what cannot appear raw in a request line; keep existing escapes."""
    return quote(path, safe="!$&'()*+,/:;=?@[]~%<>\"\\^`{|}")


class TestProxyPathsThroughTheServer:
    """Only one dashboard is allowed; no path under dashdock/proxy/ reaches another loopback server."""

    @pytest.fixture
    def dashdock_config(self, recorder: RecordingUpstream) -> dict[str, Any]:
        return {"allowed_targets": [recorder.netloc]}

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(path=server_paths)
    @example(path="127.0.0.1:APORT/redirect?to=http://127.0.0.1:OPORT/")
    def test_no_proxy_path_reaches_a_server_that_is_not_allowed(
        self,
        jupyter: Jupyter,
        recorder: RecordingUpstream,
        outsider: RecordingUpstream,
        jp_asyncio_loop: asyncio.AbstractEventLoop,
        path: str,
    ) -> None:
        path = path.replace("OPORT", str(outsider.port)).replace("APORT", str(recorder.port))
        response = jp_asyncio_loop.run_until_complete(
            jupyter.proxied("dashdock/proxy/" + _as_a_browser_sends(path))
        )
        assert response.code != 599, response.error
        assert outsider.seen == [], path
