"""`TiktokenCounter`: exact BPE counts from a loaded tiktoken `Encoding`."""

import attrs
import tiktoken

from ctxrules.tokens.protocol import CHAT_MESSAGE_OVERHEAD

__all__ = ["TiktokenCounter"]


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
        return len(self.encoding.encode_ordinary(text))
