"""What the proxy may reach: parsing dashboard URLs and proxy targets, and the allowlist.

The proxy never derives a host from anything but a strictly parsed target, so nothing in the
rest of a request path (``@``, encoded slashes, backslashes, dots) can move a request to
another host. Host names are compared literally and IP networks only match IP literals: no
DNS lookup takes part in an allow decision.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

DEFAULT_ALLOWED_TARGETS = ("127.0.0.0/8", "::1/128", "localhost")

_HOST_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^{_HOST_LABEL}(?:\.{_HOST_LABEL})*$")
# Labels that getaddrinfo would read as a number (``0x7f``, ``017``, ``2130706433``).
_NUMERIC_LABEL_RE = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$")
# A target segment in a proxy path: ``host:port`` or ``[v6]:port``; nothing else.
_TARGET_SEGMENT_RE = re.compile(
    r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[A-Za-z0-9.-]+)|(?P<bare>[0-9a-fA-F:.]*:[0-9a-fA-F:.]*))"
    r":(?P<port>[0-9]{1,5})$"
)
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\<>\"'`{}|^]")
MAX_URL_LENGTH = 2048
# What some server along the way may take for a segment separator: "/" and "\\" (Windows, some fronts).
_SEGMENT_SEPARATORS = re.compile(r"[/\\]")
# Percent-decodings tried on a path; one still encoded after that many is refused as a dot segment.
_MAX_DECODINGS = 4


class TargetError(ValueError):
    """A URL or target that cannot be proxied; the message is safe to show (it echoes no input)."""


@dataclass(frozen=True)
class Target:
    """A host the proxy can connect to."""

    scheme: str
    host: str
    port: int

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.netloc}"


@dataclass(frozen=True)
class DashboardURL:
    """A dashboard URL as typed by a user, split into its target and the path under it."""

    target: Target
    path: str

    @property
    def url(self) -> str:
        return self.target.origin + self.path


def is_text(value: str) -> bool:
    """Whether a string is text that can be written out: JSON allows lone surrogates, UTF-8 does not."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def has_dot_segment(path: str) -> bool:
    """Whether a raw (percent-encoded) path has a segment that some reader could take for ``.`` or
    ``..``: raw or encoded in any case (``%2e%2E``, ``.%2e``, twice encoded ``%252e``), between
    ``/`` or ``\\`` raw or encoded (``..%2f``, ``..%5c``), with path parameters (``..;x``) or padding
    after it (``.. ``, ``..%00``). Such a path could leave the dashboard's root on the dashboard's
    side or in a front that normalises it, so the proxy never sends one on."""
    text = path
    for _ in range(_MAX_DECODINGS):
        for segment in _SEGMENT_SEPARATORS.split(text):
            name = segment.split(";", 1)[0].split("\x00", 1)[0].strip()
            if name in (".", ".."):
                return True
        decoded = unquote(text, errors="replace")
        if decoded == text:
            return False
        text = decoded
    return True


def without_userinfo(url: str) -> str:
    """``url`` without a user name and password (``http://user:pw@host/x`` -> ``http://host/x``)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def userinfo_of(url: str) -> tuple[str, str] | None:
    """The (decoded) user name and password a URL carries, or None."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return None
    return unquote(parts.username or ""), unquote(parts.password or "")


def normalize_host(host: str) -> str:
    """Lower-case a host, drop one trailing dot and IPv6 brackets; reject anything ambiguous."""
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise TargetError("The host name is empty.")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if not _HOSTNAME_RE.match(host) or len(host) > 253:
        raise TargetError("The host name is not valid.")
    if all(_NUMERIC_LABEL_RE.match(label) for label in host.split(".")):
        raise TargetError("The host is a number in a form that is not a plain IP address.")
    return host


def _parse_port(text: str) -> int:
    port = int(text)
    if not 0 < port < 65536:
        raise TargetError("The port is out of range.")
    return port


def parse_target_segment(segment: str) -> Target:
    """Parse the ``host:port`` segment of a proxy path (always plain HTTP).

    An IPv6 host comes bracketed (``[::1]:8787``) or bare (``::1:8787``, what Dask's link template
    ``{host}:{port}`` makes of it): a bare one is split at its last colon, and must be an IPv6
    address."""
    match = _TARGET_SEGMENT_RE.match(segment)
    if not match:
        raise TargetError("The proxy target must be a source id or host:port.")
    v6 = match["v6"] or match["bare"]
    host = normalize_host(v6 or match["host"])
    if v6 and ":" not in host:
        raise TargetError("The host name is not valid.")
    return Target("http", host, _parse_port(match["port"]))


def parse_dashboard_url(text: str) -> DashboardURL:
    """Parse a URL typed by a user (``127.0.0.1:8787``, ``http://host:8787/status``, ...)."""
    text = text.strip()
    if not text:
        raise TargetError("Enter the URL of a Dask dashboard, such as http://127.0.0.1:8787.")
    if len(text) > MAX_URL_LENGTH or _UNSAFE_URL_CHARS.search(text) or not is_text(text):
        raise TargetError("The URL contains characters a dashboard URL cannot have.")
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise TargetError("The URL is not valid.") from exc
    if parts.scheme not in ("http", "https"):
        raise TargetError("Only http and https dashboard URLs are supported.")
    if "@" in parts.netloc:
        raise TargetError("Dashboard URLs cannot carry a user name or password.")
    if not parts.hostname:
        raise TargetError("The URL has no host.")
    if has_dot_segment(parts.path):
        raise TargetError("The URL's path has '.' or '..' segments; give the dashboard's own path.")
    host = normalize_host(parts.hostname)
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    path = parts.path.rstrip("/")
    return DashboardURL(Target(parts.scheme, host, _parse_port(str(port))), path)


class Allowlist:
    """Which targets may be proxied, from entries such as ``127.0.0.0/8``, ``host``, ``host:port``, ``*``."""

    def __init__(self, entries: list[str] | tuple[str, ...]) -> None:
        self._any = False
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self._hosts: set[str] = set()
        self._host_ports: set[tuple[str, int]] = set()
        for entry in entries:
            self._add(entry.strip())

    def _add(self, entry: str) -> None:
        if entry == "*":
            self._any = True
            return
        if "/" in entry:
            self._networks.append(ipaddress.ip_network(entry, strict=False))
            return
        match = _TARGET_SEGMENT_RE.match(entry)
        if match:
            host = normalize_host(match["v6"] or match["host"])
            self._host_ports.add((host, _parse_port(match["port"])))
        else:
            self._hosts.add(normalize_host(entry))

    def allows(self, target: Target) -> bool:
        if self._any or target.host in self._hosts or (target.host, target.port) in self._host_ports:
            return True
        try:
            address = ipaddress.ip_address(target.host)
        except ValueError:
            return False
        return any(address in network for network in self._networks)
