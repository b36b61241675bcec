"""The engine registry: engines by name, and which one an agent uses (001 §5.3)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from ctxrules.engine.contract import ContextEngine
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.render.system_prompt import AgentProfile


@attrs.define
class EngineRegistry:
    """Engines by name with a default; an explicit object so tests and processes do not share one."""

    default: ContextEngine = attrs.field(factory=DefaultContextEngine)
    engines: dict[str, ContextEngine] = attrs.field(factory=dict)

    def register_engine(self, engine: ContextEngine, name: str | None = None) -> None:
        """Register ``engine`` under ``name`` (default: its ``name`` attribute)."""
        self.engines[name or engine.name] = engine

    def get_engine(self, name: str | None) -> ContextEngine:
        """The engine called ``name``, or the default when there is none by that name.

        >>> registry = EngineRegistry()
        >>> registry.get_engine("nope") is registry.default
        True
        """
        return self.engines.get(name or "", self.default)

    def resolve_engine_for(
        self, agent: AgentProfile | None, config: Mapping[str, object] | None = None
    ) -> ContextEngine:
        """The agent's own engine, else the configured ``context.engine``, else the default."""
        if agent is not None and agent.context_engine in self.engines:
            return self.engines[agent.context_engine]
        context = (config or {}).get("context")
        configured = context.get("engine") if isinstance(context, Mapping) else None
        if isinstance(configured, str) and configured in self.engines:
            return self.engines[configured]
        return self.default
