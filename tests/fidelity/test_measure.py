"""Each classification of a reference, the recall round trips, the first-occurrence rule, the trail."""

from __future__ import annotations

from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.dag import Call, Graph
from ctxrules.fidelity import HistoryIndex, Reach, SentText, measure, reply_references
from ctxrules.render import Message, TextBlock, ToolResultBlock, ToolUseBlock
from ctxrules.rules.handles import fold_handle, folds_line, handle_for, recall_note

RESULT = "def parse_config_v2(path):\n    return load_settings(path)\nKeyError: 'db_url' in load_settings"


def _graph(*, write: bool = False, user: str = "please fix the config loader") -> Graph:
    """A user asks, the assistant reads a file (and writes one), then replies."""
    calls = [
        Call("u1", "user", output=user),
        Call("a1", "assistant", output="Reading it.", predecessor="u1"),
        Call(
            "t1", "tool", name="Read", input={"file_path": "src/cfg.py"}, output=RESULT, caller="a1"
        ),
    ]
    if write:
        calls.append(
            Call(
                "t2",
                "tool",
                name="Write",
                input={"file_path": "src/new_mod.py"},
                output="ok",
                caller="a1",
            )
        )
    calls.append(
        Call(
            "a2",
            "assistant",
            output="parse_config_v2 calls load_settings; I'll fix it.",
            predecessor="a1",
        )
    )
    graph = Graph()
    for call in calls:
        graph = graph.append(call).unwrap()
    return graph


def _index(graph: Graph) -> HistoryIndex:
    index = HistoryIndex()
    for node in ("u1", "a1"):
        index.add_call(graph, graph.nodes[node])
    return index


def _request(*texts: str) -> tuple[Message, ...]:
    return tuple(Message("user", (TextBlock(text),)) for text in texts)


def _measured(messages: tuple[Message, ...], *, search: bool = False, write: bool = False):
    graph = _graph(write=write)
    index = _index(graph)
    found = reply_references(graph, graph.nodes["a2"])
    return measure(index, found, messages, search=search)


def test_references_found_whole_in_the_request_are_visible() -> None:
    """A reference sent verbatim, in a tool result block, is visible."""
    messages = (
        Message("assistant", (ToolUseBlock("c1", "Read", '{"file_path":"src/cfg.py"}'),)),
        Message("tool", (ToolResultBlock("c1", RESULT),)),
    )
    fidelity = _measured(messages)
    assert (fidelity.references, fidelity.visible, fidelity.round_trips) == (2, 2, 0)


def test_a_handle_the_request_names_makes_its_original_one_recall_away() -> None:
    """A stub naming the result's handle: every reference in the original is one recall away."""
    stub = f"[tool Read] output: def parse_… {recall_note(handle_for('t1'))}"
    fidelity = _measured(_request(stub))
    assert (fidelity.one_recall, fidelity.visible, fidelity.lost) == (2, 0, 0)
    # Both references are in one original: one round trip reads them.
    assert fidelity.round_trips == 1
    assert {h.reach for h in fidelity.hidden} == {Reach.ONE_RECALL}
    assert {h.source_id for h in fidelity.hidden} == {"t1"}


def test_a_stub_that_keeps_a_name_shows_it_and_hides_the_rest() -> None:
    """What the stub still shows is visible; the rest is one recall away."""
    stub = f"[tool Read] output: def parse_config_v2(path): … {recall_note(handle_for('t1'))}"
    fidelity = _measured(_request(stub))
    assert (fidelity.visible, fidelity.one_recall) == (1, 1)
    assert [h.reference for h in fidelity.hidden] == ["load_settings"]


def test_with_no_handle_named_the_reference_is_lost() -> None:
    """Hidden and named by nothing: lost."""
    fidelity = _measured(_request("[Old tool result cleared]"))
    assert (fidelity.lost, fidelity.round_trips) == (2, 0)


def test_search_history_makes_the_unnamed_deeper_not_lost() -> None:
    """A request that offers search can still find it, a search per reference."""
    fidelity = _measured(_request("[Old tool result cleared]"), search=True)
    assert (fidelity.deeper, fidelity.lost, fidelity.round_trips) == (2, 0, 2)


def _folded(inline: bool) -> tuple[HistoryIndex, tuple[Message, ...], list[str]]:
    """The read folded into a summary that names its fold (and the read inline, if asked)."""
    graph = _graph()
    index = _index(graph)
    folded = ["u1", "a1", "t1"]
    line = (
        folds_line([("tool", "t1")], folded)
        if inline
        else f"[Folded 3 items; recall {fold_handle(folded)} lists them all.]"
    )
    summary = ContextItem(
        "sm_1", "assistant", state=State.SUMMARY, rendered=f"Work so far.\n{line}"
    )
    items = [summary] + [
        ContextItem(
            node, "tool" if node == "t1" else "user", state=State.SUMMARIZED, merged_into="sm_1"
        )
        for node in folded
    ]
    index.add_summaries(ContextCommit("s").with_items(items))
    return (
        index,
        _request("[Summary] " + summary.rendered),
        reply_references(graph, graph.nodes["a2"]),
    )


def test_an_item_folded_into_a_summary_that_names_it_is_one_recall_away() -> None:
    """The summary's folds line names the read's handle inline."""
    index, messages, found = _folded(inline=True)
    fidelity = measure(index, found, messages)
    assert (fidelity.one_recall, fidelity.round_trips) == (2, 1)


def test_an_item_only_its_fold_lists_is_deeper() -> None:
    """Recall the fold, then the item: two round trips, deeper."""
    index, messages, found = _folded(inline=False)
    fidelity = measure(index, found, messages)
    assert (fidelity.deeper, fidelity.lost, fidelity.round_trips) == (2, 0, 2)


def test_a_string_the_user_wrote_first_is_no_reference() -> None:
    """Only strings whose first occurrence is a tool result count."""
    graph = _graph(user="please fix parse_config_v2 now")
    index = _index(graph)
    fidelity = measure(index, reply_references(graph, graph.nodes["a2"]), _request("nothing"))
    assert fidelity.references == 1
    assert [h.reference for h in fidelity.hidden] == ["load_settings"]


def test_a_string_only_the_reply_has_is_no_reference() -> None:
    """The model's own new names did not come from anywhere."""
    graph = _graph()
    index = _index(graph)
    fidelity = measure(index, ("brand_new_name", "parse_config_v2"), _request("x"))
    assert fidelity.references == 1


def test_an_error_line_is_looked_up_whole() -> None:
    """A quoted error line counts when a tool result holds it verbatim, visible only whole."""
    graph = _graph()
    index = _index(graph)
    line = "KeyError: 'db_url' in load_settings"
    assert measure(index, (line,), _request(f"...{line}...")).visible == 1
    cut = measure(index, (line,), _request("KeyError: 'db_url' in load_…"))
    assert (cut.references, cut.visible, cut.lost) == (1, 0, 1)
    assert measure(index, ("KeyError: 'other' in load_settings",), _request("")).references == 0


def test_the_trail_lists_files_written_and_what_the_request_does_not_name() -> None:
    """A file written by a Write call must be named somewhere in the request."""
    missing = _measured(_request("nothing"), write=True)
    assert (missing.trail, missing.trail_missing, missing.trail_named) == (
        1,
        ("src/new_mod.py",),
        False,
    )
    named = _measured(_request("wrote src/new_mod.py"), write=True)
    assert (named.trail, named.trail_named) == (1, True)


def test_the_index_visits_each_text_once() -> None:
    """Measuring many requests never re-indexes the history: work counted, not timed."""
    graph = _graph(write=True)
    index = _index(graph)
    # u1, a1, and t1 and t2 twice each (arguments, then output).
    assert index.visited == 6
    found = reply_references(graph, graph.nodes["a2"])
    for _ in range(50):
        measure(index, found, _request("nothing"))
    assert index.visited == 6


def test_an_item_in_a_summary_a_later_summary_folded_is_three_recalls_deep() -> None:
    """The later summary names the earlier one, whose fold lists the read: three round trips."""
    graph = _graph()
    index = _index(graph)
    folded = ["u1", "a1", "t1"]
    first_line = f"[Folded 3 items; recall {fold_handle(folded)} lists them all.]"
    first = ContextItem(
        "sm_1",
        "assistant",
        state=State.SUMMARIZED,
        rendered=f"Early work.\n{first_line}",
        merged_into="sm_2",
    )
    later = ContextItem(
        "sm_2",
        "assistant",
        state=State.SUMMARY,
        rendered=f"All work.\n{folds_line([('summary', 'sm_1')], ['sm_1'])}",
    )
    members = [ContextItem(n, "user", state=State.SUMMARIZED, merged_into="sm_1") for n in folded]
    index.add_summaries(ContextCommit("s").with_items([later, first, *members]))
    found = reply_references(graph, graph.nodes["a2"])
    fidelity = measure(index, found, _request("[Summary] " + later.rendered))
    assert (fidelity.deeper, fidelity.round_trips) == (2, 3)
    # Without the later summary in the request nothing leads there.
    assert measure(index, found, _request("no summary")).lost == 2


def test_the_sent_text_grows_from_the_messages_two_requests_share() -> None:
    """A request's text built from the previous one's shared messages equals it built afresh."""
    stub = f"[stub] {recall_note(handle_for('t1'))}"
    first = _request("task", stub, "old tail")
    second = (*first[:2], *_request("new tail", f"see {recall_note(handle_for('t9'))}"))
    grown = SentText().grown(first, 0).grown(second, 2)
    assert grown == SentText().grown(second, 0)
    assert grown.named == {handle_for("t1"), handle_for("t9")}
    # A broken prefix (a compaction rewrote the start) keeps nothing it should not.
    rewritten = (*_request("summary"), *second[1:])
    assert SentText().grown(second, 0).grown(rewritten, 0) == SentText().grown(rewritten, 0)


def test_a_string_is_searched_for_in_the_messages_new_since_it_was_asked_for() -> None:
    """Work counted: a request extending the last one searches its new messages only.

    The trail's paths and the references are asked for at every request; what the shared
    messages held is remembered, and a rewritten prefix is searched again from where it changed.
    """
    first = SentText().grown(_request("wrote src/a.py", "old tail"), 0)
    assert first.contains("src/a.py")
    assert not first.contains("src/b.py")
    searches = first.searches
    before = searches.searched
    second = first.grown((*_request("wrote src/a.py", "old tail"), *_request("made src/b.py")), 2)
    assert second.contains("src/a.py")
    assert second.contains("src/b.py")
    # src/a.py stands in a kept message; src/b.py was absent from both kept ones.
    assert searches.searched - before == 1
    rewritten = second.grown((*_request("summary"), *_request("made src/b.py")), 0)
    assert not rewritten.contains("src/a.py")
    assert rewritten.contains("src/b.py")
    # The same answers as the whole text gives, whatever was remembered.
    for sent in (first, second, rewritten):
        for string in ("src/a.py", "src/b.py", "summary", "old tail\nmade", ""):
            assert sent.contains(string) == (string in sent.text)
