"""An authenticating front that forwards each request unchanged, as sites put nginx or Traefik.

It checks the first request of each connection for its credential (a header, a cookie or a query
parameter, as the test says), then relays the connection's bytes both ways untouched: the
dashboard behind it sees every header, cookie and query parameter dashdock sent, credential
included, which is what a Bokeh server packs into the session token it writes into the page.

Two paths are answered by the front itself, as fronts do: ``/front/redirect`` redirects to
``/front/landing`` keeping its whole query, and ``/front/echo`` prints the request it got (and sets
a cookie holding the credential), as a debugging page or a login front would.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

MAX_HEAD = 64 * 1024


@dataclass
class Credential:
    kind: str  # "header", "query" or "cookie"
    name: str
    value: str

    def api(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "value": self.value}

    def admits(self, head: str) -> bool:
        lines = head.split("\r\n")
        target = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 2 else ""
        fields = [line.partition(":") for line in lines[1:] if ":" in line]
        headers = [(name.strip().lower(), value.strip()) for name, _, value in fields]
        if self.kind == "header":
            return (self.name.lower(), self.value) in headers
        if self.kind == "cookie":
            cookies = "; ".join(value for name, value in headers if name == "cookie")
            return f"{self.name}={self.value}" in [part.strip() for part in cookies.split(";")]
        return (self.name, self.value) in parse_qsl(urlsplit(target).query)


@dataclass
class AuthFront:
    """The front on 127.0.0.1:``port``, relaying to ``upstream_port``; ``seen`` holds request heads."""

    credential: Credential
    upstream_port: int
    port: int = 0
    seen: list[str] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _writers: set[asyncio.StreamWriter] = field(default_factory=set)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def close(self) -> None:
        """Stop listening and cut every open connection, as a process that ends."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            self._writers.discard(writer)
            writer.close()
            return
        self.seen.append(head)
        path = head.split(" ", 2)[1] if head.count(" ") >= 2 else "/"
        if not self.credential.admits(head):
            await self._answer(writer, "401 Unauthorized", "credentials needed")
        elif path.startswith("/front/redirect"):
            query = urlsplit(path).query
            await self._answer(writer, "302 Found", "", [("Location", f"/front/landing?{query}")])
        elif path.startswith("/front/echo"):
            cookie = ("Set-Cookie", f"front-session={self.credential.value}; Path=/")
            await self._answer(writer, "200 OK", head, [cookie, ("X-Seen", self.credential.value)])
        else:
            await self._relay(head, reader, writer)
        self._writers.discard(writer)

    async def _answer(
        self, writer: asyncio.StreamWriter, status: str, body: str, headers: list[tuple[str, str]] = ()
    ) -> None:
        data = body.encode("latin-1")
        lines = [f"HTTP/1.1 {status}", "Content-Type: text/plain", f"Content-Length: {len(data)}"]
        lines += [f"{name}: {value}" for name, value in headers]
        lines += ["Connection: close", "", ""]
        writer.write("\r\n".join(lines).encode("latin-1") + data)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    async def _relay(self, head: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._writers.add(up_writer)
        up_writer.write(head.encode("latin-1"))

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        self._writers.discard(up_writer)
