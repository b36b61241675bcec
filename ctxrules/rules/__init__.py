"""Rules: pure functions from commit to commit, and the pipelines that fold them."""

from ctxrules.rules.facts import Facts
from ctxrules.rules.pipeline import NamedRule, Pipeline, Rule

__all__ = ["Facts", "NamedRule", "Pipeline", "Rule"]
