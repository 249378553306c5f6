"""Talking to one dask-gateway as the user's notebooks do: its client, made on first use, each
call within the timeout, and every failure said for people without the gateway's password.

A gateway address may carry a user name and password (``http://user:pw@host``): answers, logs and
links leave them out (``scrubbed``, ``without_userinfo_in``).
"""

from __future__ import annotations

import asyncio
import importlib
import re
from dataclasses import dataclass
from typing import Any

from dashdock.errors import Conflict, DashdockError, Failed, Invalid, TimedOut, Unavailable
from dashdock.targets import userinfo_of

# The user name and password in any URL of a text: "//user:pw@host" -> "//host".
_USERINFO = re.compile(r"(?<=//)[^/?#@\s]*@")


@dataclass(frozen=True)
class GatewaySettings:
    """Where the gateway is and how to authenticate (``None``: dask-gateway's config decides)."""

    address: str | None
    proxy_address: str | None
    public_address: str | None
    auth: str | None
    timeout: float

    @property
    def configured(self) -> bool:
        if self.address:
            return True
        import dask.config

        return bool(dask.config.get("gateway.address", default=None))

    def dask_config(self) -> dict[str, str | None]:
        """The gateway's keys of Dask's config, for kernels (``gateway.*``; None: not set here)."""
        return {
            "address": self.address,
            "proxy-address": self.proxy_address,
            "public-address": self.public_address,
            "auth.type": self.auth,
        }


class GatewayClient:
    """dask-gateway's asynchronous client for one gateway, made on first use."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self._client: Any = None

    @property
    def address(self) -> str | None:
        return self._client.address if self._client is not None else self.settings.address

    async def close(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    async def resize(self, name: str, op: str, request: dict[str, object]) -> str:
        """Ask the gateway to ``scale`` or ``adapt`` a cluster; returns what it did instead, else ''.

        A request over the gateway's cluster_max_workers is cut down to that limit and answered with
        a message, which dask-gateway's ``scale_cluster``/``adapt_cluster`` only turn into a Python
        warning in the server's log; its request method hands the answer back to be told to the user.
        """
        doing = "scale the cluster" if op == "scale" else "make the cluster adaptive"

        async def send(gateway: Any) -> str:
            url = f"{gateway.address}/api/v1/clusters/{name}/{op}"
            response = await gateway._request("POST", url, json=request)
            try:
                answer = await response.json()
            except Exception:  # an answer without a body: nothing was changed from the request
                return ""
            if not isinstance(answer, dict) or answer.get("ok", True) or not answer.get("msg"):
                return ""
            return self.scrubbed(f"The Dask Gateway limits this cluster: {str(answer['msg'])[:500]}")

        said: str = await self.call(doing, send)
        return said

    def scrubbed(self, text: str) -> str:
        """A message without the user name and password of the gateway's addresses (answers, logs)."""
        text = _USERINFO.sub("", text)
        for address in (self.settings.address, self.settings.public_address, self.settings.proxy_address):
            userinfo = userinfo_of(address) if address else None
            if userinfo is not None and userinfo[1]:
                text = text.replace(userinfo[1], "***")
        return text

    async def call(self, doing: str, operation: Any) -> Any:
        """``operation(gateway)`` within the timeout, its failures said for people."""
        try:
            gateway = await self._gateway()
            return await asyncio.wait_for(operation(gateway), self.settings.timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise TimedOut(
                f"The Dask Gateway did not answer in {self.settings.timeout:g} s when asked to {doing}."
            ) from None
        except DashdockError as exc:
            exc.reason = self.scrubbed(exc.reason)
            raise
        except Exception as exc:  # dask-gateway and aiohttp errors of every kind, said for people
            said = _said(doing, exc)
            said.reason = self.scrubbed(said.reason)
            raise said from None  # the cause's text (and traceback in logs) may hold the password

    async def _gateway(self) -> Any:
        if self._client is None:
            try:
                # Its first import brings in distributed: seconds the server's loop must not wait.
                module = await asyncio.to_thread(importlib.import_module, "dask_gateway")
            except ImportError:
                raise Unavailable(
                    "A Dask Gateway is configured, but dask-gateway is not installed in the Jupyter "
                    "server's environment (pip install dask-gateway)."
                ) from None
            settings = self.settings
            try:
                self._client = module.Gateway(
                    address=settings.address,
                    proxy_address=settings.proxy_address,
                    public_address=settings.public_address,
                    auth=settings.auth,
                    asynchronous=True,
                )
            except (ValueError, TypeError, ImportError) as exc:
                raise Invalid(self.scrubbed(f"The Dask Gateway settings are not usable: {exc}")) from None
        return self._client


def without_userinfo_in(value: Any) -> Any:
    """An address or link as the browser may see it: any URL in it without a user and password."""
    return _USERINFO.sub("", value) if isinstance(value, str) else value


def _said(doing: str, exc: Exception) -> DashdockError:
    status = getattr(exc, "status", None)
    text = str(exc) or type(exc).__name__
    if status in (401, 403):
        return Unavailable(
            f"The Dask Gateway refused this server's credentials when asked to {doing} (HTTP {status}). "
            "Check c.DashdockApp.gateway_auth (or gateway.auth in Dask's config)."
        )
    if type(exc).__name__ == "GatewayClusterError":
        return Conflict(f"The Dask Gateway could not {doing}: {text}")
    if type(exc).__name__ == "GatewayServerError":  # it answered, with an error of its own
        return Failed(f"The Dask Gateway failed to {doing}: {text[:500]}")
    if isinstance(exc, ValueError):
        return Failed(f"The Dask Gateway could not {doing}: {text}")
    return Unavailable(f"The Dask Gateway is not reachable to {doing}: {text}")
