"""`load_spec`: a TOML pipeline spec to a `Pipeline`, with every fault collected, never raising."""

from __future__ import annotations

import datetime as dt
import math
import os
from collections.abc import Mapping
from typing import Any

from returns.result import Failure, Result, Success

from ctxrules.canonical import content_hash
from ctxrules.errors import USER_CODE_ERRORS
from ctxrules.rules.params import Param, ParamProblem, resolve
from ctxrules.rules.pipeline import NamedRule, Pipeline, Rule
from ctxrules.rules.registry import BuiltinRule, builtins
from ctxrules.spec.batching import parse_batching
from ctxrules.spec.declarative import parse_declarative
from ctxrules.spec.errors import Fault, Location, SpecError, SpecErrors, describe, quoted, suggest
from ctxrules.spec.imports import is_python_reference, load_python_rule
from ctxrules.spec.pins import PinWhen, parse_pins
from ctxrules.spec.recall import check_recall
from ctxrules.spec.source import SpecSource, label, read_document

TOP_KEYS = ("version", "name", "description", "batching", "rules", "pins", "recall")
ENTRY_KEYS = ("use", "name", "params", "when", "then")
FORMAT_VERSION = 1

#: One loaded entry: its display name, the rule, and its normalised form for the version.
_Entry = tuple[str, Rule, dict[str, object]]


def load_spec(
    source: SpecSource,
    *,
    allow_imports: bool = False,
    registry: Mapping[str, BuiltinRule] | None = None,
) -> Result[Pipeline, SpecErrors]:
    r"""The pipeline a spec describes, or every fault in it; never raises.

    ``source`` is a path (``str`` or `pathlib.Path`) or the TOML text itself: a ``str``
    holding a newline or ``=`` is text. A ``use = "package.module:factory"`` entry
    imports code and is refused unless ``allow_imports``. ``registry`` defaults to the
    built-in rules.

    >>> spec = '''
    ... [[rules]]
    ... use = "cap_tool_result"
    ... [[rules]]
    ... name = "clear-huge"
    ... when = { role = "tool", tokens = { gt = 2000 } }
    ... then = { state = "cleared", text = "[{name} output cleared]" }
    ... '''
    >>> [r.name for r in load_spec(spec).unwrap().rules]
    ['cap_tool_result', 'clear-huge']
    >>> print(load_spec('[[rules]]\nuse = "cap_tool_results"').failure())
    <string>: rules[0].use: expected a built-in rule name (one of 'age_tool_results', 'cap_tool_result', 'clear_idle', 'gate_tool_results') or 'package.module:factory', found 'cap_tool_results' (did you mean 'cap_tool_result'?)
    """
    if not isinstance(source, str | os.PathLike):
        found = f"a value of type {type(source).__name__}"
        expected = "a path (str or os.PathLike) or the TOML text"
        return Failure(SpecErrors((SpecError("<spec>", "source", expected, found, "unreadable"),)))
    try:
        return _load(source, allow_imports=allow_imports, registry=registry)
    except USER_CODE_ERRORS as error:  # the boundary: a spec must never make us raise
        found = f"{type(error).__name__}: {str(error)[:200]}"
        where = SpecError(
            _safe_label(source), "(whole spec)", "no internal error", found, "internal"
        )
        return Failure(SpecErrors((where,)))


def _safe_label(source: object) -> str:
    try:
        return label(source)  # type: ignore[arg-type]  # whatever the caller passed
    except Exception:  # noqa: BLE001 - only used on the way out of a failure
        return "<spec>"


def _load(
    source: SpecSource, *, allow_imports: bool, registry: Mapping[str, BuiltinRule] | None
) -> Result[Pipeline, SpecErrors]:
    document = read_document(source)
    if isinstance(document, Failure):
        return Failure(SpecErrors((document.failure(),)))
    doc = document.unwrap()
    root = Location(label(source))
    errors = _check_header(doc, root)
    entries = _entries(doc, root, _Registry(registry), errors, allow_imports=allow_imports)
    batching = parse_batching(doc["batching"], root.key("batching")) if "batching" in doc else None
    if isinstance(batching, Failure):
        errors.extend(batching.failure())
    pins = parse_pins(doc["pins"], root.key("pins")) if "pins" in doc else None
    if isinstance(pins, Failure):
        errors.extend(pins.failure())
    if errors:
        return Failure(SpecErrors(tuple(errors)))
    normal: dict[str, object] = {"rules": [plain for _, _, plain in entries]}
    policy = None
    if batching is not None:
        policy, normal["batching"] = batching.unwrap()
    tests: tuple[PinWhen, ...] = ()
    if pins is not None:
        # Only a spec with pins hashes them: every earlier spec keeps its rules_version.
        tests, normal["pins"] = pins.unwrap()
    return Success(
        Pipeline(
            tuple(NamedRule(name, rule) for name, rule, _ in entries),
            content_hash(normal),
            batching=policy,
            pins=tests,
        )
    )


def _entries(
    doc: dict[str, Any],
    root: Location,
    lazy: _Registry,
    errors: list[SpecError],
    *,
    allow_imports: bool,
) -> list[_Entry]:
    """The spec's rule entries that load; the faults of the others go to ``errors``."""
    entries: list[_Entry] = []
    rules = doc.get("rules", [])
    if not isinstance(rules, list):
        errors.append(
            root.key("rules").error(
                "an array of rule tables ([[rules]])", describe(rules), "wrong_type"
            )
        )
        rules = []
    seen: dict[str, str] = {}
    for position, entry in enumerate(rules):
        where = root.key("rules").index(position)
        if not isinstance(entry, dict):
            errors.append(where.error("a rule table", describe(entry), "wrong_type"))
            continue
        loaded = _entry(entry, where, lazy, allow_imports=allow_imports)
        if isinstance(loaded, Failure):
            errors.extend(loaded.failure())
            continue
        name, rule, plain = loaded.unwrap()
        if name in seen:
            at = where.key("name") if "name" in entry else where
            expected = "a name no earlier rule uses (give this entry its own 'name')"
            errors.append(at.error(expected, f"{name!r} (also {seen[name]})", "conflict"))
        seen.setdefault(name, where.path)
        entries.append((name, rule, plain))
    return entries


def _check_header(doc: dict[str, Any], root: Location) -> list[SpecError]:
    errors = [
        root.key(key).error(
            f"a top-level key (one of {quoted(TOP_KEYS)})",
            repr(key),
            "unknown_name",
            suggest(key, TOP_KEYS),
        )
        for key in doc
        if key not in TOP_KEYS
    ]
    if "version" in doc:
        version = doc["version"]
        if type(version) is not int:
            errors.append(
                root.key("version").error(
                    f"the spec format version {FORMAT_VERSION}", describe(version), "wrong_type"
                )
            )
        elif version != FORMAT_VERSION:
            errors.append(
                root.key("version").error(
                    f"the spec format version {FORMAT_VERSION}", repr(version), "out_of_bounds"
                )
            )
    errors.extend(
        root.key(key).error("a string", describe(doc[key]), "wrong_type")
        for key in ("name", "description")
        if key in doc and not isinstance(doc[key], str)
    )
    errors.extend(check_recall(doc, root))
    return errors


class _Registry:
    """The built-in registry, looked up only when an entry ``use``s a built-in."""

    def __init__(self, given: Mapping[str, BuiltinRule] | None) -> None:
        self._given = given

    def get(self) -> Mapping[str, BuiltinRule]:
        if self._given is None:
            self._given = builtins()
        return self._given


def _entry(
    entry: dict[str, Any], where: Location, registry: _Registry, *, allow_imports: bool
) -> Result[_Entry, tuple[SpecError, ...]]:
    errors = [
        where.key(key).error(
            f"a key of a rule entry (one of {quoted(ENTRY_KEYS)})",
            repr(key),
            "unknown_name",
            suggest(key, ENTRY_KEYS),
        )
        for key in entry
        if key not in ENTRY_KEYS
    ]
    name = entry.get("name")
    if "name" in entry and (not isinstance(name, str) or not name):
        errors.append(where.key("name").error("a non-empty string", describe(name), "wrong_type"))
    declarative = [key for key in ("when", "then") if key in entry]
    if "use" in entry and declarative:
        found = f"both 'use' and {quoted(declarative)}"
        errors.append(where.error("either 'use' or a 'when' and 'then' pair", found, "conflict"))
        return Failure(tuple(errors))
    if "use" not in entry and not declarative:
        found = f"only {quoted(entry)}" if entry else "an empty table"
        errors.append(where.error("a 'use' key, or a 'when' and 'then' pair", found, "missing"))
        return Failure(tuple(errors))
    if declarative and "params" in entry:
        expected = "no params in a declarative rule (params go with 'use')"
        errors.append(where.key("params").error(expected, describe(entry["params"]), "conflict"))
    display = name if isinstance(name, str) and name else None
    built: Result[tuple[Rule, dict[str, object]], tuple[SpecError, ...]]
    if declarative:
        built = parse_declarative(entry, display or where.path, where)
    else:
        built = _use(entry, display, where, registry, allow_imports=allow_imports)
    if isinstance(built, Failure):
        errors.extend(built.failure())
    if errors:
        return Failure(tuple(errors))
    rule, plain = built.unwrap()
    return Success((str(plain["name"]), rule, plain))


def _use(
    entry: dict[str, Any],
    display: str | None,
    where: Location,
    registry: _Registry,
    *,
    allow_imports: bool,
) -> Result[tuple[Rule, dict[str, object]], tuple[SpecError, ...]]:
    use, params = entry["use"], entry.get("params", {})
    errors: list[SpecError] = []
    if not isinstance(use, str) or not use:
        errors.append(
            where.key("use").error(
                "a built-in rule name or 'package.module:factory'", describe(use), "wrong_type"
            )
        )
    if not isinstance(params, dict):
        errors.append(
            where.key("params").error("a table of parameters", describe(params), "wrong_type")
        )
    if errors:
        return Failure(tuple(errors))
    name = display or use
    if is_python_reference(use):
        loaded = load_python_rule(use, params, where, allow_imports=allow_imports)
        if isinstance(loaded, Failure):
            return Failure((loaded.failure(),))
        return Success((loaded.unwrap(), {"name": name, "use": use, "params": _plain(params)}))
    return _builtin(use, name, params, where, registry.get())


def _builtin(
    use: str,
    name: str,
    params: dict[str, Any],
    where: Location,
    registry: Mapping[str, BuiltinRule],
) -> Result[tuple[Rule, dict[str, object]], tuple[SpecError, ...]]:
    builtin = registry.get(use)
    if builtin is None:
        expected = (
            f"a built-in rule name (one of {quoted(sorted(registry))}) or 'package.module:factory'"
        )
        return Failure(
            (where.key("use").error(expected, repr(use), "unknown_name", suggest(use, registry)),)
        )
    at = where.key("params")
    # Param.check lets nan through its bounds test (every comparison with nan is false).
    floats = {p.name: p for p in builtin.params if p.kind == "float"}
    nans = [k for k, v in params.items() if k in floats and isinstance(v, float) and math.isnan(v)]
    errors = [at.key(k).error(floats[k].expected, "nan (float)", "out_of_bounds") for k in nans]
    built = builtin.build({k: v for k, v in params.items() if k not in nans})
    if isinstance(built, Failure):
        errors.extend(_param_error(problem, builtin, params, at) for problem in built.failure())
    if errors:
        return Failure(tuple(errors))
    values = resolve(builtin.params, params)
    plain: dict[str, object] = {
        "name": name,
        "use": use,
        "params": {p.name: _plain_param(p, values[p.name]) for p in builtin.params},
    }
    return Success((built.unwrap(), plain))


def _param_error(
    problem: ParamProblem, builtin: BuiltinRule, params: dict[str, Any], at: Location
) -> SpecError:
    where = at.key(problem.key)
    names = [p.name for p in builtin.params]
    if problem.key not in names or problem.key not in params:
        expected = f"a parameter of {builtin.name!r} (one of {quoted(names)})"
        return where.error(expected, repr(problem.key), "unknown_name", problem.suggestion)
    value = params[problem.key]
    # Param.check reports a value of the right kind but out of bounds by its bare repr.
    fault: Fault = "out_of_bounds" if problem.found == repr(value) else "wrong_type"
    return where.error(problem.expected, describe(value), fault)


def _plain_param(param: Param, value: object) -> object:
    # A float parameter given as 60 or 60.0 is one value, so both spellings hash alike.
    if param.kind == "float" and isinstance(value, int | float):
        return float(value)
    return _plain(value)


def _plain(value: object) -> object:
    """TOML values as JSON data: arrays as lists, dates and times as ISO strings."""
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value
