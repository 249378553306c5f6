"""A finding, and the window's findings as they are gathered.

``lost_seconds`` is thread-time: what the window would have saved without the cause, estimated
from what was recorded (each finding's ``detail`` says how). ``share`` is that over the window's
wall time times its threads. A cause is reported only once it costs a noticeable share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dashdock.diagnosis.kinds import KINDS
from dashdock.diagnosis.window import TaskWindow

# Below this share of the window's thread-time a cause is not worth a user's look.
MIN_SHARE = 0.02


@dataclass(frozen=True)
class Finding:
    kind: str
    title: str
    detail: str
    lost_seconds: float
    share: float
    evidence: dict[str, Any]
    start: float
    end: float
    advice: str = ""
    docs: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "title": self.title,
            "detail": self.detail,
            "lost_seconds": round(self.lost_seconds, 3),
            "share": round(self.share, 4),
            "evidence": self.evidence,
            "start": self.start,
            "end": self.end,
            "advice": self.advice,
            "docs": self.docs,
        }


@dataclass
class Found:
    window: TaskWindow
    findings: list[Finding] = field(default_factory=list)

    @property
    def capacity(self) -> float:
        return self.window.wall * max(self.window.thread_count, 1)

    def add(
        self,
        kind: str,
        lost: float,
        title: str,
        detail: str,
        evidence: dict[str, Any],
        span: tuple[float, float],
        advice: str | None = None,
    ) -> None:
        """``advice``: this finding's, where the kind's general one does not fit it."""
        share = lost / self.capacity
        if lost <= 0 or share < MIN_SHARE:
            return
        percent = f"{100 * share:.0f} % of thread time"
        self.findings.append(
            Finding(
                kind,
                f"{percent} {title}",
                detail,
                lost,
                share,
                evidence,
                span[0],
                span[1],
                advice or KINDS[kind].advice,
                KINDS[kind].docs,
            )
        )


def count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
