"""Running a rule with the clock, randomness and the process trapped, so an impure rule names what it read.

A pure rule (invariant 8) reads time only as ``Facts.now`` and has no randomness, so any
call to the clock, to `random`, to `os.urandom` or to `uuid`, a read of the environment,
of a file (`open`, `pathlib` reads, `os.listdir`, `os.stat`), of the working directory, of
``sys.argv`` or of the process id made while it runs is a violation, whatever the call
returned. The traps answer with the real value (the rule runs on) and record the call,
however the rule holds the function: through its module, a name in its globals, a default
argument, a closure cell or a field of a callable object. `module_state` notices writes to
module globals, closure cells, default arguments and a callable object's fields between calls.
"""

from __future__ import annotations

import builtins
import datetime as dt
import functools
import io
import os
import pathlib
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

_T = TypeVar("_T")

#: The functions a pure rule never calls, by the name the report gives them.
_TIME = ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
         "localtime", "gmtime", "ctime", "asctime", "strftime", "process_time",
         "process_time_ns", "thread_time", "thread_time_ns", "clock_gettime",
         "clock_gettime_ns")  # fmt: skip
_RANDOM = ("random", "randint", "randrange", "choice", "choices", "shuffle", "sample",
           "uniform", "gauss", "getrandbits", "betavariate", "triangular")  # fmt: skip


def _targets() -> list[tuple[Any, str, str]]:
    """(owner, attribute, name in the report) for every trapped function."""
    found: list[tuple[Any, str, str]] = [(time, n, f"time.{n}()") for n in _TIME]
    found += [(random, n, f"random.{n}()") for n in _RANDOM]
    # A rule's own random.Random() instance draws through these methods.
    found += [(random.Random, n, f"random.Random.{n}()") for n in _RANDOM if n != "random"]
    found += [(random.Random, "random", "random.Random.random()")]
    found += [(os, "urandom", "os.urandom()"), (uuid, "uuid1", "uuid.uuid1()")]
    found += [(uuid, "uuid4", "uuid.uuid4()"), (os, "getpid", "os.getpid()")]
    found += [(os, "times", "os.times()"), (os, "getrandom", "os.getrandom()")]
    # Every read of os.environ (get, getenv, ``in``, items) goes through __getitem__.
    found += [(type(os.environ), "__getitem__", "os.environ[...]")]
    # Files and the working directory: io.open is builtins.open, Path reads go through it.
    found += [(builtins, "open", "open()"), (io, "open", "open()")]
    found += [(os, n, f"os.{n}()") for n in ("getcwd", "getcwdb", "listdir", "scandir", "stat")]
    found += [
        (pathlib.Path, n, f"pathlib.Path.{n}()")
        for n in ("read_text", "read_bytes", "open", "exists", "iterdir", "is_file")
    ]
    return [(owner, attr, name) for owner, attr, name in found if hasattr(owner, attr)]


class _Recorder:
    """Where trapped calls go while a rule runs; the traps are built once, then swapped in."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.saved: list[tuple[Any, str, Any]] = []
        self.replacements: dict[int, Any] = {}
        for owner, attr, name in _targets():
            real = getattr(owner, attr)
            maker = _method_trap if owner is random.Random else _trap
            self.saved.append((owner, attr, real))
            self.replacements[id(real)] = maker(real, name, self)
        fake_datetime, fake_date = _trapped_datetime(self)
        for attr, fake in (("datetime", fake_datetime), ("date", fake_date)):
            real = getattr(dt, attr)
            self.saved.append((dt, attr, real))
            self.replacements[id(real)] = fake


def _trapped_datetime(recorder: _Recorder) -> tuple[type, type]:
    """Subclasses of ``datetime`` and ``date`` whose clock readers record the call."""
    real_datetime, real_date = dt.datetime, dt.date

    class TrappedDatetime(real_datetime):  # type: ignore[misc,valid-type]
        @classmethod
        def now(cls, tz: Any = None) -> Any:  # noqa: ANN401 - datetime's own signature
            recorder.calls.append("datetime.now()")
            return real_datetime.now(tz)

        @classmethod
        def utcnow(cls) -> Any:  # noqa: ANN401
            recorder.calls.append("datetime.utcnow()")
            return real_datetime.now(dt.UTC).replace(tzinfo=None)

        @classmethod
        def today(cls) -> Any:  # noqa: ANN401
            recorder.calls.append("datetime.today()")
            return real_datetime.today()

    class TrappedDate(real_date):  # type: ignore[misc,valid-type]
        @classmethod
        def today(cls) -> Any:  # noqa: ANN401
            recorder.calls.append("date.today()")
            return real_date.today()

    return TrappedDatetime, TrappedDate


def _trap(real: Callable[..., Any], name: str, recorder: _Recorder) -> Callable[..., Any]:
    def trap(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - stands in for any function
        recorder.calls.append(name)
        return real(*args, **kwargs)

    return trap


def _method_trap(real: Callable[..., Any], name: str, recorder: _Recorder) -> Callable[..., Any]:
    def trap(self: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - any method
        recorder.calls.append(name)
        return real(self, *args, **kwargs)

    return trap


@functools.cache
def _recorder() -> _Recorder:
    return _Recorder()


@contextmanager
def trapped(
    calls: list[str],
    namespaces: tuple[dict[str, Any], ...] = (),
    functions: tuple[object, ...] = (),
) -> Iterator[None]:
    """Inside the block every clock and randomness call is appended to ``calls`` by name.

    ``namespaces`` are module dicts (a rule's ``__globals__``) whose own bindings of the
    trapped functions, imported by name, are trapped as well; so are the default arguments
    and closure cells of ``functions`` that hold one.
    """
    recorder = _recorder()
    recorder.calls = calls
    replacements = recorder.replacements
    rebound = [
        (ns, {k: replacements[id(v)] for k, v in list(ns.items()) if id(v) in replacements})
        for ns in namespaces
    ]
    originals = [(ns, {k: ns[k] for k in new}) for ns, new in rebound]
    held = [_held_traps(function, replacements) for function in functions]
    argv = sys.argv
    try:
        for owner, attr, real in recorder.saved:
            setattr(owner, attr, replacements[id(real)])
        for ns, new in rebound:
            ns.update(new)
        for swap, _ in held:
            swap()
        sys.argv = _Argv(argv, calls)
        yield
    finally:
        sys.argv = argv
        for owner, attr, real in recorder.saved:
            setattr(owner, attr, real)
        for ns, old in originals:
            ns.update(old)
        for _, restore in held:
            restore()
        recorder.calls = []


class _Argv(list[str]):
    """``sys.argv`` while a rule runs: any read records ``sys.argv``."""

    def __init__(self, real: list[str], calls: list[str]) -> None:
        super().__init__(real)
        self.calls = calls

    def _read(self) -> None:
        self.calls.append("sys.argv")

    def __getitem__(self, key: Any) -> Any:  # noqa: ANN401 - list's own signature
        self._read()
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        self._read()
        return super().__iter__()

    def __len__(self) -> int:
        self._read()
        return super().__len__()

    def __contains__(self, value: object) -> bool:
        self._read()
        return super().__contains__(value)


def _held_traps(
    function: object, replacements: dict[int, Any]
) -> tuple[Callable[[], None], Callable[[], None]]:
    """How to swap the traps into ``function``'s defaults and closure cells, and back.

    A callable object (or a bound method's object) has its fields swapped instead.
    """
    if getattr(function, "__code__", None) is None:
        return _field_traps(function, replacements)
    defaults = getattr(function, "__defaults__", None)
    kwdefaults = getattr(function, "__kwdefaults__", None)
    cells = [
        cell
        for cell in getattr(function, "__closure__", None) or ()
        if id(_contents(cell)) in replacements
    ]
    real_cells = [cell.cell_contents for cell in cells]

    def swap() -> None:
        if defaults:
            function.__defaults__ = tuple(replacements.get(id(v), v) for v in defaults)  # type: ignore[attr-defined]
        if kwdefaults:
            function.__kwdefaults__ = {k: replacements.get(id(v), v) for k, v in kwdefaults.items()}  # type: ignore[attr-defined]
        for cell in cells:
            cell.cell_contents = replacements[id(cell.cell_contents)]

    def restore() -> None:
        if defaults:
            function.__defaults__ = defaults  # type: ignore[attr-defined]
        if kwdefaults:
            function.__kwdefaults__ = kwdefaults  # type: ignore[attr-defined]
        for cell, real in zip(cells, real_cells, strict=True):
            cell.cell_contents = real

    return swap, restore


def _contents(cell: Any) -> object:  # noqa: ANN401 - a closure cell holds anything
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return None


def rule_namespaces(rule: object) -> tuple[dict[str, Any], ...]:
    """The module globals a rule function (or a bound method's function) reads."""
    function = getattr(rule, "__func__", rule)
    namespace = getattr(function, "__globals__", None)
    if namespace is None:
        # A callable object: the globals of its class's __call__.
        call = type(rule).__dict__.get("__call__") or getattr(type(rule), "__call__", None)  # noqa: B004
        namespace = getattr(call, "__globals__", None)
    return (namespace,) if isinstance(namespace, dict) else ()


def _field_traps(
    owner: object, replacements: dict[int, Any]
) -> tuple[Callable[[], None], Callable[[], None]]:
    """How to swap the traps into the fields of a callable object that hold a trapped function."""
    held = [(name, value) for name, value in _fields(owner) if id(value) in replacements]

    def swap() -> None:
        for name, value in held:
            object.__setattr__(owner, name, replacements[id(value)])

    def restore() -> None:
        for name, value in held:
            object.__setattr__(owner, name, value)

    return swap, restore


def _fields(owner: object) -> list[tuple[str, object]]:
    """The instance fields of a callable object: its ``__dict__`` and its slots."""
    if owner is None or isinstance(owner, type) or callable(getattr(owner, "__code__", None)):
        return []
    found = dict(getattr(owner, "__dict__", {}) or {})
    for klass in type(owner).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in found and not name.startswith("__") and hasattr(owner, name):
                found[name] = getattr(owner, name)
    return list(found.items())


def _shallow(value: object) -> object:
    """A scalar as itself, anything else by identity: one level of a container's contents."""
    if isinstance(value, (int, float, str, bytes, bool)) or value is None:
        return value
    return id(value)


def _fingerprint(value: object) -> object:
    """Identity, plus one level of a small mutable container's contents (a counter, a memo)."""
    if isinstance(value, (list, set, bytearray)) and len(value) <= 1_000:
        return (id(value), len(value), tuple(_shallow(v) for v in list(value)))
    if isinstance(value, dict) and len(value) <= 1_000:
        pairs = tuple((_shallow(k), _shallow(v)) for k, v in list(value.items()))
        return (id(value), len(value), pairs)
    if isinstance(value, (list, set, dict, bytearray)):
        return (id(value), len(value))
    if isinstance(value, (int, float, str, bytes, bool, tuple, frozenset)) or value is None:
        return (id(value), value)
    return id(value)


def module_state(rule: object) -> dict[str, object]:
    """A cheap fingerprint of what a rule could write between calls.

    Its module globals, closure cells and default arguments, and the fields of a callable
    object (or of a bound method's object).
    """
    function = getattr(rule, "__func__", rule)
    state: dict[str, object] = {}
    for namespace in rule_namespaces(rule):
        for name, value in list(namespace.items()):
            if not name.startswith("__"):
                state[f"global {name!r}"] = _fingerprint(value)
    for name, value in _fields(getattr(rule, "__self__", rule)):
        state[f"field {name!r}"] = _fingerprint(value)
    code = getattr(function, "__code__", None)
    defaults = getattr(function, "__defaults__", None) or ()
    if code is not None and defaults:
        names = code.co_varnames[code.co_argcount - len(defaults) : code.co_argcount]
        for name, value in zip(names, defaults, strict=False):
            state[f"default argument {name!r}"] = _fingerprint(value)
    for name, value in (getattr(function, "__kwdefaults__", None) or {}).items():
        state[f"default argument {name!r}"] = _fingerprint(value)
    cells = getattr(function, "__closure__", None) or ()
    names = getattr(getattr(function, "__code__", None), "co_freevars", ())
    for name, cell in zip(names, cells, strict=False):
        try:
            state[f"closure variable {name!r}"] = _fingerprint(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    return state


def state_changes(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """The names whose fingerprint changed (a write the rule made), sorted."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def run_trapped(call: Callable[[], _T], rule: object) -> tuple[_T, list[str]]:
    """The result of ``call`` and the impure calls made during it, in order, without repeats."""
    calls: list[str] = []
    held = (getattr(rule, "__func__", rule), getattr(rule, "__self__", None))
    with trapped(calls, rule_namespaces(rule), tuple(h for h in held if h is not None)):
        result = call()
    return result, list(dict.fromkeys(calls))
