"""Running a rule with the clock and randomness trapped, so an impure rule names what it read.

A pure rule (invariant 8) reads time only as ``Facts.now`` and has no randomness, so any
call to the clock, to `random`, to `os.urandom` or to `uuid`, a read of the environment or
of the process id made while it runs is a violation, whatever the call returned. The traps
answer with the real value (the rule runs on) and record the call, however the rule holds
the function: through its module, a name in its globals, a default argument or a closure
cell. `module_state` notices writes to module globals and closure cells between calls.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import random
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
    try:
        for owner, attr, real in recorder.saved:
            setattr(owner, attr, replacements[id(real)])
        for ns, new in rebound:
            ns.update(new)
        for swap, _ in held:
            swap()
        yield
    finally:
        for owner, attr, real in recorder.saved:
            setattr(owner, attr, real)
        for ns, old in originals:
            ns.update(old)
        for _, restore in held:
            restore()
        recorder.calls = []


def _held_traps(
    function: object, replacements: dict[int, Any]
) -> tuple[Callable[[], None], Callable[[], None]]:
    """How to swap the traps into ``function``'s defaults and closure cells, and back."""
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
    return (namespace,) if isinstance(namespace, dict) else ()


def _fingerprint(value: object) -> object:
    """Identity, plus the contents of a small mutable container (a counter in a list or dict)."""
    if isinstance(value, (list, dict, set, bytearray)) and len(value) <= 1_000:
        try:
            return (id(value), repr(value))
        except Exception:  # noqa: BLE001 - an odd repr is no reason to fail the check
            return id(value)
    if isinstance(value, (int, float, str, bytes, bool, tuple, frozenset)) or value is None:
        return (id(value), value)
    return id(value)


def module_state(rule: object) -> dict[str, object]:
    """A cheap fingerprint of what a rule could write between calls: globals and closure cells."""
    function = getattr(rule, "__func__", rule)
    state: dict[str, object] = {}
    for namespace in rule_namespaces(rule):
        for name, value in list(namespace.items()):
            if not name.startswith("__"):
                state[f"global {name!r}"] = _fingerprint(value)
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
    with trapped(calls, rule_namespaces(rule), (getattr(rule, "__func__", rule),)):
        result = call()
    return result, list(dict.fromkeys(calls))
