"""`ErrorValue`: the base of every error ctxrules returns in a `Failure` rather than raising."""

from __future__ import annotations

import attrs


@attrs.frozen
class ErrorValue:
    """An error as a value: it names the fault, carries its data, and prints its ``message``."""

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.message
