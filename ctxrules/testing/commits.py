"""Strategies for commit values: items in every state, and consistent commits."""

from __future__ import annotations

import attrs
from hypothesis import strategies as st
from pyrsistent import pset

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.render import counted
from ctxrules.tokens import HeuristicCounter, Tokenizer

#: Text with the shapes that matter for counting: ASCII, CJK, paths and empty strings.
_WORDS = st.sampled_from(
    [
        "the",
        "fix",
        "src/main.py",
        "`make test`",
        "0x1f3a9c",
        "ValueError",
        "数据",
        "上下文",
        "\n",
        " ",
        "<|endoftext|>",
    ]
)


def texts(max_words: int = 30, *, cjk: bool = True) -> st.SearchStrategy[str]:
    """Short texts built from code-ish English words and, unless ``cjk=False``, Chinese ones."""
    words = _WORDS if cjk else _WORDS.filter(lambda w: w.isascii())
    # Mostly known words, one draw in four arbitrary Unicode: cheap to generate and shrink.
    return st.lists(st.one_of(words, words, words, st.text(max_size=12)), max_size=max_words).map(
        " ".join
    )


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
    role = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
    state = draw(st.sampled_from(states))
    rendered = draw(texts(16))
    if huge and draw(st.booleans()):
        rendered = rendered + "x" * draw(st.integers(4_000, 20_000))
    node = draw(st.text("abcdef0123456789", min_size=4, max_size=8))
    item = ContextItem(
        ("sm_" if state is State.SUMMARY else "n_") + node,
        "assistant" if state is State.SUMMARY else role,
        state=state,
        rendered=rendered,
        locked=draw(st.booleans()),
        attached_from=draw(st.none() | st.just("c_attached")),
        tool_name=draw(st.sampled_from([None, "grep", "read_file", "todo_list"]))
        if role == "tool"
        else None,
        tool_call_id=draw(st.none() | st.just("call_" + node)) if role == "tool" else None,
        arguments=draw(texts(5)) if role == "tool" else "",
        turn=draw(st.integers(0, 50)),
        created_at=draw(st.floats(0, 1e6)),
        changed_at=draw(st.floats(0, 1e6)),
    )
    return counted(item, tokenizer or HeuristicCounter())


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
        st.lists(
            context_items(states=states, tokenizer=tokenizer),
            max_size=max_items,
            unique_by=lambda item: item.source_node_id,
        )
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
        draw(st.sampled_from(["s_a", "s_b"])),
        parent_ids=tuple(draw(st.lists(st.just("c_parent"), max_size=1))),
        created_at=draw(st.floats(0, 1e6)),
        head_node_id=items[-1].source_node_id if items else None,
    )
    attached = pset(item.attached_from for item in items if item.attached_from)
    return attrs.evolve(header.with_items(items), attached=attached)
