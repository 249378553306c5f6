"""dashdock's HTTP edge: where domain errors become statuses, and the base of its API handlers.

Only handlers know HTTP. Domain code raises ``dashdock.errors`` kinds; ``DomainErrors`` turns any
of them that leaves a handler into the HTTP error of its kind, so an API client gets
``{"message": reason}`` and a proxied page a short error page, with no try/except per handler.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from types import TracebackType
from typing import Any

from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import web

from dashdock.errors import (
    Conflict,
    DashdockError,
    Failed,
    Invalid,
    NeedsCredentials,
    NotADashboard,
    NotAllowed,
    NotFound,
    OverLimit,
    TimedOut,
    Unavailable,
)
from dashdock.ids import PANE_ID

# Most specific first: TimedOut is a kind of Unavailable.
_STATUS: tuple[tuple[type[DashdockError], int], ...] = (
    (Invalid, 400),
    (NotAllowed, 403),
    (NotFound, 404),
    (Conflict, 409),
    (OverLimit, 409),
    (NotADashboard, 422),
    (TimedOut, 504),
    (Unavailable, 502),
    (Failed, 500),
)

# Route patterns of the ids in dashdock's API. Any segment is routed, so that an unknown id gets
# the API's JSON 404 ("no source with this id"), not Jupyter's HTML page; the registries decide.
SOURCE_ID_ARG = r"(?P<source_id>[^/]{1,100})"
CLUSTER_ID_ARG = r"(?P<cluster_id>[^/]{1,100})"
PANE_ID_ARG = rf"(?P<pane_id>{PANE_ID})"

DEFAULT_MAX_BODY = 1024 * 1024


def status_of(error: DashdockError) -> int:
    return next((status for kind, status in _STATUS if isinstance(error, kind)), 500)


def as_http_error(error: DashdockError) -> web.HTTPError:
    # A reason the Lab acts on: it asks for the credentials (sources/credentials.py).
    reason = "needs-credentials" if isinstance(error, NeedsCredentials) else None
    return web.HTTPError(status_of(error), error.reason.replace("%", "%%"), reason=reason)


class DomainErrors(web.RequestHandler):
    """Mixed into every dashdock handler: a domain error is answered and logged as its HTTP error."""

    def send_error(self, status_code: int = 500, **kwargs: Any) -> None:
        exc_info = kwargs.get("exc_info")
        if exc_info and isinstance(exc_info[1], DashdockError):
            error = as_http_error(exc_info[1])
            kwargs["exc_info"] = (type(error), error, exc_info[2])
            status_code = error.status_code
        super().send_error(status_code, **kwargs)

    def log_exception(
        self, typ: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(value, DashdockError):
            typ, value = web.HTTPError, as_http_error(value)
        super().log_exception(typ, value, tb)


@web.stream_request_body
class ApiHandler(DomainErrors, APIHandler):
    """Base of ``dashdock/api/`` handlers: JSON in and out, bodies bounded, Jupyter's auth and XSRF.

    The body is received as a stream so that one larger than ``max_body`` is refused (413) from
    its Content-Length, before it is read, and a chunked one as soon as it passes the limit.
    """

    auth_resource = "dashdock"

    def _initialize_api(self, max_body: int = DEFAULT_MAX_BODY) -> None:
        self._max_body = max_body
        self._body = bytearray()

    # Typed as tornado types ``RequestHandler.initialize``: each handler takes the arguments of its
    # route, so a subclass's ``initialize`` adds its own before ``max_body``.
    initialize: Callable[..., None] = _initialize_api

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        if self._finished:
            return
        length = self.request.headers.get("Content-Length", "0")
        if not length.isdigit() or int(length) > self._max_body:
            # tornado closes the connection after this answer instead of reading the refused body.
            raise web.HTTPError(
                413,
                f"The request body is larger than {self._max_body:,} bytes (c.DashdockApp.max_request_body).",
            )
        self.request.connection.set_max_body_size(self._max_body)  # type: ignore[union-attr]

    def data_received(self, chunk: bytes) -> None:
        self._body += chunk

    def read_json_body(self) -> dict[str, Any]:
        try:
            body = json.loads(bytes(self._body) or b"{}")
        except (ValueError, RecursionError):
            raise Invalid("The request body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise Invalid("The request body must be a JSON object.")
        return body

    def finish_json(self, document: object, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(document))

    def proxy_url(self, target: str, path: str) -> str:
        """The link form of a dashboard page: ``target`` is a source id or a ``host:port``."""
        return url_path_join(self.base_url, "dashdock/proxy", target) + path
