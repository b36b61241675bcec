"""Exact behaviour of the rules' helpers that a mutation run of ``rules/`` found untested.

Recall handles and the folds line (invariant 16 names originals by them), parameter checks,
the reference tracker, text cutting, and the pipeline's use of the batching policy: each
test pins a value or a branch that a one-token slip would change.
"""

from __future__ import annotations

import ctxrules.render.item as item_rendering
from ctxrules.commit import ContextCommit, ContextItem, State
from ctxrules.rules import Facts, NamedRule, Pipeline, WorkMeter, builtins, scan
from ctxrules.rules.batching import Batching, BatchReason, last_batch
from ctxrules.rules.handles import fold_handle, folds_line, handle_for, without_folds_lines
from ctxrules.rules.params import Param, ParamProblem, check_params
from ctxrules.rules.protected import is_protected, protected_keys, tool_key
from ctxrules.rules.references import ReferenceTracker, _word_runs, _words, distinctive_substrings
from ctxrules.rules.text import head_and_tail, tail
from ctxrules.rules.tighten import tighten
from ctxrules.rules.tool_aging import cap_marker
from ctxrules.tokens import HeuristicCounter


def test_a_fold_handle_is_the_handle_of_its_listed_ids() -> None:
    """Invariant 16: a fold's handle is derived from ``fold`` and its ids, one per line."""
    assert fold_handle(["n1", "n2", "n3"]) == handle_for("fold\nn1\nn2\nn3") == "h:bc3tplto"


def _folds(count: int) -> tuple[list[tuple[str, str]], list[str]]:
    ids = [f"n{i}" for i in range(count)]
    return [("tool", i) for i in ids], ids


def test_the_folds_line_names_twelve_handles_and_counts_the_rest() -> None:
    """With 13 folded items the line names the first 12 and says one more is listed."""
    groups, ids = _folds(13)
    shown = " ".join(handle_for(i) for i in ids[:12])
    assert folds_line(groups, ids) == (
        f"[Folded 13 items; recall {fold_handle(ids)} lists them all. tool: {shown} (+1 more)]"
    )


def test_the_folds_line_of_exactly_twelve_items_has_no_more() -> None:
    """Twelve folded items are all named, with no ``more`` part."""
    groups, ids = _folds(12)
    shown = " ".join(handle_for(i) for i in ids)
    assert folds_line(groups, ids) == (
        f"[Folded 12 items; recall {fold_handle(ids)} lists them all. tool: {shown}]"
    )


def test_the_folds_line_groups_handles_by_label_in_order() -> None:
    """Handles are grouped under their labels, in the order the labels first appear."""
    groups = [("tool read", "n1"), ("user", "n2"), ("tool read", "n3")]
    line = folds_line(groups, ["n1", "n2", "n3"])
    assert line == (
        "[Folded 3 items; recall h:bc3tplto lists them all. "
        "tool read: h:m5vyxocm h:q4q5mzhp; user: h:asakspjo]"
    )


def test_a_folds_line_without_labelled_items_names_only_the_fold() -> None:
    """Without groups, the line is the fold handle alone, closed at once."""
    assert folds_line([], ["n1", "n2"]) == (
        f"[Folded 2 items; recall {fold_handle(['n1', 'n2'])} lists them all.]"
    )


def test_removing_a_folds_line_leaves_the_lines_around_it() -> None:
    """An earlier summary's folds line is removed with its newline, and nothing is put in its place."""
    text = "old facts\n[Folded 3 items; recall h:bc3tplto lists them all.]\nnew facts"
    assert without_folds_lines(text) == "old facts\nnew facts"


def test_a_cap_marker_names_its_recall_handle_by_default() -> None:
    """Invariant 16: unless told otherwise, the marker of a cut text gives its recall handle."""
    assert cap_marker(6, 10, "n1") == f"\n…[6 of 10 characters cut; recall {handle_for('n1')}]…\n"


SIZE = Param("size", "int", 3, "a size", minimum=0, maximum=10)


def test_a_value_of_the_wrong_kind_is_reported_with_its_type() -> None:
    """The problem names the key, what was expected, and the value found with its type."""
    assert SIZE.check("x") == ParamProblem("size", "an integer in [0, 10]", "'x' (str)")


def test_a_value_out_of_either_bound_is_reported_and_the_bounds_are_inclusive() -> None:
    """Below the minimum or above the maximum is a problem; each bound itself is valid."""
    assert SIZE.check(-1) == ParamProblem("size", "an integer in [0, 10]", "-1")
    assert SIZE.check(11) == ParamProblem("size", "an integer in [0, 10]", "11")
    assert SIZE.check(0) is None
    assert SIZE.check(10) is None
    low_only = Param("size", "int", 3, "a size", minimum=0)
    assert low_only.check(-1) == ParamProblem("size", "an integer >= 0", "-1")


def test_repeats_and_stop_words_are_skipped_not_the_end() -> None:
    """A stop word or a repeat is skipped; the substrings after it are still found."""
    assert distinctive_substrings("Note: see FooBar and FooBar then BazQux") == (
        "FooBar",
        "BazQux",
    )


def test_a_path_counts_from_eight_characters() -> None:
    """A path of exactly 8 characters is distinctive; one of 7 is not."""
    assert distinctive_substrings("at ab/cd/ef and a/cd/ef") == ("ab/cd/ef",)


def _item(node: str, text: str, arguments: str = "") -> ContextItem:
    return ContextItem(node, "tool" if arguments else "user", rendered=text, arguments=arguments)


def test_a_plain_word_cites_an_earlier_backtick_span() -> None:
    """A later message that names a span as a plain word, punctuation stripped, cites its item."""
    earlier, later = _item("n1", "edit `maxX` now"), _item("n2", "use maxX.")
    assert distinctive_substrings(later.rendered) == ()
    assert set(ReferenceTracker().observe([earlier, later]).cited) == {"n1"}


def test_a_tool_call_is_cited_by_its_arguments() -> None:
    """The tracker reads a tool item's arguments as well as its result."""
    call = _item("n1", "ok", arguments='{"path": "src/app/main.py"}')
    later = _item("n2", "now test src/app/main.py")
    assert set(ReferenceTracker().observe([call, later]).cited) == {"n1"}


def test_every_earlier_item_with_the_substring_is_cited() -> None:
    """Two earlier items that share a substring are both cited by a later mention."""
    items = [
        _item("n1", "wrote src/pkg/mod.py"),
        _item("n2", "read src/pkg/mod.py"),
        _item("n3", "Now test src/pkg/mod.py"),
    ]
    assert set(ReferenceTracker().observe(items).cited) == {"n1", "n2"}


def test_an_item_never_cites_its_own_node() -> None:
    """A second item of the same node that repeats a substring does not cite that node."""
    items = [_item("n1", "wrote src/pkg/mod.py"), _item("n1", "again src/pkg/mod.py")]
    assert set(ReferenceTracker().observe(items).cited) == set()


def test_the_tracker_goes_on_after_an_item_of_a_cited_node() -> None:
    """Items after one whose node is already cited are still read, in the same call and the next."""
    first = [
        _item("n1", "wrote src/a/one.py"),
        _item("n2", "read src/a/one.py"),
        _item("n1", "wrote src/c/three.py"),
        _item("n3", "wrote src/d/four.py"),
    ]
    tracker = ReferenceTracker().observe(first)
    assert set(tracker.cited) == {"n1"}
    assert set(tracker.observe([_item("n4", "run src/d/four.py")]).cited) == {"n1", "n3"}


def test_a_one_character_tail_keeps_that_character() -> None:
    """Cutting to a tail of one character keeps it, after the ellipsis."""
    assert tail("abcdef", 1) == "…f"
    assert head_and_tail("abcdefghij", 3, 1) == "abc…j"


def _age_from_turn_one(commit: ContextCommit, facts: Facts) -> ContextCommit:
    if facts.head_turn < 1:
        return commit
    changes = {
        i: ContextItem(item.source_node_id, "user", rendered="aged", state=State.AGED)
        for i, item in enumerate(commit.items)
        if item.state is State.FULL
    }
    return commit.replace_items(changes)


def test_a_turn_between_batch_points_holds_back_changes_to_sent_items() -> None:
    """Invariant 15: the batching policy is asked about the real parent, so a quiet turn is no batch point."""
    policy = Batching(every_turns=3, budget_share=0, cold_after_seconds=0, min_history_tokens=0)
    pipeline = Pipeline((NamedRule("age", _age_from_turn_one),), batching=policy)
    first = ContextCommit("s").append_items([ContextItem("a", "user", rendered="a")])
    parent = pipeline.step(None, first, Facts(head_turn=0))
    assert last_batch(parent) == (1, BatchReason.START)
    grown = parent.begin_generation().append_items([ContextItem("b", "user", rendered="b")])
    child = pipeline.step(parent, grown, Facts(head_turn=1))
    assert last_batch(child) == (1, BatchReason.START)
    assert [i.state for i in child.items] == [State.FULL, State.AGED]
    assert child.items[0] is parent.items[0]


def test_a_second_tightening_the_same_way_keeps_the_rendered_messages() -> None:
    """Tightened again the same way for another reason, an item keeps the first one's messages."""
    ruler = HeuristicCounter()
    facts = Facts(now=5.0, tokenizer=ruler)
    item = item_rendering.counted(ContextItem("n", "tool", rendered="x" * 400), ruler)
    first = tighten(item, State.AGED, facts, rendered="[stub]", reason="a")
    second = tighten(item, State.AGED, facts, rendered="[stub]", reason="b")
    assert first is not None
    assert second is not None
    assert (second.reason, second.rendered, second.tokens) == ("b", "[stub]", first.tokens)
    assert first.memo is not None
    assert second.memo is not None
    messages = first.memo[item_rendering.MESSAGES_KEY]
    assert second.memo[item_rendering.MESSAGES_KEY] is messages
    assert messages == item_rendering.render_item(second)


def test_a_builtin_rule_lists_its_defaults() -> None:
    """``defaults`` gives every declared parameter its default value, lists as tuples."""
    rule = builtins()["age_tool_results"]
    defaults = rule.defaults()
    assert list(defaults) == [p.name for p in rule.params]
    assert defaults["tail_turns"] == 3
    assert isinstance(defaults["protected_tools"], tuple)
    assert "web_search" in defaults["protected_tools"]


def test_a_second_tightening_that_kept_the_old_text_works_without_messages() -> None:
    """Invariant 3: a tightening that kept the cheaper old text is found again, memo or none."""
    ruler = HeuristicCounter()
    facts = Facts(now=5.0, tokenizer=ruler)
    item = item_rendering.counted(ContextItem("n", "tool", rendered="short"), ruler)
    longer = "x" * 400
    first = tighten(item, State.AGED, facts, rendered=longer, reason="a")
    second = tighten(item, State.AGED, facts, rendered=longer, reason="b")
    assert first is not None
    assert second is not None
    assert (first.rendered, second.rendered, second.reason) == ("short", "short", "b")
    assert second.tokens == item.tokens


def test_a_mistyped_parameter_is_reported_with_the_closest_name() -> None:
    """An unknown key is a problem of its own, naming the known keys and the closest one."""
    problems = check_params((SIZE,), {"sise": 2, "colour": 1, "size": 11})
    assert problems == (
        ParamProblem("sise", "a known parameter (one of ['size'])", "'sise'", "size"),
        ParamProblem("colour", "a known parameter (one of ['size'])", "'colour'", None),
        ParamProblem("size", "an integer in [0, 10]", "11"),
    )


def test_booleans_and_strings_are_not_numbers_or_lists() -> None:
    """``True`` is no integer, and a string or a list of numbers is no list of strings."""
    assert SIZE.check(value=True) == ParamProblem("size", "an integer in [0, 10]", "True (bool)")
    names = Param("names", "str_list", (), "names")
    assert names.check("abc") is not None
    assert names.check([1]) is not None
    assert names.check(["a", "b"]) is None


def test_a_tool_name_is_compared_in_lower_case_without_separators() -> None:
    """``tool_key`` lower-cases a name and drops ``_``, ``-`` and spaces; an empty name has no key."""
    assert tool_key("Todo-Write_all now") == "todowriteallnow"
    assert tool_key(None) == tool_key("") == ""
    keys = protected_keys(["todo_write"])
    assert is_protected("TodoWrite", keys)
    assert not is_protected("grep", keys)


def test_a_repeated_tightening_at_a_later_time_is_stamped_then() -> None:
    """The same tightening found again for a later turn carries that turn's time, not the first's."""
    ruler = HeuristicCounter()
    item = item_rendering.counted(ContextItem("n", "tool", rendered="x" * 400), ruler)
    first = tighten(item, State.AGED, Facts(now=5.0, tokenizer=ruler), rendered="s", reason="a")
    again = tighten(item, State.AGED, Facts(now=9.0, tokenizer=ruler), rendered="s", reason="a")
    other = tighten(item, State.AGED, Facts(now=9.0, tokenizer=ruler), rendered="s", reason="b")
    assert first is not None
    assert (first.changed_at, first.reason) == (5.0, "a")
    assert again is not None
    assert (again.changed_at, again.reason) == (9.0, "a")
    assert other is not None
    assert (other.changed_at, other.reason) == (9.0, "b")


def test_an_item_keeps_each_way_it_was_tightened() -> None:
    """Tightened one way, another, then the first again, an item gives back the first result kept."""
    ruler = HeuristicCounter()
    facts = Facts(now=5.0, tokenizer=ruler)
    item = item_rendering.counted(ContextItem("n", "tool", rendered="x" * 400), ruler)
    first = tighten(item, State.AGED, facts, rendered="one", reason="a")
    tighten(item, State.AGED, facts, rendered="two", reason="a")
    assert tighten(item, State.AGED, facts, rendered="one", reason="a") is first


def test_the_meter_counts_each_item_scanned_once() -> None:
    """A scan from position 1 of three items yields two and counts exactly two visits."""
    meter = WorkMeter()
    commit = ContextCommit("s").append_items([ContextItem(n, "user") for n in "abc"])
    visited = [index for index, _ in scan(commit, 1, Facts(meter=meter))]
    assert visited == [1, 2]
    assert meter.items_visited == 2


def test_a_path_in_backticks_is_found_without_them() -> None:
    """A backticked path is one word with its backticks; the path is the piece between them."""
    assert distinctive_substrings("see `src/app/main.py` now") == ("src/app/main.py",)


def test_a_path_may_have_its_slash_one_character_from_either_end() -> None:
    """A slash anywhere but the first or last character makes a path."""
    assert distinctive_substrings("at a/bcdefgh and abcdefg/h or /abcdefgh") == (
        "a/bcdefgh",
        "abcdefg/h",
    )


def test_camel_case_runs_may_start_with_any_capital() -> None:
    """Names starting with Y or Z are CamelCase too (the range of capitals is inclusive)."""
    assert distinctive_substrings("open ZipFile and YellowCab") == ("ZipFile", "YellowCab")


def test_a_repeated_backtick_span_is_found_once() -> None:
    """Spans are not deduplicated by the scan: the substrings skip a span seen before."""
    assert distinctive_substrings("`Foo_Bar` and `Foo_Bar` again") == ("Foo_Bar",)


def test_words_and_word_runs_blank_every_other_byte() -> None:
    """The translation tables keep exactly the ASCII word (or path) characters.

    The tables are built when the module is imported (mutmut's workers import it before a
    mutant is switched on, so their mutants are checked by hand: docs/mutation.md).
    """
    assert _words("a-b c\u00e9d x/y.z `q` \x00\xff") == ["a-b", "c", "d", "x/y.z", "`q`"]
    assert _word_runs("see foo.bar_baz x-y") == ["see", "foo", "x", "y"]
