"""OpenTelemetry spans of ctxrules' decisions (the ``[otel]`` extra: ``opentelemetry-api``).

Every engine starts with `default_observer`: a `SpanObserver` when the API package is
installed, else None. Spans are written only once the application configures a tracer
provider; until then each decision costs one check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxrules.telemetry.attributes import (
    compaction_attributes,
    request_attributes,
    rule_attributes,
    usage_attributes,
)

if TYPE_CHECKING:
    from ctxrules.telemetry.spans import SpanObserver


def default_observer() -> SpanObserver | None:
    """A `SpanObserver` when ``opentelemetry-api`` is installed, else None (nothing to trace with)."""
    try:
        from ctxrules.telemetry.spans import SpanObserver  # noqa: PLC0415 - optional package
    except ImportError:
        return None
    return SpanObserver()


__all__ = [
    "compaction_attributes",
    "default_observer",
    "request_attributes",
    "rule_attributes",
    "usage_attributes",
]
