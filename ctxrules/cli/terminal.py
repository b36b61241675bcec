"""Text from a session made safe to print on a terminal: control characters shown, not obeyed.

Session content is untrusted (a tool result, a web page, a model's reply). Written raw, an
escape sequence in it sets the window title, writes the clipboard (OSC 52) or clears the
screen; a bidirectional override reorders what the reader sees.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, and the format characters that reorder or hide text.
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def printable(text: str) -> str:
    r"""``text`` with each control or reordering character written as its escape.

    >>> printable("title\x1b]0;owned\x07 and \u202egnp.exe")
    'title\\x1b]0;owned\\x07 and \\u202egnp.exe'
    >>> printable("plain café, tabs\tand lines\n")
    'plain café, tabs\\x09and lines\\x0a'
    """
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE.sub(_shown, text)
