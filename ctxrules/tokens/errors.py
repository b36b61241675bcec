"""`TokenizerUnavailable`: why an encoding could not be loaded, and how to provide it."""

from typing import Literal, TypeAlias

import attrs

__all__ = ["Reason", "TokenizerUnavailable"]

#: Why a load failed: the name is not known, no copy of the file was found, a copy has
#: the wrong SHA-256, or a copy could not be read.
Reason: TypeAlias = Literal["unknown_encoding", "not_found", "hash_mismatch", "unreadable"]


@attrs.frozen
class TokenizerUnavailable:
    """An encoding that could not be loaded: its name, why, what was found, and the fix."""

    encoding: str
    reason: Reason
    detail: str
    remedy: str

    @property
    def message(self) -> str:
        """One line for a person: what failed and how to make it work.

        >>> TokenizerUnavailable("x", "unknown_encoding", "no such encoding", "use y").message
        "encoding='x' is unavailable (unknown_encoding): no such encoding; use y"
        """
        return f"encoding={self.encoding!r} is unavailable ({self.reason}): {self.detail}; {self.remedy}"
