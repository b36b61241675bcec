"""A CJK-aware character-ratio estimate for when no BPE encoding is available."""

import math
import re
from fractions import Fraction
from typing import Final

import attrs

from ctxrules.tokens.protocol import CHAT_MESSAGE_OVERHEAD

__all__ = [
    "CJK_CHARS_PER_TOKEN",
    "CJK_RANGES",
    "OTHER_CHARS_PER_TOKEN",
    "HeuristicCounter",
]

# Fractions, not floats: 13 / 1.3 is 10.000000000000002 in floating point, and the
# ceiling would turn that into 11.
CJK_CHARS_PER_TOKEN: Final = Fraction(13, 10)
OTHER_CHARS_PER_TOKEN: Final = Fraction(19, 5)

#: Inclusive code point ranges counted at `CJK_CHARS_PER_TOKEN`, with their Unicode block.
CJK_RANGES: Final[tuple[tuple[int, int, str], ...]] = (
    (0x3000, 0x303F, "CJK Symbols and Punctuation"),
    (0x3040, 0x309F, "Hiragana"),
    (0x30A0, 0x30FF, "Katakana"),
    (0x3400, 0x4DBF, "CJK Unified Ideographs Extension A"),
    (0x4E00, 0x9FFF, "CJK Unified Ideographs"),
    (0xAC00, 0xD7AF, "Hangul Syllables"),
    (0xFF00, 0xFFEF, "Halfwidth and Fullwidth Forms"),
)

_CJK: Final = re.compile(
    "[" + "".join(f"\\u{first:04X}-\\u{last:04X}" for first, last, _ in CJK_RANGES) + "]"
)


@attrs.frozen
class HeuristicCounter:
    """Estimate tokens as ``ceil(cjk / 1.3 + other / 3.8)`` characters; deterministic and pure.

    >>> HeuristicCounter().count("The quick brown fox jumps over the lazy dog.")
    12
    >>> HeuristicCounter().count("天气非常好")
    4
    """

    message_overhead: int = attrs.field(
        default=CHAT_MESSAGE_OVERHEAD,
        kw_only=True,
        validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)],
    )

    @property
    def name(self) -> str:
        """Always ``"heuristic"``."""
        return "heuristic"

    def count(self, text: str) -> int:
        """Return the estimated number of tokens in `text`; 0 for ``""``."""
        cjk = len(_CJK.findall(text))
        other = len(text) - cjk
        return math.ceil(cjk / CJK_CHARS_PER_TOKEN + other / OTHER_CHARS_PER_TOKEN)
