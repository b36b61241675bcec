"""What ctxrules knows about tiktoken's encodings: where each file comes from and its hash.

The constants are copied from ``tiktoken_ext/openai_public.py`` (tiktoken 0.14) rather than
read by calling its constructors, because those constructors download a missing file.
``tests/tokens/test_encoding_specs.py`` checks the copy against the installed tiktoken.
"""

import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import attrs

__all__ = ["ENCODINGS", "EncodingSpec"]

_BLOB_ROOT: Final = "https://openaipublic.blob.core.windows.net/encodings/"

ENDOFTEXT: Final = "<|endoftext|>"
FIM_PREFIX: Final = "<|fim_prefix|>"
FIM_MIDDLE: Final = "<|fim_middle|>"
FIM_SUFFIX: Final = "<|fim_suffix|>"
ENDOFPROMPT: Final = "<|endofprompt|>"

_R50K_PAT: Final = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)
_CL100K_PAT: Final = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT: Final = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"""
    r"""\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_O200K_SPECIAL: Final = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}
_HARMONY_SPECIAL: Final = {
    **_O200K_SPECIAL,
    "<|startoftext|>": 199998,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}


def _read_only(tokens: Mapping[str, int]) -> MappingProxyType[str, int]:
    return MappingProxyType(dict(tokens))


@attrs.frozen
class EncodingSpec:
    """One tiktoken encoding: the URL tiktoken fetches it from, its SHA-256, and its rules."""

    name: str
    file: str
    sha256: str
    pat_str: str = attrs.field(repr=False)
    # Left out of eq and hash (a mapping proxy is unhashable); the name identifies a spec.
    special_tokens: MappingProxyType[str, int] = attrs.field(
        converter=_read_only, repr=False, eq=False
    )
    explicit_n_vocab: int | None = None

    @property
    def url(self) -> str:
        """The blob URL tiktoken downloads; its SHA-1 is the file's name in tiktoken's cache."""
        return _BLOB_ROOT + self.file

    @property
    def cache_key(self) -> str:
        """The file's name in tiktoken's cache directory: the SHA-1 of `url`.

        >>> ENCODINGS["o200k_base"].cache_key
        'fb374d419588a4632f3f557e76b4b70aebbca790'
        """
        return hashlib.sha1(self.url.encode(), usedforsecurity=False).hexdigest()


def _specs(*specs: EncodingSpec) -> MappingProxyType[str, EncodingSpec]:
    return MappingProxyType({spec.name: spec for spec in specs})


#: Every encoding `load_encoding` accepts, by name. ``gpt2`` is left out: it is stored
#: in the older two-file data-gym format.
ENCODINGS: Final = _specs(
    EncodingSpec(
        name="r50k_base",
        file="r50k_base.tiktoken",
        sha256="306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
        pat_str=_R50K_PAT,
        special_tokens={ENDOFTEXT: 50256},
        explicit_n_vocab=50257,
    ),
    EncodingSpec(
        name="p50k_base",
        file="p50k_base.tiktoken",
        sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        pat_str=_R50K_PAT,
        special_tokens={ENDOFTEXT: 50256},
        explicit_n_vocab=50281,
    ),
    EncodingSpec(
        name="p50k_edit",
        file="p50k_base.tiktoken",
        sha256="94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
        pat_str=_R50K_PAT,
        special_tokens={ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
    ),
    EncodingSpec(
        name="cl100k_base",
        file="cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=_CL100K_PAT,
        special_tokens={
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
    ),
    EncodingSpec(
        name="o200k_base",
        file="o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens=_O200K_SPECIAL,
    ),
    EncodingSpec(
        name="o200k_harmony",
        file="o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens=_HARMONY_SPECIAL,
    ),
)
