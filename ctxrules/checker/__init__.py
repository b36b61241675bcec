"""The checker's shell: `ctxrules check` searching, trapping, child processes and bundled inputs.

`ctxrules.testing` holds the pure strategies; this package runs rules under traps, starts
child processes with other hash seeds and reads the session bundled with ctxrules. The
command and the pytest plugin import it; a user's own tests need only `ctxrules.testing`.
"""

from ctxrules.checker.runner import Counterexample, check_rule
from ctxrules.checker.sessions import check_sessions
from ctxrules.checker.spec_check import SpecReport, check_pipeline

__all__ = ["Counterexample", "SpecReport", "check_pipeline", "check_rule", "check_sessions"]
