"""A long synthetic agent session of realistic shape, built deterministically."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import pytest
from returns.result import Result

from ctxrules.dag import DagError, Session

_PROSE = (
    "the config loader reads settings from pyproject.toml and falls back to defaults when a key "
    "is missing so the cache directory is created on first use and reused afterwards"
)
_WORDS = _PROSE.split()
_ZH = "上下文压缩需要保留用户的原始指令以及所有文件路径和错误信息，不能丢失任何关键决定。"  # noqa: RUF001 - Chinese punctuation on purpose
_CODE = [
    "def load_config(path: Path) -> Config:",
    "    data = tomllib.loads(path.read_text())",
    "    return Config(**data.get('tool', {}).get('app', {}))",
    "class CacheDir:",
    "    root: Path = field(default_factory=default_root)",
    "Traceback (most recent call last):",
    '  File "src/app/cache.py", line 42, in ensure',
    "KeyError: 'cache_dir'",
]


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _file(rng: random.Random, lines: int) -> str:
    return "\n".join(f"{n:4d}  {rng.choice(_CODE)}" for n in range(1, lines + 1))


def _ok(result: Result[Session, DagError]) -> Session:
    return result.unwrap()


@functools.cache
def build_long_session(turns: int = 40, seed: int = 7) -> Session:
    """User turns of one to five agent steps, each calling one to three tools with results up to 20k characters."""
    rng = random.Random(seed)  # noqa: S311 - test data, not cryptography
    session = _ok(Session("s_long").send("user", "Task: " + _prose(rng, 150), created_at=0.0))
    session = _ok(session.send("assistant", "Plan: " + _prose(rng, 60)))
    session = _ok(session.send("user", "Yes, and " + _ZH + " " + _prose(rng, 20)))
    clock = 10.0
    for turn in range(turns):
        clock += 60
        ask = _ZH if turn % 4 == 3 else _prose(rng, rng.randint(8, 60))
        session = _ok(session.send("user", ask, created_at=clock))
        for step in range(rng.randint(1, 5)):
            session = _ok(session.send("assistant", _prose(rng, rng.randint(0, 40))))
            assistant = session.head
            assert assistant is not None
            for call in range(rng.randint(1, 3)):
                name, output = rng.choice(
                    [
                        ("read_file", _file(rng, rng.randint(20, 400))),
                        ("grep", _file(rng, rng.randint(2, 40))),
                        ("bash", _file(rng, rng.randint(1, 15))),
                    ]
                )
                session = _ok(
                    session.record_call(
                        assistant,
                        name,
                        {"path": f"src/app/mod_{turn}_{step}_{call}.py"},
                        output,
                        metadata={"tool_call_id": f"call_{turn}_{step}_{call}"},
                        created_at=clock,
                    )
                )
        session = _ok(session.send("assistant", "Done: " + _prose(rng, rng.randint(10, 80))))
    return session


@pytest.fixture(scope="session")
def long_session() -> Callable[..., Session]:
    """The builder of the long synthetic session; each shape is built once (sessions are immutable)."""
    return build_long_session
