"""One table of invalid specs, one test: each spec yields exactly these errors, in full."""

from __future__ import annotations

import pytest
from returns.result import Failure

from ctxrules.spec import SpecErrors, load_spec

RULE = "[[rules]]\n"
TOOL = 'when = { role = "tool" }\n'

#: (id, spec text, needs the example_rules module importable, the full error text).
INVALID: list[tuple[str, str, bool, str]] = [
    (
        "toml-syntax",
        "version = 1\nname\n",
        False,
        "<string>: line 2, column 5: expected valid TOML, found a syntax error (Expected '=' after a key in a key/value pair)",
    ),
    (
        "toml-syntax-at-end",
        "rules = [\n",
        False,
        "<string>: end of document: expected valid TOML, found a syntax error (Invalid value)",
    ),
    (
        "entry-not-a-table",
        'rules = ["cap_tool_result"]\n',
        False,
        "<string>: rules[0]: expected a rule table, found 'cap_tool_result' (str)",
    ),
    (
        "when-not-a-table",
        RULE + 'when = "tool"\nthen = { state = "aged" }\n',
        False,
        "<string>: rules[0].when: expected a table of feature tests, found 'tool' (str)",
    ),
    (
        "unknown-top-level-key",
        "versoin = 1\n",
        False,
        "<string>: versoin: expected a top-level key (one of 'version', 'name', 'description', 'batching', 'rules', 'pins', 'recall'), found 'versoin' (did you mean 'version'?)",
    ),
    (
        "bad-version",
        "version = 2\n",
        False,
        "<string>: version: expected the spec format version 1, found 2",
    ),
    (
        "version-not-an-int",
        'version = "1"\n',
        False,
        "<string>: version: expected the spec format version 1, found '1' (str)",
    ),
    (
        "name-not-a-string",
        "name = 3\n",
        False,
        "<string>: name: expected a string, found 3 (int)",
    ),
    (
        "rules-not-a-list",
        'rules = { use = "clear_idle" }\n',
        False,
        "<string>: rules: expected an array of rule tables ([[rules]]), found {'use': 'clear_idle'} (table)",
    ),
    (
        "both-use-and-when",
        RULE + 'use = "clear_idle"\n' + TOOL,
        False,
        "<string>: rules[0]: expected either 'use' or a 'when' and 'then' pair, found both 'use' and 'when'",
    ),
    (
        "neither-use-nor-when",
        RULE + 'name = "orphan"\n',
        False,
        "<string>: rules[0]: expected a 'use' key, or a 'when' and 'then' pair, found only 'name'",
    ),
    (
        "empty-entry",
        RULE,
        False,
        "<string>: rules[0]: expected a 'use' key, or a 'when' and 'then' pair, found an empty table",
    ),
    (
        "unknown-entry-key",
        RULE + 'use = "clear_idle"\nparmas = { idle_seconds = 60 }\n',
        False,
        "<string>: rules[0].parmas: expected a key of a rule entry (one of 'use', 'name', 'params', 'when', 'then'), found 'parmas' (did you mean 'params'?)",
    ),
    (
        "unknown-rule-name",
        RULE + 'use = "age_tool_result"\n',
        False,
        "<string>: rules[0].use: expected a built-in rule name (one of 'age_tool_results', 'cap_tool_result', 'clear_idle', 'gate_tool_results') or 'package.module:factory', found 'age_tool_result' (did you mean 'age_tool_results'?)",
    ),
    (
        "use-not-a-string",
        RULE + "use = 3\n",
        False,
        "<string>: rules[0].use: expected a built-in rule name or 'package.module:factory', found 3 (int)",
    ),
    (
        "params-not-a-table",
        RULE + 'use = "clear_idle"\nparams = [3600]\n',
        False,
        "<string>: rules[0].params: expected a table of parameters, found [3600] (array)",
    ),
    (
        "unknown-param",
        RULE + 'use = "age_tool_results"\n[rules.params]\ntail_turn = 2\n',
        False,
        "<string>: rules[0].params.tail_turn: expected a parameter of 'age_tool_results' (one of 'tail_turns', 'max_args_chars', 'stub_head_chars', 'stub_tail_chars', 'protected_tools', 'handles', 'stub_hint_chars', 'cited_tail_turns', 'used_tail_turns', 'stub_hints_unseen', 'used_hint_chars', 'scale_below'), found 'tail_turn' (did you mean 'tail_turns'?)",
    ),
    (
        "wrong-param-type",
        RULE + 'use = "age_tool_results"\n[rules.params]\ntail_turns = "3"\n',
        False,
        "<string>: rules[0].params.tail_turns: expected an integer >= 0, found '3' (str)",
    ),
    (
        "wrong-param-type-list",
        RULE + 'use = "clear_idle"\n[rules.params]\nprotected_tools = "todo_list"\n',
        False,
        "<string>: rules[0].params.protected_tools: expected a list of strings, found 'todo_list' (str)",
    ),
    (
        "out-of-bounds-param",
        RULE + 'use = "cap_tool_result"\n[rules.params]\nmax_chars = 100\n',
        False,
        "<string>: rules[0].params.max_chars: expected an integer >= 200, found 100 (int)",
    ),
    (
        "out-of-bounds-share",
        RULE + 'use = "cap_tool_result"\n[rules.params]\ntail_share = 1.5\n',
        False,
        "<string>: rules[0].params.tail_share: expected a number in [0, 1], found 1.5 (float)",
    ),
    (
        "nan-param",
        RULE + 'use = "clear_idle"\n[rules.params]\nidle_seconds = nan\n',
        False,
        "<string>: rules[0].params.idle_seconds: expected a number >= 0, found nan (float)",
    ),
    (
        "duplicate-rule-name",
        RULE + 'use = "clear_idle"\n' + RULE + 'use = "clear_idle"\n',
        False,
        "<string>: rules[1]: expected a name no earlier rule uses (give this entry its own 'name'), found 'clear_idle' (also rules[0])",
    ),
    (
        "empty-name",
        RULE + 'use = "clear_idle"\nname = ""\n',
        False,
        "<string>: rules[0].name: expected a non-empty string, found '' (str)",
    ),
    (
        "unknown-feature",
        RULE + 'when = { tokns = { gt = 2000 } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tokns: expected a known feature (one of 'role', 'tool_name', 'state', 'turn_age', 'seconds_since_change', 'age_seconds', 'text', 'tokens', 'cited', 'attached', 'locked', 'position', 'position_from_end'), found 'tokns' (did you mean 'tokens'?)",
    ),
    (
        "unknown-operator",
        RULE + 'when = { tokens = { gte = 2000 } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tokens: expected an operator for an int feature (one of 'eq', 'ne', 'in', 'not_in', 'lt', 'le', 'gt', 'ge'), found 'gte' (did you mean 'gt'?)",
    ),
    (
        "operator-wrong-for-feature",
        RULE + 'when = { role = { gt = "tool" } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.role: expected an operator for a str feature (one of 'eq', 'ne', 'in', 'not_in', 'matches'), found 'gt'",
    ),
    (
        "empty-operator-table",
        RULE + 'when = { tokens = {} }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tokens: expected at least one operator, found an empty table",
    ),
    (
        "wrong-operand-type",
        RULE + 'when = { turn_age = { ge = "six" } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.turn_age: expected an integer operand for 'ge', found 'six' (str)",
    ),
    (
        "bool-is-not-an-int",
        RULE + 'when = { tokens = { gt = true } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tokens: expected an integer operand for 'gt', found True (bool)",
    ),
    (
        "nan-operand",
        RULE + 'when = { age_seconds = { gt = nan } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.age_seconds: expected a number operand for 'gt' (not nan), found nan",
    ),
    (
        "unknown-role-value",
        RULE + 'when = { role = "tol" }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.role: expected a role (one of 'user', 'assistant', 'tool', 'system'), found 'tol' (did you mean 'tool'?)",
    ),
    (
        "bad-regex",
        RULE + 'when = { tool_name = { matches = "grep(" } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tool_name: expected a valid regular expression for 'matches', found 'grep(' (missing ): grep()",
    ),
    (
        "regex-not-a-string",
        RULE + 'when = { tool_name = { matches = 3 } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tool_name: expected a regular expression string for 'matches', found 3 (int)",
    ),
    (
        "in-with-non-list",
        RULE + 'when = { tool_name = { in = "grep" } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tool_name: expected an array of operands for 'in', found 'grep' (str)",
    ),
    (
        "in-with-a-bad-element",
        RULE + 'when = { tool_name = { not_in = ["grep", 3] } }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tool_name: expected a string operand for 'not_in', found 3 (int)",
    ),
    (
        "bare-list",
        RULE + 'when = { tool_name = ["grep", "cat"] }\nthen = { state = "cleared" }\n',
        False,
        "<string>: rules[0].when.tool_name: expected a string operand for 'eq' (write { in = [...] } to match any of a list), found ['grep', 'cat'] (array)",
    ),
    (
        "loosening-declarative-rule",
        RULE + 'when = { state = { in = ["full", "cleared"] } }\nthen = { state = "aged" }\n',
        False,
        "<string>: rules[0].then.state: expected a state no looser than any state 'when' can match ('cleared'), found 'aged'",
    ),
    (
        "loosening-by-ne",
        RULE + 'when = { state = { ne = "full" } }\nthen = { state = "aged" }\n',
        False,
        "<string>: rules[0].then.state: expected a state no looser than any state 'when' can match ('cleared'), found 'aged'",
    ),
    (
        "then-summarized",
        RULE + TOOL + 'then = { state = "summarized" }\n',
        False,
        "<string>: rules[0].then.state: expected a target state ('aged' or 'cleared'); summarized is reserved for compaction, which must create a summary covering the item, found 'summarized'",
    ),
    (
        "then-full",
        RULE + TOOL + 'then = { state = "full" }\n',
        False,
        "<string>: rules[0].then.state: expected a target state ('aged' or 'cleared'); a rule can only tighten an item, found 'full'",
    ),
    (
        "unknown-then-state",
        RULE + TOOL + 'then = { state = "clear" }\n',
        False,
        "<string>: rules[0].then.state: expected a target state ('aged' or 'cleared'), found 'clear' (did you mean 'cleared'?)",
    ),
    (
        "then-missing",
        RULE + TOOL,
        False,
        "<string>: rules[0].then: expected a table with a target 'state', found nothing",
    ),
    (
        "unknown-then-key",
        RULE + TOOL + 'then = { state = "aged", txt = "x" }\n',
        False,
        "<string>: rules[0].then.txt: expected a key of 'then' (one of 'state', 'text'), found 'txt' (did you mean 'text'?)",
    ),
    (
        "params-in-declarative-rule",
        RULE + TOOL + 'then = { state = "aged" }\nparams = { x = 1 }\n',
        False,
        "<string>: rules[0].params: expected no params in a declarative rule (params go with 'use'), found {'x': 1} (table)",
    ),
    (
        "template-attribute-access",
        RULE + TOOL + 'then = { state = "aged", text = "[{name.__class__}]" }\n',
        False,
        "<string>: rules[0].then.text: expected a plain field name at position 1 (no attribute access), found '{name.__class__}'",
    ),
    (
        "template-index-access",
        RULE + TOOL + 'then = { state = "aged", text = "{args[0]}" }\n',
        False,
        "<string>: rules[0].then.text: expected a plain field name at position 0 (no index access), found '{args[0]}'",
    ),
    (
        "template-conversion",
        RULE + TOOL + 'then = { state = "aged", text = "was {tokens!r}" }\n',
        False,
        "<string>: rules[0].then.text: expected a plain field name at position 4 (no conversions), found '{tokens!r}'",
    ),
    (
        "template-unknown-field",
        RULE + TOOL + 'then = { state = "aged", text = "{nam}" }\n',
        False,
        "<string>: rules[0].then.text: expected a known field at position 0 (one of {name}, {tokens}, {handle}, {head:N}, {tail:N}, {args:N}), found '{nam}' (did you mean 'name'?)",
    ),
    (
        "template-positional-field",
        RULE + TOOL + 'then = { state = "aged", text = "{}" }\n',
        False,
        "<string>: rules[0].then.text: expected a field name at position 0 (one of {name}, {tokens}, {handle}, {head:N}, {tail:N}, {args:N}), found '{}'",
    ),
    (
        "template-unclosed-brace",
        RULE + TOOL + 'then = { state = "aged", text = "[{name output]" }\n',
        False,
        "<string>: rules[0].then.text: expected '}' closing the field opened at position 1, found the end of the template",
    ),
    (
        "template-nested-brace",
        RULE + TOOL + 'then = { state = "aged", text = "{na{me}" }\n',
        False,
        "<string>: rules[0].then.text: expected '}' closing the field opened at position 0, found '{' at position 3",
    ),
    (
        "template-lone-closing-brace",
        RULE + TOOL + 'then = { state = "aged", text = "name}" }\n',
        False,
        "<string>: rules[0].then.text: expected '}}' for a literal brace at position 4, found a lone '}'",
    ),
    (
        "template-format-spec",
        RULE + TOOL + 'then = { state = "aged", text = "{tokens:>8}" }\n',
        False,
        "<string>: rules[0].then.text: expected {tokens} without a format spec at position 0, found '{tokens:>8}'",
    ),
    (
        "template-count-missing",
        RULE + TOOL + 'then = { state = "aged", text = "{head}" }\n',
        False,
        "<string>: rules[0].then.text: expected a character count at position 0 ({head:N} with N a whole number), found '{head}'",
    ),
    (
        "template-not-a-string",
        RULE + TOOL + 'then = { state = "aged", text = 3 }\n',
        False,
        "<string>: rules[0].then.text: expected a template string, found 3 (int)",
    ),
    (
        "import-without-permission",
        RULE + 'use = "example_rules:clear_tool"\nparams = { tool = "grep" }\n',
        False,
        "<string>: rules[0].use: expected a built-in rule name (loading 'example_rules:clear_tool' imports Python code: pass allow_imports=True, or --allow-imports on the command line), found 'example_rules:clear_tool'",
    ),
    (
        "malformed-python-reference",
        RULE + 'use = "example rules:clear_tool"\n',
        True,
        "<string>: rules[0].use: expected a Python rule reference 'package.module:factory', found 'example rules:clear_tool'",
    ),
    (
        "import-missing-module",
        RULE + 'use = "no_such_pkg.rules:make_rule"\n',
        True,
        "<string>: rules[0].use: expected an importable module, found 'no_such_pkg.rules' (ModuleNotFoundError: No module named 'no_such_pkg')",
    ),
    (
        "import-missing-factory",
        RULE + 'use = "example_rules:clear_tools"\n',
        True,
        "<string>: rules[0].use: expected a factory defined in module 'example_rules', found 'clear_tools' (did you mean 'clear_tool'?)",
    ),
    (
        "factory-not-callable",
        RULE + 'use = "example_rules:NOT_A_FACTORY"\n',
        True,
        "<string>: rules[0].use: expected a callable factory, found 42 (int)",
    ),
    (
        "factory-raising",
        RULE + 'use = "example_rules:clear_tool"\nparams = { tool = "" }\n',
        True,
        "<string>: rules[0].use: expected 'example_rules:clear_tool' to build a rule from its params, found an exception (ValueError: tool must be a non-empty tool name)",
    ),
    (
        "factory-wrong-params",
        RULE + 'use = "example_rules:clear_tool"\nparams = { tol = "grep" }\n',
        True,
        "<string>: rules[0].use: expected 'example_rules:clear_tool' to build a rule from its params, found an exception (TypeError: clear_tool() got an unexpected keyword argument 'tol')",
    ),
    (
        "factory-returns-non-callable",
        RULE + 'use = "example_rules:not_a_rule"\n',
        True,
        "<string>: rules[0].use: expected 'example_rules:not_a_rule' to return a callable Rule, found 7 (int)",
    ),
    (
        "two-errors-in-one-spec",
        (
            'version = 1\n[[rules]]\nuse = "cap_tool_result"\n[rules.params]\nmax_chars = 100\n'
            '[[rules]]\nname = "clear-big"\nwhen = { tokens = { gt = "2000" } }\nthen = { state = "cleared" }\n'
        ),
        False,
        (
            "<string>: rules[0].params.max_chars: expected an integer >= 200, found 100 (int)\n"
            "<string>: rules[1].when.tokens: expected an integer operand for 'gt', found '2000' (str)"
        ),
    ),
    (
        "errors-in-when-and-then",
        RULE + 'when = { rol = "tool" }\nthen = { state = "summarized", text = "{x}" }\n',
        False,
        (
            "<string>: rules[0].when.rol: expected a known feature (one of 'role', 'tool_name', 'state', 'turn_age', 'seconds_since_change', 'age_seconds', 'text', 'tokens', 'cited', 'attached', 'locked', 'position', 'position_from_end'), found 'rol' (did you mean 'role'?)\n"
            "<string>: rules[0].then.state: expected a target state ('aged' or 'cleared'); summarized is reserved for compaction, which must create a summary covering the item, found 'summarized'\n"
            "<string>: rules[0].then.text: expected a known field at position 0 (one of {name}, {tokens}, {handle}, {head:N}, {tail:N}, {args:N}), found '{x}'"
        ),
    ),
]


@pytest.mark.parametrize(
    ("text", "imports", "message"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_spec_reports_every_error_in_full(
    text: str, imports: bool, message: str, request: pytest.FixtureRequest
) -> None:
    """Each invalid spec fails with exactly this text: file, key path, expected, found, hint."""
    if imports:
        request.getfixturevalue("example_rules")
    result = load_spec(text, allow_imports=imports)
    assert isinstance(result, Failure)
    errors = result.failure()
    assert isinstance(errors, SpecErrors)
    assert str(errors) == message
    assert all(e.fault != "internal" for e in errors.errors)


def test_the_table_is_large_and_its_ids_unique() -> None:
    """The table keeps at least 25 distinct cases, so a lost row is noticed."""
    ids = [case[0] for case in INVALID]
    assert len(ids) >= 25
    assert len(set(ids)) == len(ids)
