"""The "New cluster" form: fields described for the sidebar, and the values it sends checked against them.

One form serves both kinds of cluster: a dask-gateway's ``cluster_options()`` describe its fields
(the gateway checks the values again), and a local cluster class's signature describes its fields
(simple keyword arguments with a number, text or yes/no default). The browser builds the form from
these descriptions; nothing it sends reaches a cluster class without passing ``parse_values``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any

from dashdock.errors import Invalid

FIELD_TYPES = ("int", "float", "string", "bool", "select", "mapping")
MAX_TEXT = 1000
MAX_FIELDS = 50

# Arguments dashdock sets itself (addresses, the size, the event loop) or that take objects.
_NOT_FORM_FIELDS = frozenset(
    {
        "self",
        "name",
        "n_workers",
        "asynchronous",
        "loop",
        "start",
        "host",
        "ip",
        "scheduler_port",
        "dashboard_address",
        "worker_dashboard_address",
        "diagnostics_port",
        "silence_logs",
        "security",
        "protocol",
        "interface",
        "shutdown_on_close",
        "scheduler_sync_interval",
    }
)

# LocalCluster's most used arguments default to None (meaning "decide for me"), so its signature
# alone cannot say their type; these are the ones users set from dask-labextension's habits.
_LOCAL_CLUSTER_FIELDS = (
    ("threads_per_worker", "Threads per worker", "int", None, 1, None),  # None: Dask decides
    ("processes", "Worker processes", "bool", True, None, None),
    ("memory_limit", "Memory limit per worker", "string", "auto", None, None),
)


@dataclass(frozen=True)
class FormField:
    name: str
    label: str
    type: str  # one of FIELD_TYPES
    default: Any  # None: left to the class (the form shows "default")
    minimum: float | None = None
    maximum: float | None = None
    options: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        described: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "type": self.type,
            "default": self.default,
        }
        if self.minimum is not None:
            described["min"] = self.minimum
        if self.maximum is not None:
            described["max"] = self.maximum
        if self.options:
            described["options"] = list(self.options)
        return described

    def parse(self, value: object) -> Any:
        """The value if it is one of this field's, else ``Invalid`` naming the field."""
        label = self.label
        if self.type == "bool":
            if not isinstance(value, bool):
                raise Invalid(f"'{label}' must be true or false.")
            return value
        if self.type in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise Invalid(f"'{label}' must be a number.")
            if self.type == "int" and not float(value).is_integer():
                raise Invalid(f"'{label}' must be a whole number.")
            if not math.isfinite(value):
                raise Invalid(f"'{label}' must be a finite number.")
            if self.minimum is not None and value < self.minimum:
                raise Invalid(f"'{label}' must be at least {self.minimum:g}.")
            if self.maximum is not None and value > self.maximum:
                raise Invalid(f"'{label}' must be at most {self.maximum:g}.")
            return int(value) if self.type == "int" else float(value)
        if self.type == "mapping":
            if not isinstance(value, dict) or len(str(value)) > 10 * MAX_TEXT:
                raise Invalid(f"'{label}' must be a mapping (a JSON object) of modest size.")
            return value
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise Invalid(f"'{label}' must be a text of at most {MAX_TEXT} characters.")
        if self.type == "select" and value not in self.options:
            raise Invalid(f"'{label}' must be one of: {', '.join(self.options)}.")
        return value


def parse_values(fields: list[FormField], values: object) -> dict[str, Any]:
    """The form's values, each checked against its field; a name the form does not have is refused."""
    if not isinstance(values, dict):
        raise Invalid("'options' must be an object of field names and values.")
    known = {field.name: field for field in fields}
    parsed: dict[str, Any] = {}
    for name, value in values.items():
        field = known.get(name)
        if field is None:
            raise Invalid(f"The form has no field '{str(name)[:100]}'.")
        parsed[name] = field.parse(value)
    return parsed


def fields_of_gateway(options: Any) -> list[FormField]:
    """The fields of a dask-gateway ``Options`` (what ``Gateway.cluster_options()`` returns)."""
    fields: list[FormField] = []
    for field in list(getattr(options, "_fields", {}).values())[:MAX_FIELDS]:
        kind = _gateway_type(field)
        if kind is None:
            continue
        fields.append(
            FormField(
                name=field.field,
                label=str(field.label)[:200],
                type=kind,
                default=field.value,
                minimum=getattr(field, "min", None),
                maximum=getattr(field, "max", None),
                options=tuple(getattr(field, "options", ()) or ()),
            )
        )
    return fields


def _gateway_type(field: Any) -> str | None:
    for kind, field_class in type(field)._field_types.items():
        if type(field) is field_class and kind in FIELD_TYPES:
            return kind
    return None


def fields_of_class(cluster_class: type, configured: dict[str, Any]) -> list[FormField]:
    """Fields for a local cluster class: its keyword arguments with a simple default or annotation,
    defaulting to what the server's configuration passes (``cluster_kwargs``)."""
    fields: list[FormField] = []
    if _is_local_cluster(cluster_class):
        for name, label, kind, default, minimum, maximum in _LOCAL_CLUSTER_FIELDS:
            fields.append(FormField(name, label, kind, configured.get(name, default), minimum, maximum))
    try:
        parameters = inspect.signature(cluster_class).parameters.values()
    except (TypeError, ValueError):
        return fields
    taken = {field.name for field in fields}
    for parameter in parameters:
        if parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            continue
        if parameter.name in _NOT_FORM_FIELDS or parameter.name in taken or parameter.name.startswith("_"):
            continue
        value = configured.get(parameter.name, parameter.default)
        value_kind = _simple_type(value, parameter.annotation)
        if value_kind is None:
            continue
        if value is inspect.Parameter.empty or value is None:
            value = {"int": 0, "float": 0.0, "string": "", "bool": False}[value_kind]
        fields.append(
            FormField(parameter.name, parameter.name.replace("_", " ").capitalize(), value_kind, value)
        )
        if len(fields) >= MAX_FIELDS:
            break
    return fields


def _is_local_cluster(cluster_class: type) -> bool:
    return any(
        f"{base.__module__}.{base.__qualname__}" == "distributed.deploy.local.LocalCluster"
        for base in getattr(cluster_class, "__mro__", ())
    )


def _simple_type(default: object, annotation: object) -> str | None:
    for python_type, kind in ((bool, "bool"), (int, "int"), (float, "float"), (str, "string")):
        if type(default) is python_type:
            return kind
    if default is None or default is inspect.Parameter.empty:
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", "")
        words = str(text).replace("|", " ").replace("Optional[", " ").replace("]", " ").split()
        for name, kind in (("bool", "bool"), ("int", "int"), ("float", "float"), ("str", "string")):
            if name in words:
                return kind
    return None
