"""Free ports for the servers and kernels the tests start, chosen where no connection takes them.

Linux hands out ports of its ephemeral range by itself, to a bind to port 0 and to every outgoing
connection. A port chosen there and released (the usual probe) can be taken by any connection of
any process before the server it was chosen for binds it: a Dask scheduler then fails with "Address
already in use", and so does a kernel (jupyter_client chooses a kernel's five ports so, and a fresh
clone's CI run lost a test to it). Below that range, only a choice like this one takes a port.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

HOST = "127.0.0.1"


def _below_ephemeral() -> range:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return range(max(1024, low - 12_000), low)


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports, below the ephemeral range when there is room (else any); each
    probe stays bound until all are chosen, so two probes never get the same port."""
    chosen = _below_ephemeral()
    with contextlib.ExitStack() as stack:
        ports: list[int] = []
        while len(ports) < count:
            probe = stack.enter_context(socket.socket())
            try:
                probe.bind((HOST, random.choice(chosen) if len(chosen) >= 1000 else 0))
            except OSError:  # taken, or a connection of it still in TIME_WAIT
                continue
            ports.append(probe.getsockname()[1])
        return ports


def kernel_ports_below_ephemeral() -> None:
    """From now on, this process's Jupyter server gives the kernels it starts ports chosen here
    (jupyter_client's ``LocalPortCache`` still keeps two kernels from sharing one)."""
    from jupyter_client.connect import LocalPortCache

    def find_available_port(self: LocalPortCache, ip: str) -> int:
        while True:
            (port,) = free_ports(1)  # kernels of the tests' servers listen on HOST
            if port not in self.currently_used_ports:
                self.currently_used_ports.add(port)
                return port

    LocalPortCache.find_available_port = find_available_port  # type: ignore[method-assign]


def kernel_ports_config(config_dir: Path) -> None:
    """A Jupyter config file, in ``config_dir``, that does the same for a server of its own process."""
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "jupyter_server_config.py").write_text(
        f"import sys\nsys.path.append({str(Path(__file__).parent)!r})\n"
        "from _ports import kernel_ports_below_ephemeral\nkernel_ports_below_ephemeral()\n"
    )
