"""When a hash-seed child has hung: judged by the CPU it uses, never by the clock alone.

On a busy machine a child may wait minutes for a CPU: that is not a broken rule. A child
hangs when it spends `Limits.cpu_seconds` of CPU without finishing (a loop that never
returns: the child sets that limit on itself, so the kernel stops it however busy the
machine is), or when it sits for `Limits.idle_seconds` neither using a CPU nor waiting
for one (blocked: a sleep, a lock, a read that never ends). Where a process's CPU time and
state cannot be read (no ``/proc``), `Limits.wall_seconds` of the clock is the limit.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs


@attrs.frozen
class Limits:
    """How much a child may take before it is stopped and reported as hung."""

    cpu_seconds: int = 120
    idle_seconds: float = 60.0
    wall_seconds: float = 900.0
    #: Seconds between two looks at the child.
    poll_seconds: float = 0.5


#: The limits `ctxrules check` gives its children.
CHILD_LIMITS = Limits()


@attrs.frozen
class Sample:
    """One look at a child: its CPU seconds so far and whether it runs or waits for a CPU (or a disk)."""

    cpu: float
    runnable: bool


@attrs.define
class Watch:
    """What is known of one child while it runs: when it last used or waited for a CPU.

    Pure: the caller gives the clock and the samples, so a test needs no slow machine.
    """

    limits: Limits
    started: float
    active: float = attrs.field()
    cpu: float = 0.0

    @active.default
    def _active(self) -> float:
        return self.started

    def hung(self, now: float, sample: Sample | None) -> str | None:
        """Why the child is hung at ``now``, given a look at it (None: unreadable), or None."""
        if sample is None:
            if now - self.started > self.limits.wall_seconds:
                return f"no answer after {self.limits.wall_seconds:.0f} s"
            return None
        if sample.runnable or sample.cpu > self.cpu:
            self.active = now
        self.cpu = max(self.cpu, sample.cpu)
        if self.cpu > self.limits.cpu_seconds:
            return f"{self.cpu:.0f} s of CPU without an answer"
        if now - self.active > self.limits.idle_seconds:
            return f"blocked: no CPU used for {now - self.active:.0f} s while not waiting for one"
        return None


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def sample(pid: int) -> Sample | None:
    """The process's CPU seconds and run state from ``/proc``, or None where it cannot be read."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: the fields follow the last ")".
    fields = text[text.rfind(")") + 2 :].split()
    try:
        state, utime, stime = fields[0], int(fields[11]), int(fields[12])
    except (IndexError, ValueError):
        return None
    # R: running or waiting for a CPU; D: waiting for a disk. Both are the machine's pace.
    return Sample((utime + stime) / _TICKS, state in {"R", "D"})
