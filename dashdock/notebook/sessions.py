"""What the Jupyter server knows of its kernels: which are alive, and the notebook each runs for."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def live_kernels(serverapp: Any) -> list[str]:
    """The ids of the server's running kernels."""
    return list(serverapp.kernel_manager.list_kernel_ids())


async def notebook_names(serverapp: Any) -> dict[str, str]:
    """Kernel id -> the file name of the notebook (or console) it runs for."""
    sessions = await serverapp.session_manager.list_sessions()
    return {
        session["kernel"]["id"]: Path(session.get("path") or session.get("name") or "").name
        for session in sessions
        if session.get("kernel")
    }
