"""The `Tokenizer` contract: the one ruler every token count in ctxrules comes from."""

from typing import Final, Protocol, runtime_checkable

__all__ = ["CHAT_MESSAGE_OVERHEAD", "Tokenizer", "WrapsRuler"]

#: Tokens the chat format adds around each message's text (start marker, role, separator,
#: end marker). OpenAI's cookbook counts 3 or 4 depending on the model; we take the larger
#: so that budgets err on the safe side.
CHAT_MESSAGE_OVERHEAD: Final = 4


@runtime_checkable
class Tokenizer(Protocol):
    """Counts the tokens of a piece of text; `count` is deterministic and pure.

    Counts are not assumed additive (`count(a + b)` may differ from `count(a) + count(b)`),
    so callers count each rendered piece on its own and add `message_overhead` per message.
    """

    @property
    def name(self) -> str:
        """Which ruler this is, e.g. ``"tiktoken:cl100k_base"`` or ``"heuristic"``."""
        ...

    @property
    def message_overhead(self) -> int:
        """Tokens a rendered chat message costs beyond its text (role and delimiters)."""
        ...

    def count(self, text: str) -> int:
        """Return the number of tokens in `text`: a non-negative int, 0 for ``""``."""
        ...


class WrapsRuler:
    """For a tokenizer that wraps another as ``inner``: it keeps the inner ruler's name and overhead.

    A wrapper changes how counts are obtained (remembered, tallied), never what they are.
    """

    __slots__ = ()
    inner: Tokenizer

    @property
    def name(self) -> str:
        """The inner ruler's name."""
        return self.inner.name

    @property
    def message_overhead(self) -> int:
        """The inner ruler's overhead per message."""
        return self.inner.message_overhead
