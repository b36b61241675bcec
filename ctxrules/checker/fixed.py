"""The fixed inputs every rule meets before the search: long histories, chunk-sized ones, the real session.

Reading the session bundled with ctxrules is file work, so it lives here, in the checker's
shell, and reaches the pure strategies of `ctxrules.testing.histories` as a parameter.
"""

from __future__ import annotations

import functools
import random
from importlib import resources

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules import Facts
from ctxrules.testing.histories import (
    CHUNK,
    LARGEST,
    _as_commit,
    _text,
    synthetic_history,
)
from ctxrules.testing.ruler import CHECK_RULER, check_ruler


@functools.lru_cache(maxsize=1)
def bundled_session_items() -> tuple[ContextItem, ...]:
    """The items of the bundled real Claude Code session, all full, as the pipeline starts them."""
    # Imported here: generation and the importers load only for the command that needs them.
    from ctxrules.generation import generate_commit  # noqa: PLC0415
    from ctxrules.importers import import_text  # noqa: PLC0415
    from ctxrules.rules import Pipeline  # noqa: PLC0415

    folder = resources.files("ctxrules") / "data" / "sessions"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".jsonl"):
            session = import_text(entry.read_text(encoding="utf-8")).unwrap().session
            if session.head is None:
                return ()
            facts = Facts(tokenizer=CHECK_RULER)
            built = generate_commit(None, session.graph, session.head, Pipeline(), facts)
            return tuple(built.unwrap().items)
    return ()


#: Sizes of the long histories every rule meets before the search: past round numbers a
#: size-dependent defect may wait for, and on either side of the item vector's chunks.
FIXED_SIZES = (150, 201, 501, 1_001, LARGEST)
CHUNK_SIZES = (CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 2 * CHUNK + 1)
#: The session id of the fixed history counted by tiktoken (its facts carry that ruler).
TIKTOKEN_SESSION = "s_tiktoken"


@functools.lru_cache(maxsize=8)
def fixed_histories(names: tuple[str, ...] = ()) -> tuple[ContextCommit, ...]:
    """Commits every rule is run on before the random search: long ones, the real session.

    Built once for each ``names`` (rules that look for the same names share them);
    `ctxrules.checker.runner.rule_violations` drops them with the generated histories
    when a rule writes into its input.

    The long histories of `FIXED_SIZES` and `CHUNK_SIZES` are cut from the start of one
    long history, whose items are old enough for every gate; one history is counted by
    tiktoken; with ``names``, a history where each name is a tool of several turns, locked
    and not, full and aged, comes first.
    """
    found: list[ContextCommit] = []
    if names:
        found.append(_as_commit(_named_tools(names), "s_names"))
    items = synthetic_history(1_000, LARGEST // 3 + 1, names)
    found += [_as_commit(items[:size], "s_long") for size in CHUNK_SIZES]
    found.append(_as_commit(synthetic_history(7, 30, names, "tiktoken"), TIKTOKEN_SESSION))
    found += [_as_commit(items[:size], "s_long") for size in FIXED_SIZES]
    real = bundled_session_items()
    if real:
        found.append(_as_commit(real, "s_real"))
    return tuple(found)


def _named_tools(names: tuple[str, ...]) -> tuple[ContextItem, ...]:
    """Turns in which each name is a tool: old and recent, locked and not, full and aged."""
    rng = random.Random(len(names))  # noqa: S311 - test data, not security
    items: list[ContextItem] = []
    for turn in range(3 * len(names) + 6):
        name = names[turn % len(names)]
        items += [
            ContextItem(f"u{turn}", "user", rendered=_text(rng, 6), turn=turn),
            ContextItem(f"a{turn}", "assistant", rendered=_text(rng, 8), turn=turn),
        ]
        for call, size in enumerate((40, 900)):
            state = State.AGED if turn % 3 == 2 else State.FULL
            rendered = _text(rng, size)
            items.append(
                ContextItem(
                    f"t{turn}_{call}",
                    "tool",
                    state=state,
                    rendered=rendered[:40] if state is State.AGED else rendered,
                    reason="aged" if state is State.AGED else "new",
                    tool_name=name,
                    tool_call_id=f"call_{turn}_{call}",
                    arguments='{"path": "' + _text(rng, 4) + '"}',
                    locked=(turn // len(names)) % 2 == 1 and call == 0,
                    turn=turn,
                    created_at=turn * 90.0,
                    changed_at=turn * 90.0,
                )
            )
    return tuple(counted(item, CHECK_RULER) for item in items)


#: Windows a rule meets (8k to 1M tokens), and the budgets it may be given beside them.
WINDOWS = (8_000, 32_000, 200_000, 1_000_000)


def fixed_facts(commit: ContextCommit) -> tuple[Facts, ...]:
    """The facts a rule sees with a fixed input: at its last item, and long after it.

    The two differ in window and budget too (a small window with a budget, a large one
    without), counted by the ruler the commit's items were counted with.
    """
    last_turn = max((item.turn for item in commit.items), default=0)
    last_time = max((item.changed_at for item in commit.items), default=0.0)
    ruler = check_ruler("tiktoken" if commit.session_id == TIKTOKEN_SESSION else "heuristic")
    return (
        Facts(
            now=last_time,
            head_turn=last_turn + 1,
            tokenizer=ruler,
            context_window=WINDOWS[0],
            budget=WINDOWS[0] // 2,
        ),
        Facts(
            now=last_time + 86_400.0,
            head_turn=last_turn + 40,
            tokenizer=ruler,
            context_window=WINDOWS[-1],
        ),
    )
