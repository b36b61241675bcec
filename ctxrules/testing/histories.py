"""Commits shaped like real histories, of every size: turns of tool pairs, attached blocks, summaries.

`histories` is what ``ctxrules check`` feeds each rule: mostly small commits that shrink
well, some of hundreds to thousands of items, and commits built from the bundled real
session. Big commits are built once per seed from a seeded generator and cut to the drawn
size, so a long history costs a slice, not thousands of draws.
"""

from __future__ import annotations

import functools
import random
from importlib import resources

import attrs
from hypothesis import strategies as st
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.testing.commits import commits
from ctxrules.testing.ruler import CHECK_RULER

#: Words of the generated texts: code-ish English, paths, Chinese and special tokens.
_WORDS = ("the", "fix", "src/main.py", "`make test`", "0x1f3a9c", "ValueError", "数据",
          "上下文", "压缩", "\n", "<|endoftext|>", "def f():", "ok")  # fmt: skip
_TOOLS = ("grep", "read_file", "bash", "todo_list", "web_search", "edit")
#: The largest generated history, in items (long ones are cut from one cached history).
LARGEST = 2_000


def _paragraph(words: int) -> tuple[str, tuple[int, ...]]:
    """A fixed long text and where each of its words starts, to cut texts from in O(1)."""
    rng = random.Random(0)  # noqa: S311 - test data, not security
    chosen = [rng.choice(_WORDS) for _ in range(words)]
    starts = [0]
    for word in chosen:
        starts.append(starts[-1] + len(word) + 1)
    return " ".join(chosen), tuple(starts)


_TEXT, _STARTS = _paragraph(4_000)


def _text(rng: random.Random, words: int) -> str:
    """``words`` consecutive words of the fixed paragraph, from a random place."""
    first = rng.randrange(len(_STARTS) - words)
    return _TEXT[_STARTS[first] : _STARTS[first + words] - 1]


def _tightening(rng: random.Random, rendered: str, *, old: bool, locked: bool) -> dict[str, object]:
    """How an older item may have been left by a rule: aged to a stub, cleared, or untouched."""
    if not old or locked or rng.random() < 0.5:
        return {"rendered": rendered}
    if rng.random() < 0.6:
        return {"state": State.AGED, "rendered": rendered[:40], "reason": "aged"}
    return {"state": State.CLEARED, "rendered": "[cleared]", "reason": "cleared"}


def _turn(
    rng: random.Random, turn: int, *, old: bool, tools: tuple[str, ...] = _TOOLS
) -> list[ContextItem]:
    """One turn: a user message, an assistant reply and up to three tool calls with results."""
    shapes: list[dict[str, object]] = [
        {"source_node_id": f"u{turn}", "role": "user", "rendered": _text(rng, rng.randint(1, 12))},
        {
            "source_node_id": f"a{turn}",
            "role": "assistant",
            "rendered": _text(rng, rng.randint(1, 20)),
        },
    ]
    for call in range(rng.choice((0, 1, 1, 2, 3))):
        size = rng.choice((3, 10, 40, 40, 900, 2_500))  # words; the longest exceed every cap
        shapes.append(
            {
                "source_node_id": f"t{turn}_{call}",
                "role": "tool",
                "rendered": _text(rng, size),
                "tool_name": rng.choice(tools),
                "tool_call_id": f"call_{turn}_{call}",
                "arguments": '{"path": "' + _text(rng, rng.randint(1, 60)) + '"}',
            }
        )
    items = []
    for offset, shape in enumerate(shapes):
        when, locked = turn * 90.0 + offset, rng.random() < 0.04
        shape.update(_tightening(rng, str(shape["rendered"]), old=old, locked=locked))
        items.append(
            ContextItem(**shape, turn=turn, created_at=when, changed_at=when, locked=locked)  # type: ignore[arg-type]
        )
    return items


def _attached_block(rng: random.Random, turn: int, source: str) -> list[ContextItem]:
    """An expanded attach pointer: open marker, copied items, close marker, one ``attached_from``."""
    marker = f"attach:s_other:{source}"
    body = [
        ContextItem(f"x{k}", rng.choice(("user", "assistant")), rendered=_text(rng, 8), turn=turn)
        for k in range(rng.randint(1, 4))
    ]
    opening = ContextItem(marker, "user", rendered="[attached]", reason="attach_open", turn=turn)
    closing = ContextItem(marker, "user", rendered="[end]", reason="attach_close", turn=turn)
    return [attrs.evolve(i, attached_from=source) for i in (opening, *body, closing)]


def _fold(items: list[ContextItem], upto: int, summary_id: str) -> list[ContextItem]:
    """The first ``upto`` items folded into one active summary placed after them."""
    folded = [
        attrs.evolve(i, state=State.SUMMARIZED, merged_into=summary_id, reason="summarized")
        if not i.locked and i.attached_from is None
        else i
        for i in items[:upto]
    ]
    turn = items[upto - 1].turn if upto else 0
    summary = ContextItem(
        summary_id, "assistant", state=State.SUMMARY, rendered="[Summary] 之前的工作", turn=turn
    )
    return [*folded, summary, *items[upto:]]


@functools.lru_cache(maxsize=512)
def synthetic_history(
    seed: int, turns: int, names: tuple[str, ...] = ()
) -> tuple[ContextItem, ...]:
    """A counted, well-formed history of ``turns`` turns, the same for the same arguments.

    ``names`` join the usual tool names (those a rule under check looks for).
    """
    rng = random.Random(seed)  # noqa: S311 - test data, not security
    tail = rng.randint(1, 4)
    items: list[ContextItem] = []
    block_at = rng.randint(0, turns) if rng.random() < 0.5 else -1
    tools = _TOOLS + names
    for turn in range(turns):
        items += _turn(rng, turn, old=turn < turns - tail, tools=tools)
        if turn == block_at:
            items += _attached_block(rng, turn, f"c_src{seed}")
    if turns > 2 and rng.random() < 0.4:
        items = _fold(items, rng.randint(1, len(items) // 2), f"sm_{seed:04x}")
    return tuple(counted(item, CHECK_RULER) for item in items)


def _as_commit(items: tuple[ContextItem, ...] | list[ContextItem], session: str) -> ContextCommit:
    attached = pset(i.attached_from for i in items if i.attached_from)
    commit = ContextCommit(session, head_node_id=items[-1].source_node_id if items else None)
    return attrs.evolve(commit.with_items(items), attached=attached)


@st.composite
def structured_commits(
    draw: st.DrawFn, *, max_turns: int = 6, names: tuple[str, ...] = ()
) -> ContextCommit:
    """Small well-formed histories: a few turns of tool pairs, maybe a block and a summary."""
    seed = draw(st.integers(0, 63), label="history seed")
    items = synthetic_history(seed, draw(st.integers(1, max_turns), label="turns"), names)
    return _as_commit(items[: draw(st.integers(0, len(items)), label="items kept")], "s_small")


@st.composite
def long_commits(
    draw: st.DrawFn, *, largest: int = LARGEST, names: tuple[str, ...] = ()
) -> ContextCommit:
    """Histories of a hundred to ``largest`` items, cut from one cached long history."""
    items = synthetic_history(1_000, largest // 3 + 1, names)
    size = draw(st.integers(min(100, largest), largest), label="long history size")
    start = draw(st.integers(0, max(len(items) - size, 0)), label="long history start")
    return _as_commit(items[start : start + size], "s_long")


@functools.lru_cache(maxsize=1)
def bundled_session_items() -> tuple[ContextItem, ...]:
    """The items of the bundled real Claude Code session, all full, as the pipeline starts them."""
    # Imported here: generation sits above rules, and only this strategy needs it.
    from ctxrules.generation import generate_commit  # noqa: PLC0415
    from ctxrules.importers import import_text  # noqa: PLC0415
    from ctxrules.rules import Facts, Pipeline  # noqa: PLC0415

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


def forget_histories() -> None:
    """Drop the cached histories (a rule wrote into their frozen items): rebuild them on use."""
    synthetic_history.cache_clear()
    bundled_session_items.cache_clear()


@st.composite
def real_session_commits(draw: st.DrawFn) -> ContextCommit:
    """A prefix of the bundled real session, as its first commit at that point holds it."""
    items = bundled_session_items()
    size = draw(st.integers(min(1, len(items)), len(items)), label="real session prefix")
    return _as_commit(items[:size], "s_real")


@st.composite
def histories(draw: st.DrawFn, *, long: bool = True, names: tuple[str, ...] = ()) -> ContextCommit:
    """What each rule is checked on: small random and structured commits, some long and real ones.

    A quarter are small random commits, thirteen in twenty small structured histories, and
    (unless ``long=False``) one each a long history and a prefix of the real session.
    Hypothesis shrinks the choice toward the small kinds, so a counterexample ends up as
    small as the defect allows. ``names`` are tool names the structured and long
    histories use besides their own.
    """
    kind = draw(st.integers(0, 19 if long else 17), label="kind of commit")
    if kind < 5:
        return draw(commits(max_items=8))
    if kind < 18:
        return draw(structured_commits(names=names))
    return draw(long_commits(names=names) if kind == 18 else real_session_commits())


#: Sizes of the long histories every rule meets before the search: past round numbers a
#: size-dependent defect may wait for.
FIXED_SIZES = (150, 201, 501, 1_001, LARGEST)


def fixed_histories(names: tuple[str, ...] = ()) -> tuple[ContextCommit, ...]:
    """Commits every rule is run on before the random search: long ones, the real session.

    The long histories of `FIXED_SIZES` are cut from the start of one long history, whose
    items are old enough for every gate; with ``names``, a history where each name is a
    tool of several turns, locked and not, full and aged, comes first.
    """
    found: list[ContextCommit] = []
    if names:
        found.append(_as_commit(_named_tools(names), "s_names"))
    items = synthetic_history(1_000, LARGEST // 3 + 1, names)
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
