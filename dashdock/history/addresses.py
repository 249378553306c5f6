"""When two scheduler addresses name the same scheduler, without asking the network.

A dashboard's info page may name its scheduler ``tcp://127.0.0.1:S`` once and ``tcp://localhost:S``
the next time (issue 40); a kernel's client says ``localhost:S``. They are one scheduler: one run,
one set of alerts. Only the loopback spellings are made one, by their text: nothing is resolved
(a name lookup may block, and what a remote name means is not dashdock's to guess).
"""

from __future__ import annotations

from typing import Protocol

# The names of this host's IPv4 loopback address that dashdock treats as that address. ``::1`` is
# left apart: a process may listen there that is not the one on 127.0.0.1 at the same port.
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "localhost.localdomain"})
_SPELLINGS = ("127.0.0.1", "localhost")


def _split(address: str) -> tuple[str, str, str]:
    """(scheme, host, port) of ``[scheme://]host:port``; the scheme is ``tcp`` when not given."""
    scheme, separator, rest = address.strip().partition("://")
    if not separator:
        scheme, rest = "tcp", scheme
    host, _, port = rest.rpartition(":")
    return scheme.lower(), host.lower().rstrip("."), port


def scheduler_key(address: str | None) -> str | None:
    """One text for every spelling of the same scheduler's address; None stays None."""
    if address is None:
        return None
    scheme, host, port = _split(address)
    if not host or not port:  # not host:port: compared as it is
        return address
    if host in _LOOPBACK:
        host = "127.0.0.1"
    return f"{scheme}://{host}:{port}"


def spellings(address: str) -> tuple[str, ...]:
    """The addresses earlier runs of this scheduler may have been stored under: ``address`` itself
    first, then, for a loopback one, its other ``tcp://`` spellings."""
    scheme, host, port = _split(address)
    if host not in _LOOPBACK or not port:
        return (address,)
    others = tuple(f"{scheme}://{name}:{port}" for name in _SPELLINGS)
    return (address, *(other for other in others if other != address))


class _Recorded(Protocol):
    def last_recorded(self, scheduler: str, but: str) -> tuple[float, frozenset[str]] | None: ...


def last_recorded_as_any(store: _Recorded, address: str, but: str) -> tuple[float, frozenset[str]] | None:
    """``store.last_recorded`` of the scheduler under any of its spellings, the newest: a new run
    skips, and does not alert again, what a run of it under another spelling kept."""
    kept = [found for name in spellings(address) if (found := store.last_recorded(name, but)) is not None]
    return max(kept, key=lambda found: found[0], default=None)
