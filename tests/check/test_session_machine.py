"""The public session state machine: every invariant after every step, for each shipped spec."""

from __future__ import annotations

from pathlib import Path

from hypothesis import settings

from ctxrules.spec import load_spec
from ctxrules.testing import session_machine

SPECS = Path(__file__).resolve().parents[2] / "specs"

# CI profile: 300 examples (>= 200) of 50 steps; the dev profile runs 50.
DefaultSpecMachine = session_machine(load_spec(SPECS / "default.toml").unwrap())
TestDefaultSpecMachine = DefaultSpecMachine.TestCase
TestDefaultSpecMachine.settings = settings(stateful_step_count=50, deadline=None)

SmallWindowMachine = session_machine(load_spec(SPECS / "small-window.toml").unwrap(), window=8_000)
TestSmallWindowMachine = SmallWindowMachine.TestCase
TestSmallWindowMachine.settings = settings(stateful_step_count=50, deadline=None)
