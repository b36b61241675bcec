"""The checks `Context` makes of its settings before any work; each problem says what to pass.

Every function returns the problem as one line (``name=value: what was expected; what to
pass``), or None; `Context` raises it as a `ConfigError`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ctxrules.render.system_prompt import AgentProfile
from ctxrules.rules import Pipeline
from ctxrules.spec.recall import RecallOptions
from ctxrules.store.url import StoreUrl
from ctxrules.tokens import BudgetAllocation, Tokenizer


def _expected(name: str, value: object, expected: str) -> str:
    return f"{name}={value!r:.80}: expected {expected}"


def argument_problem(
    *,
    spec: object,
    model: object,
    system: object,
    tools: object,
    session: object,
    clock: object,
    tokenizer: object,
    summarizer: object,
    allow_imports: object,
    recall: object,
    agent: object = None,
    memory: object = str,
) -> str | None:
    """The first setting of the wrong type, as ``name=value: expected …``, or None.

    >>> print(argument_problem(spec="default", model="gpt-4o", system="", tools=[{"a": 1}],
    ...     session="", clock=print, tokenizer=None, summarizer=None, allow_imports=False,
    ...     recall=None))
    session='': expected a non-empty str naming the session, e.g. session='main'
    """
    checks: Sequence[tuple[str, object, bool, str]] = (
        (
            "spec",
            spec,
            isinstance(spec, str | os.PathLike | Pipeline),
            "a built-in spec name, a TOML path or text, or a Pipeline",
        ),
        ("model", model, isinstance(model, str) and bool(model), "the model's name, e.g. 'gpt-4o'"),
        ("system", system, isinstance(system, str), "the system prompt as a str"),
        (
            "tools",
            tools,
            isinstance(tools, Sequence)
            and not isinstance(tools, str)
            and all(isinstance(tool, Mapping) for tool in tools),
            "a list of tool schemas (dicts), as the SDK takes them",
        ),
        (
            "session",
            session,
            isinstance(session, str) and bool(session),
            "a non-empty str naming the session, e.g. session='main'",
        ),
        ("clock", clock, callable(clock), "a function returning the time in seconds"),
        (
            "tokenizer",
            tokenizer,
            tokenizer is None or isinstance(tokenizer, Tokenizer),
            "None or a Tokenizer (count, message_overhead)",
        ),
        (
            "summarizer",
            summarizer,
            summarizer is None or callable(summarizer),
            "None or a function from messages to summary text (or an awaitable of it)",
        ),
        ("allow_imports", allow_imports, isinstance(allow_imports, bool), "True or False"),
        (
            "recall",
            recall,
            recall is None or isinstance(recall, RecallOptions),
            "None or a RecallOptions",
        ),
        (
            "agent",
            agent,
            agent is None or isinstance(agent, AgentProfile),
            "None or an AgentProfile (identity, workspace, inline prompt, skills)",
        ),
        ("memory", memory, callable(memory), "a function returning the memory text"),
    )
    wrong = (_expected(name, v, want) for name, v, ok, want in checks if not ok)
    return next(wrong, None) or prompt_problem(system, agent, memory)


def prompt_problem(system: object, agent: object, memory: object) -> str | None:
    """Why ``system``, ``agent`` and ``memory`` cannot make one system prompt together, or None.

    ``agent`` builds the prompt in layers, its inline prompt among them; ``memory`` is its
    last layer, so it needs an agent.

    >>> print(prompt_problem("Be brief.", AgentProfile("Ada", "a1"), str))
    system='Be brief.': the agent= builds the system prompt; pass the text as AgentProfile(system_prompt=...) instead
    >>> print(prompt_problem("", None, lambda: "notes"))
    memory=<lambda>: the memory is a layer of the agent's system prompt; pass agent=AgentProfile(...) too, or put the text in system=
    """
    if isinstance(agent, AgentProfile) and system:
        return (
            f"system={system!r:.80}: the agent= builds the system prompt; "
            "pass the text as AgentProfile(system_prompt=...) instead"
        )
    if agent is None and memory is not str:
        named = getattr(memory, "__name__", type(memory).__name__)
        return (
            f"memory={named}: the memory is a layer of the agent's system prompt; "
            "pass agent=AgentProfile(...) too, or put the text in system="
        )
    return None


def room_problem(budget: BudgetAllocation) -> str | None:
    """Why a window is too small for the system prompt and tool schemas alone, or None.

    ``budget`` is the allocation with no history, so its input is the fixed part.

    >>> print(room_problem(BudgetAllocation(2_048, system=900, tools_schema=300, output_reserve=1_024)))
    window=2,048 leaves 1,024 tokens for the input (1,024 are kept for the answer), and the system prompt (900) and tool schemas (300) alone take 1,200; pass a larger window, a shorter system= or fewer tools=
    """
    if budget.input_used < budget.input_budget:
        return None
    return (
        f"window={budget.context_window:,} leaves {budget.input_budget:,} tokens for the input "
        f"({budget.output_reserve:,} are kept for the answer), and the system prompt "
        f"({budget.system:,}) and tool schemas ({budget.tools_schema:,}) alone take "
        f"{budget.input_used:,}; pass a larger window, a shorter system= or fewer tools="
    )


def store_folder_problem(store: str | os.PathLike[str], where: StoreUrl) -> str | None:
    """Make the folder of a SQLite store's file; why it cannot be made or used, or None."""
    if where.backend != "sqlite" or where.target == ":memory:":
        return None
    target = Path(where.target)
    name = os.fspath(store)
    if target.is_dir():
        return (
            f"store={name!r}: a folder, not a file; pass a file in it, "
            f"e.g. store={str(target / 'ctxrules.sqlite')!r}"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return (
            f"store={name!r}: cannot create the folder {str(target.parent)!r} "
            f"({error.strerror or error}); pass a path in a folder you can write, or ':memory:'"
        )
    return None
