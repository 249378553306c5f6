"""Who listens on a port of this machine: the user id that owns the listening socket (Linux).

On a shared login node, a dashboard's port is free again once its process ends, and any other
user may listen there next. A credential given for a dashboard on this machine is sent only while
the socket on its port belongs to the user it belonged to when the credential was given
(credentials.py); ``/proc/net/tcp`` and ``/proc/net/tcp6`` tell who owns it.
"""

from __future__ import annotations

import ipaddress
import sys
from pathlib import Path

_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_LISTEN = "0A"
# A listening socket on any of these reaches a loopback target.
_ANY = {ipaddress.ip_address("0.0.0.0"), ipaddress.ip_address("::")}


def is_local_host(host: str) -> bool:
    """Whether ``host`` names this machine's loopback (the only addresses whose owner is known)."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def can_tell() -> bool:
    """Whether this system says who owns a socket (Linux's /proc)."""
    return _TABLES[0].exists()


def listener_owners(port: int) -> set[int]:
    """The user ids owning the sockets that listen on ``port`` on a loopback or any address.

    Blocking (reads /proc): call it in a thread.
    """
    owners: set[int] = set()
    for table in _TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 8 or fields[3] != _LISTEN:
                continue
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) != port:
                continue
            local = _address(address)
            if local is not None and (local in _ANY or local.is_loopback or _mapped_loopback(local)):
                owners.add(int(fields[7]))
    return owners


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address as /proc writes it: 32-bit words, each in the host's (little-endian) order."""
    try:
        raw = bytes.fromhex(hex_address)
    except ValueError:
        return None
    if sys.byteorder == "big":
        words = raw
    else:
        words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return ipaddress.IPv4Address(words)
    if len(words) == 16:
        return ipaddress.IPv6Address(words)
    return None


def _mapped_loopback(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped is not None and (mapped.is_loopback or mapped in _ANY)
