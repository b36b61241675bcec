"""`ErrorValue`: the base of every error ctxrules returns in a `Failure` rather than raising."""

from __future__ import annotations

import attrs

#: What user code (a rule, a rule's factory, a module it imports) is caught raising, and
#: reported: `SystemExit` too, so a rule that calls ``sys.exit(0)`` cannot end ``ctxrules
#: check`` as a silent pass. `KeyboardInterrupt` still stops the program.
USER_CODE_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit)


@attrs.frozen
class ErrorValue:
    """An error as a value: it names the fault, carries its data, and prints its ``message``."""

    @property
    def message(self) -> str:
        """A one-line description of what went wrong."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.message


class ReadOnDemandFailed(Exception):
    """A part of the history read when first touched (from a store) could not be read.

    Raised through user code that touched it (a rule reading an item's chunk), and never
    blamed on that code: `ctxrules.rules.RuleRaised` lets it through.
    """
