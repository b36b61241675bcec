"""The summarizer's prompts: fresh and update, five sections, and the style rules (reference 001 §4.4)."""

from __future__ import annotations

from ctxrules.render import Message, TextBlock

#: The five sections every summary has, in order, with what goes in each.
SECTIONS: tuple[tuple[str, str], ...] = (
    ("User intent", "the user's overall goal, in one or two sentences."),
    (
        "Decisions",
        "every specific instruction or constraint the user stated, as close to their words as possible.",
    ),
    (
        "Work completed",
        "files touched, commands run and conclusions reached, with paths and ids.",
    ),
    ("Outstanding", "what the user is still waiting for, and any question left dangling."),
    (
        "Active context",
        'the live state the next turn needs ("connected to db X, file Y open, env Z is W").',
    ),
)

#: How the summarizer works: specific, no hedging, no preamble, no moralising.
SYSTEM_PROMPT = (
    "You compress the earlier part of an agent conversation into a summary that replaces it"
    " in the model's context. Be specific: keep file paths, ids, command names, numbers and"
    " exact error messages. Do not hedge, do not moralise, and do not open with a preamble"
    ' such as "Here is a summary"; begin with the first section heading.'
)


def section_guide() -> str:
    """The numbered section list both prompts ask for.

    >>> print(section_guide().splitlines()[0])
    1. User intent: the user's overall goal, in one or two sentences.
    """
    return "\n".join(f"{n}. {name}: {what}" for n, (name, what) in enumerate(SECTIONS, 1))


def fresh_prompt(conversation: str) -> str:
    """The first summary of a conversation: the five sections from scratch."""
    return (
        "Summarize the conversation below. Write exactly these five sections, with these"
        f" headings:\n\n{section_guide()}\n\n<conversation>\n{conversation}\n</conversation>"
    )


def update_prompt(previous: str, conversation: str) -> str:
    r"""A chained summary: merge new messages into ``previous``; on conflict the new ones win.

    >>> "<previous-summary>\nold\n</previous-summary>" in update_prompt("old", "[user] hi")
    True
    """
    return (
        "Update the previous summary with the new messages below: merge them in, drop"
        " details that no longer matter, and bring progress up to date. Where the new"
        " messages contradict the previous summary, the new messages win. Write the same"
        f" five sections, with these headings:\n\n{section_guide()}\n\n"
        f"<previous-summary>\n{previous}\n</previous-summary>\n\n"
        f"<new-messages>\n{conversation}\n</new-messages>"
    )


def prompt_messages(conversation: str, previous: str | None = None) -> tuple[Message, ...]:
    """The messages a summarizer receives: the style rules, then the fresh or update prompt.

    >>> [m.role for m in prompt_messages("[user] hi")]
    ['system', 'user']
    """
    text = fresh_prompt(conversation) if previous is None else update_prompt(previous, conversation)
    return (Message("system", (TextBlock(SYSTEM_PROMPT),)), Message("user", (TextBlock(text),)))
