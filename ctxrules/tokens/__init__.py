"""Token counting: one ruler (`Tokenizer`) for every count ctxrules makes."""

from ctxrules.tokens.budget import (
    DEFAULT_OUTPUT_RESERVE,
    MAX_OUTPUT_SHARE,
    MIN_OUTPUT_SHARE,
    TOOL_OVERHEAD,
    BudgetAllocation,
    allocate,
    input_budget_for,
    output_reserve_for,
    tools_schema_tokens,
)
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
from ctxrules.tokens.models import (
    CONTEXT_WINDOWS,
    MAX_CONTEXT_WINDOW,
    MIN_CONTEXT_WINDOW,
    BadWindow,
    UnknownModel,
    real_context_window,
)
from ctxrules.tokens.protocol import CHAT_MESSAGE_OVERHEAD, Tokenizer
from ctxrules.tokens.tiktoken_counter import TiktokenCounter

__all__ = [
    "CHAT_MESSAGE_OVERHEAD",
    "CJK_CHARS_PER_TOKEN",
    "CJK_RANGES",
    "CONTEXT_WINDOWS",
    "DEFAULT_OUTPUT_RESERVE",
    "ENCODINGS",
    "MAX_CONTEXT_WINDOW",
    "MAX_OUTPUT_SHARE",
    "MIN_CONTEXT_WINDOW",
    "MIN_OUTPUT_SHARE",
    "OTHER_CHARS_PER_TOKEN",
    "TOOL_OVERHEAD",
    "BadWindow",
    "BudgetAllocation",
    "CountingTokenizer",
    "EncodingSpec",
    "HeuristicCounter",
    "Reason",
    "TiktokenCounter",
    "Tokenizer",
    "TokenizerUnavailable",
    "UnknownModel",
    "allocate",
    "default_tokenizer",
    "input_budget_for",
    "load_encoding",
    "output_reserve_for",
    "real_context_window",
    "tiktoken_cache_dir",
    "tools_schema_tokens",
]
