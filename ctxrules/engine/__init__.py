"""The engine: the imperative shell that runs one turn's lifecycle around the pure core."""

from ctxrules.engine.contract import ContextEngine, EngineError, UsageStore
from ctxrules.engine.default import DefaultContextEngine
from ctxrules.engine.registry import EngineRegistry
from ctxrules.engine.turn import SessionState, TurnPrep

__all__ = [
    "ContextEngine",
    "DefaultContextEngine",
    "EngineError",
    "EngineRegistry",
    "SessionState",
    "TurnPrep",
    "UsageStore",
]
