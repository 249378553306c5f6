"""Kernels started the way Lab starts them (through the server's managers), and what they print
and display."""

from __future__ import annotations

from typing import Any


class Kernel:
    """A kernel of the server under test; with ``notebook`` it runs for a session, as in Lab."""

    def __init__(self, serverapp: Any, notebook: str | None = None) -> None:
        self._serverapp = serverapp
        self._manager = serverapp.kernel_manager
        self._notebook = notebook
        self.displayed: list[dict[str, Any]] = []  # every display_data / execute_result bundle
        self.by_display_id: dict[str, dict[str, Any]] = {}  # display id -> its latest bundle

    async def __aenter__(self) -> Kernel:
        if self._notebook is not None:
            session = await self._serverapp.session_manager.create_session(
                path=self._notebook, name=self._notebook, type="notebook", kernel_name="python3"
            )
            self.id = session["kernel"]["id"]
        else:
            self.id = await self._manager.start_kernel(kernel_name="python3")
        self._client = self._manager.get_kernel(self.id).client()
        self._client.start_channels()
        await self._client.wait_for_ready(timeout=60)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._client.stop_channels()
        if self.id in self._manager:
            await self._manager.shutdown_kernel(self.id, now=True)

    async def shutdown(self) -> None:
        await self._manager.shutdown_kernel(self.id, now=True)

    async def run(self, code: str) -> str:
        """Run code; return what it printed (and any traceback). Displays go to ``displayed``."""
        output: list[str] = []

        def collect(message: dict[str, Any]) -> None:
            kind = message["msg_type"]
            if kind == "stream":
                output.append(message["content"]["text"])
            elif kind == "error":
                output.append("\n".join(message["content"]["traceback"]))
            elif kind in ("display_data", "execute_result", "update_display_data"):
                data = message["content"]["data"]
                if kind != "update_display_data":
                    self.displayed.append(data)
                display_id = (message["content"].get("transient") or {}).get("display_id")
                if display_id:
                    self.by_display_id[display_id] = data

        await self._client.execute_interactive(code, timeout=120, output_hook=collect)
        return "".join(output)

    async def later_output(self, seconds: float = 1.0) -> str:
        """Stream output that arrives after a run, from any thread of the kernel (a Dask client's
        event loop thread logs with another parent message than the cell's)."""
        output: list[str] = []
        while True:
            try:
                message = await self._client.get_iopub_msg(timeout=seconds)
            except Exception:  # queue.Empty: quiet for `seconds`
                return "".join(output)
            if message["msg_type"] == "stream":
                output.append(message["content"]["text"])


async def run_in_new_kernel(serverapp: Any, code: str) -> str:
    async with Kernel(serverapp) as kernel:
        return await kernel.run(code)
