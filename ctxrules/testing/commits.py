"""Strategies for commit values: items in every state, and consistent commits."""

from __future__ import annotations

import functools
import random

import attrs
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.tokens import HeuristicCounter, Tokenizer

#: Words with the shapes that matter for counting: ASCII, CJK, paths, whitespace, special tokens.
_WORDS = ("the", "fix", "src/main.py", "`make test`", "0x1f3a9c", "ValueError", "数据", "上下文",
          "\n", " ", "<|endoftext|>")  # fmt: skip
_PARAGRAPH_WORDS = 4_000


def _paragraph(words: tuple[str, ...]) -> tuple[str, ...]:
    """A fixed sequence of the words in random order: texts are windows cut from it."""
    rng = random.Random(0)  # noqa: S311 - test data, not security
    return tuple(rng.choice(words) for _ in range(_PARAGRAPH_WORDS))


_PARAGRAPHS = {True: _paragraph(_WORDS), False: _paragraph(tuple(w for w in _WORDS if w.isascii()))}


@st.composite
def _window_texts(draw: st.DrawFn, max_words: int, cjk: bool) -> str:
    """Up to ``max_words`` consecutive words of the paragraph, sometimes with arbitrary text among them.

    Two or three choices per text instead of one per word: generating and shrinking stay
    cheap, and the length and the position each shrink on their own (toward "").
    """
    paragraph = _PARAGRAPHS[cjk]
    size = draw(st.integers(0, max_words))
    start = draw(st.integers(0, len(paragraph) - size))
    words = list(paragraph[start : start + size])
    if draw(st.integers(0, 3)) == 3:  # one text in four carries arbitrary Unicode
        words.insert(draw(st.integers(0, size)), draw(st.text(max_size=12)))
    return " ".join(words)


@functools.cache
def texts(max_words: int = 30, *, cjk: bool = True) -> st.SearchStrategy[str]:
    """Short texts built from code-ish English words and, unless ``cjk=False``, Chinese ones."""
    if max_words > _PARAGRAPH_WORDS:
        raise InvalidArgument(f"texts(max_words={max_words}): at most {_PARAGRAPH_WORDS}")
    return _window_texts(max_words, cjk)


_ROLES = st.sampled_from(("user", "assistant", "tool", "system"))
_TOOL_NAMES = st.sampled_from((None, "grep", "read_file", "todo_list"))
#: Node ids of 4 to 8 hex digits, drawn as one number (one choice, not one per digit).
_NODE_IDS = st.integers(0, 0xFFFF_FFFF).map(lambda n: f"{n:04x}")
# Built once, as Hypothesis caches integers() but not these: a strategy built anew is
# validated anew at every draw.
_SESSION_IDS = st.sampled_from(["s_a", "s_b"])
_PARENT_IDS = st.lists(st.just("c_parent"), max_size=1)
_states = functools.cache(st.sampled_from)


@st.composite
def context_items(
    draw: st.DrawFn,
    *,
    states: tuple[State, ...] = tuple(State),
    tokenizer: Tokenizer | None = None,
    huge: bool = False,
) -> ContextItem:
    """One item of any role and state, locked or attached at random, its tokens counted.

    Tool items sometimes lack a call id, to exercise degraded rendering. ``huge`` adds
    results of up to 20,000 characters.
    """
    role = draw(_ROLES)
    state = draw(_states(states))
    rendered = draw(texts(16))
    if huge and draw(st.booleans()):
        rendered = rendered + "x" * draw(st.integers(4_000, 20_000))
    node = draw(_NODE_IDS)
    locked = draw(st.booleans())
    attached = draw(st.booleans())
    item = ContextItem(
        ("sm_" if state is State.SUMMARY else "n_") + node,
        "assistant" if state is State.SUMMARY else role,
        state=state,
        rendered=rendered,
        locked=locked,
        # A pin locks its item and keeps it whole (invariant 17): some locked full items are pins.
        pinned=locked and state is State.FULL and draw(st.booleans()),
        attached_from="c_attached" if attached else None,
        tool_name=draw(_TOOL_NAMES) if role == "tool" else None,
        tool_call_id=("call_" + node if draw(st.booleans()) else None) if role == "tool" else None,
        arguments=draw(texts(5)) if role == "tool" else "",
        turn=draw(st.integers(0, 50)),
        created_at=draw(st.floats(0, 1e6)),
        changed_at=draw(st.floats(0, 1e6)),
    )
    return counted(item, tokenizer or HeuristicCounter())


def _item_lists(
    max_items: int, states: tuple[State, ...], tokenizer: Tokenizer | None = None
) -> st.SearchStrategy[list[ContextItem]]:
    return st.lists(
        context_items(states=states, tokenizer=tokenizer),
        max_size=max_items,
        unique_by=lambda item: item.source_node_id,
    )


#: The lists of the default ruler, built once for each size and set of states.
_plain_item_lists = functools.cache(_item_lists)


@st.composite
def commits(
    draw: st.DrawFn,
    *,
    max_items: int = 30,
    tokenizer: Tokenizer | None = None,
    states: tuple[State, ...] = tuple(State),
) -> ContextCommit:
    """A commit whose items are random and whose ``total_tokens`` is consistent with them."""
    # Node ids are unique within a commit (attached blocks are told apart by attached_from).
    items = draw(
        _plain_item_lists(max_items, states)
        if tokenizer is None
        else _item_lists(max_items, states, tokenizer)
    )
    # A valid commit has at most one active summary; later ones were replaced by it.
    seen_summary = False
    for index, item in enumerate(items):
        if item.state is State.SUMMARY:
            if seen_summary:
                items[index] = counted(
                    attrs.evolve(item, state=State.SUMMARIZED), tokenizer or HeuristicCounter()
                )
            seen_summary = True
    header = ContextCommit(
        draw(_SESSION_IDS),
        parent_ids=tuple(draw(_PARENT_IDS)),
        created_at=draw(st.floats(0, 1e6)),
        head_node_id=items[-1].source_node_id if items else None,
    )
    attached = pset(item.attached_from for item in items if item.attached_from)
    return attrs.evolve(header.with_items(items), attached=attached)
