"""``GET history/{id}/diagnosis?start=&end=``: what a window's time went to (service.py)."""

from __future__ import annotations

from jupyter_server.auth.decorator import authorized
from tornado import web

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.handlers import RUN_ID_ARG, HistoryAPIHandler
from dashdock.history.service import HistoryService
from dashdock.http import ApiHandler


class DiagnosisHandler(HistoryAPIHandler):
    def initialize(  # type: ignore[override]
        self, history: HistoryService, max_body: int, limits: DiagnosisLimits
    ) -> None:
        super().initialize(history, max_body)
        self.limits = limits

    @web.authenticated
    @authorized
    async def get(self, run_id: str) -> None:
        run = await self.history.find(run_id)  # 404 with a message when there is none
        start, end = self.window()  # 400 with a message for start > end
        limits = self.limits
        # Read and counted in a worker thread: the server's event loop never waits on it.
        answer = await self.history.read(lambda store: diagnose_window(store, run, start, end, limits))
        self.finish_json(answer)


def routes(
    history: HistoryService, max_body: int, limits: DiagnosisLimits | None = None
) -> list[tuple[str, type[ApiHandler], dict[str, object]]]:
    services = {"history": history, "max_body": max_body, "limits": limits or DiagnosisLimits()}
    return [(rf"/dashdock/api/history/{RUN_ID_ARG}/diagnosis", DiagnosisHandler, services)]
