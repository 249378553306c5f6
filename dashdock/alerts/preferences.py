"""The user's alert settings the server needs: which kinds notify, and the computation threshold.

They live in Lab's settings (*Settings > dashdock*); the Lab sends them here when it starts and
whenever they change. Until it does, every kind notifies and the threshold is Lab's default.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dashdock.errors import Invalid
from dashdock.history.model import ALERT_KINDS

MAX_COMPUTATION_SECONDS = 86_400.0


@dataclass
class AlertPreferences:
    kinds: frozenset[str] = field(default_factory=lambda: frozenset(ALERT_KINDS))
    computation_seconds: float = 60.0

    @classmethod
    def from_json(cls, body: dict[str, object]) -> AlertPreferences:
        """``{"kinds": [...], "computationSeconds": n}`` as the Lab's settings have them; checked."""
        kinds, seconds = body.get("kinds"), body.get("computationSeconds")
        if not isinstance(kinds, list) or not all(isinstance(k, str) and k in ALERT_KINDS for k in kinds):
            raise Invalid(f"'kinds' must be a list of alert kinds from {', '.join(ALERT_KINDS)}.")
        if (
            not isinstance(seconds, (int, float))
            or isinstance(seconds, bool)
            or not 0 <= seconds <= MAX_COMPUTATION_SECONDS
        ):
            raise Invalid("'computationSeconds' must be a number of seconds from 0 to 86400.")
        return cls(frozenset(kinds), float(seconds))

    def to_json(self) -> dict[str, object]:
        return {
            "kinds": [k for k in ALERT_KINDS if k in self.kinds],
            "computationSeconds": self.computation_seconds,
        }
