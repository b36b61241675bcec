"""Commits shaped like real histories, of every size: turns of tool pairs, attached blocks, summaries.

`histories` is what ``ctxrules check`` feeds each rule: mostly small commits that shrink
well, some of hundreds to thousands of items, and commits built from the bundled real
session. Big commits are built once per seed from a seeded generator and cut to the drawn
size, so a long history costs a slice, not thousands of draws.
"""

from __future__ import annotations

import functools
import random

import attrs
from hypothesis import strategies as st
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.rules.handles import folds_line
from ctxrules.testing.commits import commits
from ctxrules.testing.ruler import check_ruler

#: Words of the generated texts: code-ish English, paths, Chinese and special tokens.
_WORDS = ("the", "fix", "src/main.py", "`make test`", "0x1f3a9c", "ValueError", "数据",
          "上下文", "压缩", "\n", "<|endoftext|>", "def f():", "ok")  # fmt: skip
_TOOLS = ("grep", "read_file", "bash", "todo_list", "web_search", "edit")
#: The largest generated history, in items (long ones are cut from one cached history).
LARGEST = 2_000
#: A history longer than this many turns holds an attached block every so many turns.
_BLOCKS_EVERY = 30


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
    if len(shapes) > 2 and rng.random() < 0.25:
        # Identical parallel calls: the same tool, arguments and result, another call id.
        twin = dict(shapes[-1])
        twin.update(source_node_id=f"t{turn}_twin", tool_call_id=f"call_{turn}_twin")
        shapes.append(twin)
    items = []
    for offset, shape in enumerate(shapes):
        when, locked = turn * 90.0 + offset, rng.random() < 0.04
        shape.update(_tightening(rng, str(shape["rendered"]), old=old, locked=locked))
        # Every other locked full item is a pin (invariant 17), without another draw.
        pinned = locked and shape.get("state", State.FULL) is State.FULL and offset % 2 == 0
        fields = {**shape, "locked": locked, "pinned": pinned}
        items.append(ContextItem(**fields, turn=turn, created_at=when, changed_at=when))  # type: ignore[arg-type]
    return items


def _attached_block(rng: random.Random, turn: int, source: str) -> list[ContextItem]:
    """An expanded attach pointer: open marker, copied items, close marker, one ``attached_from``."""
    marker = f"attach:s_other:{source}"
    body = [
        ContextItem(f"x{k}", rng.choice(("user", "assistant")), rendered=_text(rng, 8), turn=turn)
        for k in range(rng.randint(1, 4))
    ]
    if rng.random() < 0.6:
        # A tool result from the other session: rules tighten it, and its handle names the copy.
        body.append(
            ContextItem(
                f"x{len(body)}",
                "tool",
                rendered=_text(rng, rng.choice((40, 900))),
                tool_name=rng.choice(_TOOLS),
                tool_call_id=f"call_x{len(body)}_{source}",
                arguments='{"path": "src/other.py"}',
                turn=turn,
            )
        )
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
    members = [i.source_node_id for i in folded if i.merged_into == summary_id]
    # The folds line a compaction writes: the fold's handle and the first items' handles.
    named = [(i.role.value, i.source_node_id) for i in folded if i.merged_into == summary_id]
    line = folds_line(named, members)
    summary = ContextItem(
        summary_id,
        "assistant",
        state=State.SUMMARY,
        rendered=f"[Summary] 之前的工作\n{line}" if members else "[Summary] 之前的工作",
        turn=turn,
    )
    return [*folded, summary, *items[upto:]]


@functools.lru_cache(maxsize=512)
def synthetic_history(
    seed: int, turns: int, names: tuple[str, ...] = (), ruler: str = "heuristic"
) -> tuple[ContextItem, ...]:
    """A counted, well-formed history of ``turns`` turns, the same for the same arguments.

    ``names`` join the usual tool names (those a rule under check looks for); ``ruler``
    names the counter (`ctxrules.testing.ruler.check_ruler`).
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
        elif turns > _BLOCKS_EVERY and turn % _BLOCKS_EVERY == _BLOCKS_EVERY // 2:
            # A long history attaches other sessions now and then, each its own source.
            items += _attached_block(rng, turn, f"c_src{seed}_{turn}")
    if turns > 2 and rng.random() < 0.4:
        items = _fold(items, rng.randint(1, len(items) // 2), f"sm_{seed:04x}")
    tokenizer = check_ruler(ruler)
    return tuple(counted(item, tokenizer) for item in items)


def _as_commit(items: tuple[ContextItem, ...] | list[ContextItem], session: str) -> ContextCommit:
    attached = pset(i.attached_from for i in items if i.attached_from)
    commit = ContextCommit(session, head_node_id=items[-1].source_node_id if items else None)
    return attrs.evolve(commit.with_items(items), attached=attached)


#: Items per chunk of a commit's item vector: sizes on and around its multiples come up.
CHUNK = 64
#: Keys of rule marks a generated commit may carry (a batch point's, another rule's).
_MARKS = ("batch:count", "batch:turn", "batch:items", "batch:why", "other_rule:5f1c09a2b7de")
_MARK_KEYS = st.lists(st.sampled_from(_MARKS), max_size=3, unique=True)
_rulers = functools.cache(st.sampled_from)


@st.composite
def marked(draw: st.DrawFn, commit: ContextCommit) -> ContextCommit:
    """``commit`` as an earlier rule hands it on: rule marks, and positions it reports replaced.

    The marks are a batch point's and another rule's, at drawn positions.
    """
    keys = draw(_MARK_KEYS, label="marks")
    for key in keys:
        commit = commit.with_mark(key, draw(st.integers(0, max(len(commit.items), 1))))
    if commit.items and draw(st.booleans(), label="replaced reported"):
        positions = draw(st.sets(st.integers(0, len(commit.items) - 1), max_size=3))
        commit = commit.begin_generation().replace_items({p: commit.items[p] for p in positions})
    return commit


@st.composite
def structured_commits(
    draw: st.DrawFn,
    *,
    max_turns: int = 6,
    names: tuple[str, ...] = (),
    rulers: tuple[str, ...] = ("heuristic",),
) -> ContextCommit:
    """Small well-formed histories: a few turns of tool pairs, maybe a block and a summary.

    Each is counted by one of ``rulers`` (`ctxrules.testing.ruler.check_ruler`).
    """
    seed = draw(st.integers(0, 63), label="history seed")
    ruler = draw(_rulers(rulers), label="ruler")
    items = synthetic_history(seed, draw(st.integers(1, max_turns), label="turns"), names, ruler)
    kept = items[: draw(st.integers(0, len(items)), label="items kept")]
    return _as_commit(kept, "s_small" if ruler == "heuristic" else f"s_small_{ruler}")


def commit_ruler(commit: ContextCommit) -> str:
    """The name of the ruler a generated commit was counted with (its session id says).

    >>> commit_ruler(ContextCommit("s_small_tiktoken")), commit_ruler(ContextCommit("s_long"))
    ('tiktoken', 'heuristic')
    """
    return "tiktoken" if commit.session_id.endswith("tiktoken") else "heuristic"


def chunk_sizes(largest: int) -> st.SearchStrategy[int]:
    """Sizes from a hundred to ``largest``, one in three on or beside a multiple of `CHUNK`."""
    near = st.builds(
        lambda k, d: min(max(k * CHUNK + d, 1), largest),
        st.integers(1, max(largest // CHUNK, 1)),
        st.integers(-1, 1),
    )
    return st.one_of(st.integers(min(100, largest), largest), near, near)


@st.composite
def long_commits(
    draw: st.DrawFn, *, largest: int = LARGEST, names: tuple[str, ...] = ()
) -> ContextCommit:
    """Histories of a hundred to ``largest`` items, cut from one cached long history."""
    items = synthetic_history(1_000, largest // 3 + 1, names)
    size = draw(chunk_sizes(largest), label="long history size")
    start = draw(st.integers(0, max(len(items) - size, 0)), label="long history start")
    return _as_commit(items[start : start + size], "s_long")


def forget_histories() -> None:
    """Drop the cached histories (a rule wrote into their frozen items): rebuild them on use."""
    synthetic_history.cache_clear()


@functools.cache
def _kinds(
    names: tuple[str, ...], rulers: tuple[str, ...]
) -> tuple[st.SearchStrategy[ContextCommit], ...]:
    """The strategies of `histories`' kinds of commit, built once for each set of arguments."""
    return (
        commits(max_items=8),
        structured_commits(names=names, rulers=rulers),
        long_commits(names=names),
    )


@st.composite
def histories(
    draw: st.DrawFn,
    *,
    long: bool = True,
    names: tuple[str, ...] = (),
    real: tuple[ContextItem, ...] = (),
    rulers: tuple[str, ...] = ("heuristic",),
) -> ContextCommit:
    """What each rule is checked on: small random and structured commits, some long and real ones.

    A quarter are small random commits, thirteen in twenty small structured histories
    (counted by one of ``rulers``), and (unless ``long=False``) one each a long history and a
    prefix of ``real`` (the items of a recorded session, as its first commit holds them;
    a long history when none is given). One in four carries rule marks. Hypothesis shrinks
    the choice toward the small kinds, so a counterexample ends up as small as the defect
    allows. ``names`` are tool names the structured and long histories use besides their own.
    """
    kind = draw(st.integers(0, 19 if long else 17), label="kind of commit")
    small, structured, long_ones = _kinds(names, rulers)
    if kind < 5:
        commit = draw(small)
    elif kind < 18:
        commit = draw(structured)
    elif kind == 18 or not real:
        commit = draw(long_ones)
    else:
        size = draw(st.integers(1, len(real)), label="real session prefix")
        commit = _as_commit(real[:size], "s_real")
    if draw(st.integers(0, 3), label="with marks") == 0:
        commit = draw(marked(commit))
    return commit
