"""`TiktokenCounter`: exact BPE counts from a loaded tiktoken `Encoding`."""

import attrs
import tiktoken

from ctxrules.tokens.protocol import CHAT_MESSAGE_OVERHEAD

__all__ = ["TiktokenCounter"]

#: The longest text BPE-encoded in one piece: tiktoken's merges grow faster than the length
#: of one unspaced run ("A" * 2_000_000 took seconds), so a longer text is counted in pieces.
PIECE_CHARS = 16_384


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters, each cut before a space if one is near.

    A cut before a space is where tiktoken's own splitting starts a new word, so the sum of
    the pieces' counts is the text's count there; inside an unspaced run it may differ by a
    token a piece.

    >>> pieces("ab cd ef", 4)
    ['ab', ' cd', ' ef']
    >>> pieces("abcdefg", 3)
    ['abc', 'def', 'g']
    """
    out, at = [], 0
    while len(text) - at > size:
        space = text.rfind(" ", at + size // 2, at + size)
        end = space if space > at else at + size
        out.append(text[at:end])
        at = end
    out.append(text[at:])
    return out


@attrs.frozen
class TiktokenCounter:
    """Count tokens with a tiktoken `Encoding`; special-token text counts as plain text.

    Build one with `load_encoding`, which never downloads.
    """

    encoding: tiktoken.Encoding = attrs.field(
        validator=attrs.validators.instance_of(tiktoken.Encoding)
    )
    message_overhead: int = attrs.field(
        default=CHAT_MESSAGE_OVERHEAD,
        kw_only=True,
        validator=[attrs.validators.instance_of(int), attrs.validators.ge(0)],
    )

    @property
    def name(self) -> str:
        """``"tiktoken:"`` followed by the encoding's name."""
        return f"tiktoken:{self.encoding.name}"

    def count(self, text: str) -> int:
        """Return the number of BPE tokens in `text`; never raises on ``"<|endoftext|>"``."""
        # encode_ordinary reads special tokens as plain text; `encode` would raise on them.
        if len(text) <= PIECE_CHARS:
            return len(self.encoding.encode_ordinary(text))
        return sum(len(self.encoding.encode_ordinary(piece)) for piece in pieces(text))
