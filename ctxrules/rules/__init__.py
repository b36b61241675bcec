"""Rules: pure functions from commit to commit, the built-ins, and the pipelines that fold them."""

from ctxrules.rules.facts import Facts, WorkMeter
from ctxrules.rules.gates import gate_placeholder, gate_tool_results
from ctxrules.rules.idle import IDLE_PLACEHOLDER, clear_idle
from ctxrules.rules.params import Param, ParamProblem, check_params
from ctxrules.rules.pipeline import NamedRule, Pipeline, Rule, RuleRaised
from ctxrules.rules.references import ReferenceTracker, distinctive_substrings
from ctxrules.rules.registry import BuiltinRule, builtins
from ctxrules.rules.scan import scan
from ctxrules.rules.tighten import tighten
from ctxrules.rules.tool_aging import PROTECTED_TOOLS, age_tool_results, cap_tool_result, tool_stub

__all__ = [
    "IDLE_PLACEHOLDER",
    "PROTECTED_TOOLS",
    "BuiltinRule",
    "Facts",
    "NamedRule",
    "Param",
    "ParamProblem",
    "Pipeline",
    "ReferenceTracker",
    "Rule",
    "RuleRaised",
    "WorkMeter",
    "age_tool_results",
    "builtins",
    "cap_tool_result",
    "check_params",
    "clear_idle",
    "distinctive_substrings",
    "gate_placeholder",
    "gate_tool_results",
    "scan",
    "tighten",
    "tool_stub",
]
