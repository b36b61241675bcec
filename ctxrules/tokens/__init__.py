"""Token counting: one ruler (`Tokenizer`) for every count ctxrules makes."""

from ctxrules.tokens.counting import CountingTokenizer
from ctxrules.tokens.encodings import ENCODINGS, EncodingSpec
from ctxrules.tokens.errors import Reason, TokenizerUnavailable
from ctxrules.tokens.heuristic import (
    CJK_CHARS_PER_TOKEN,
    CJK_RANGES,
    OTHER_CHARS_PER_TOKEN,
    HeuristicCounter,
)
from ctxrules.tokens.loading import default_tokenizer, load_encoding, tiktoken_cache_dir
from ctxrules.tokens.protocol import CHAT_MESSAGE_OVERHEAD, Tokenizer
from ctxrules.tokens.tiktoken_counter import TiktokenCounter

__all__ = [
    "CHAT_MESSAGE_OVERHEAD",
    "CJK_CHARS_PER_TOKEN",
    "CJK_RANGES",
    "ENCODINGS",
    "OTHER_CHARS_PER_TOKEN",
    "CountingTokenizer",
    "EncodingSpec",
    "HeuristicCounter",
    "Reason",
    "TiktokenCounter",
    "Tokenizer",
    "TokenizerUnavailable",
    "default_tokenizer",
    "load_encoding",
    "tiktoken_cache_dir",
]
