"""What a dashboard sends back is cleaned of the credential dashdock gave it, before the browser sees it.

dashdock adds a held credential (sources/credentials.py) to each request it sends a dashboard.
Whatever forwards that request (a Bokeh server packing it into a session token, a front that
redirects keeping its query, a page that prints its request) may send the credential back. Here
the way back is cleaned: Bokeh session tokens become stand-ins (session_tokens.py), the
credential's value (as written, URL- and HTML-escaped, in JSON or base64) is cut out of text
bodies and redirects, and a response header or cookie that carries it is dropped.

Bodies are cleaned as they stream: a chunk's end that might be the start of a token or of the
value is held back until the next chunk shows where it ends.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

from dashdock.proxy.session_tokens import TOKEN_CHARS, TOKEN_START, SessionTokens

REMOVED = b"[removed by dashdock]"
# Text that may carry a token or the value: pages, scripts, JSON, event streams (only a chunk's
# undecided tail is held back, so a stream still flows).
_TEXT_TYPES = ("text/", "application/json", "application/javascript", "application/x-javascript")
_TOKEN_RE = re.compile(rb"eyJ[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)?")
# A run of token characters at a chunk's end is held back up to this length: a Bokeh token is a
# few KiB, and a run longer than this is data (an inline image), not a token.
MAX_HELD_RUN = 64 * 1024
# Words of a credential's value this long or longer are secrets of their own ("Bearer <token>").
_MIN_SECRET_WORD = 8


def is_text(content_type: str) -> bool:
    kind = content_type.lower()
    return kind.startswith(_TEXT_TYPES) or kind.endswith("+json") or kind.endswith("+xml")


def secret_forms(value: str | None) -> list[bytes]:
    """Every way a body may spell ``value`` (and each long word of it), longest first."""
    if not value:
        return []
    words = [value, *(word for word in value.split() if len(word) >= _MIN_SECRET_WORD and word != value)]
    forms: set[str] = set()
    for word in words:
        forms |= {
            word,
            quote(word, safe=""),
            quote_plus(word),
            html.escape(word),
            json.dumps(word)[1:-1],
            base64.b64encode(word.encode()).decode().rstrip("="),
            base64.urlsafe_b64encode(word.encode()).decode().rstrip("="),
        }
    return sorted((form.encode() for form in forms if form), key=len, reverse=True)


def carries(text: str, forms: Iterable[bytes]) -> bool:
    raw = text.encode("utf-8", errors="replace")
    return any(form in raw for form in forms)


def clean_location(location: str, forms: list[bytes], query_name: str | None) -> str:
    """A redirect's target without the credential: its query parameter and any pair carrying it."""
    if not forms and query_name is None:
        return location
    parts = urlsplit(location)
    pairs = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key != query_name and not carries(value, forms)
    ]
    cleaned = urlunsplit(parts._replace(query=urlencode(pairs)))
    # What the query could not hide (a path or fragment spelling the value) is cut out.
    for form in forms:
        cleaned = cleaned.replace(form.decode(), REMOVED.decode())
    return cleaned


class BodyScrubber:
    """One response body, cleaned chunk by chunk; ``feed`` then ``finish``."""

    def __init__(self, forms: list[bytes], tokens: SessionTokens, dashboard: str) -> None:
        self._forms = forms
        self._tokens = tokens
        self._dashboard = dashboard
        self._hold = max((len(form) for form in forms), default=1) - 1
        self._buffer = b""

    def feed(self, chunk: bytes) -> bytes:
        self._buffer += chunk
        return self._emit(final=False)

    def finish(self) -> bytes:
        return self._emit(final=True)

    def _emit(self, final: bool) -> bytes:
        buffer = self._buffer
        cut = len(buffer)
        if not final:
            cut = max(0, len(buffer) - self._hold)
            run = len(buffer) - len(buffer.rstrip(TOKEN_CHARS))
            if run <= MAX_HELD_RUN:
                cut = min(cut, len(buffer) - run)
            # A spelling of the value that straddles the cut waits for the next chunk whole.
            for form in self._forms:
                start = buffer.find(form, max(0, cut - len(form) + 1))
                if 0 <= start < cut < start + len(form):
                    cut = start
        ready, self._buffer = buffer[:cut], buffer[cut:]
        return self._clean(ready)

    def _clean(self, text: bytes) -> bytes:
        if TOKEN_START in text:
            text = _TOKEN_RE.sub(self._replace_token, text)
        for form in self._forms:
            text = text.replace(form, REMOVED)
        return text

    def _replace_token(self, match: re.Match[bytes]) -> bytes:
        found = match.group().decode("ascii")
        stand_in = self._tokens.stand_in(found, self._dashboard)
        return stand_in.encode("ascii") if stand_in is not None else match.group()
