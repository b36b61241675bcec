"""What a spec check runs: each rule of the pipeline on its own, then the whole pipeline."""

from __future__ import annotations

from collections.abc import Iterator

from ctxrules.rules import NamedRule, Pipeline

#: The name the whole pipeline is reported under.
PIPELINE = "<pipeline>"


def subjects(pipeline: Pipeline) -> Iterator[NamedRule]:
    """Each rule of the pipeline on its own, then the whole pipeline.

    >>> pipeline = Pipeline((NamedRule("mine", lambda commit, facts: commit),))
    >>> [named.name for named in subjects(pipeline)]
    ['mine', '<pipeline>']
    """
    yield from pipeline.rules
    yield NamedRule(PIPELINE, pipeline.run)
