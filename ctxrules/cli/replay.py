"""`ctxrules replay PATH`: what the pipeline would send at each LLM call of a recorded session."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any, TextIO

import attrs
from returns.result import Failure

from ctxrules.cache import PROFILES, CacheProfile, profile_for_model
from ctxrules.cli.options import (
    bundled_session,
    import_from_current_folder,
    missing_module,
    spec_source,
)
from ctxrules.cli.replay_report import (
    cost_line,
    print_summary,
    replay_json,
    totals,
    write_report,
)
from ctxrules.cli.replay_store import (
    open_target,
    run_key,
    run_session_id,
    save_run,
    stored_line,
)
from ctxrules.cli.stored_log import StoredRun, names_store, read_stored, session_wanted
from ctxrules.compaction import Summarizer
from ctxrules.dag import Role, Session
from ctxrules.engine import DefaultContextEngine
from ctxrules.engine.background import Simulated
from ctxrules.engine.frame import RequestFrame
from ctxrules.engine.recall import memory_search
from ctxrules.engine.replay import llm_calls, replay
from ctxrules.engine.turn import SessionState
from ctxrules.importers import ImportResult, import_session
from ctxrules.recall.audit import audit_commits, audit_line
from ctxrules.spec import load_spec
from ctxrules.spec.recall import recall_options
from ctxrules.spec.source import SpecSource
from ctxrules.store.protocol import Store
from ctxrules.tokens import default_tokenizer

DEFAULT_STORE = ".ctxrules/store.sqlite"


#: The window a log is replayed at when none is given (a stored session has its own).
DEFAULT_WINDOW = 200_000


def _structural(_: object) -> str:
    # No summarizer given: the deterministic structural summary is used (recorded as a fallback).
    raise RuntimeError("replay uses the structural summary unless --summarizer is given")


def _summarizer(reference: str | None) -> Summarizer | str:
    """The function ``module:function`` names, or why it could not be had."""
    if reference is None:
        return _structural
    module_name, _, attribute = reference.partition(":")
    import_from_current_folder()
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError, ValueError) as error:
        return f"--summarizer {reference}: {type(error).__name__}: {error}"
    return found if callable(found) else f"--summarizer {reference}: not callable"


def _seconds(text: str) -> float:
    """A duration in seconds, 0 or more (argparse reports the error)."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:
        msg = f"expected seconds >= 0, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _read(path: str, skip_bad: bool) -> ImportResult | str:
    """The imported log, each bad record named on stderr; without ``skip_bad`` they stop it."""
    # Read past bad records to name every one of them, then stop unless --skip-bad.
    imported = import_session(path, skip_bad=True)
    if isinstance(imported, Failure):
        return str(imported.failure())
    result = imported.unwrap()
    bad = result.stats.bad_records
    for record in bad:
        sys.stderr.write(f"{path}: {'skipped ' if skip_bad else ''}{record}\n")
    if not bad:
        return result
    graph = result.session.graph
    calls = sum(1 for call in graph.nodes.values() if call.role is Role.ASSISTANT)
    kept = sum(1 for _ in llm_calls(result.session))
    cut_off = (
        f"; only {kept} of the log's {calls} LLM calls can be replayed, "
        "the rest are cut off from the last message by them"
        if kept < calls
        else ""
    )
    if skip_bad:
        sys.stderr.write(f"{path}: {len(bad)} bad record(s) skipped{cut_off}\n")
        return result
    return (
        f"{path}: {len(bad)} bad record(s), nothing replayed{cut_off}; "
        "fix them, or pass --skip-bad to replay the rest"
    )


def _source_log(path: str, session: str | None, skip_bad: bool) -> StoredRun | str:
    """The log to replay: a recorded one, or a store's session (``--session``) with its frame."""
    if not names_store(path):
        if session is not None:
            return f"--session {session}: {path} is a recorded log, not a store"
        read = _read(path, skip_bad)
        return read if isinstance(read, str) else StoredRun(read, None, {})
    return session_wanted(path) if session is None else read_stored(path, session)


@attrs.frozen
class Setup:
    """What a replay runs: the engine, the log (with a stored session's frame), where it came from.

    ``profile`` prices the cost, and the cost line names it as ``priced_as``.
    """

    engine: DefaultContextEngine
    run: StoredRun
    path: str
    offers_search: bool
    profile: CacheProfile
    priced_as: str

    @property
    def session(self) -> Session:
        """The session replayed."""
        return self.run.log.session

    @property
    def fmt(self) -> str:
        """The log's format, as the store lists it."""
        found = self.run.log.format
        return str(getattr(found, "value", found))


def _frame_defaults(args: argparse.Namespace, frame: RequestFrame | None) -> None:
    # A stored session's spec and window are the live loop's unless given.
    own = frame is not None and bool(frame.spec)
    # How listings name the spec of the run (`run_key`): a file by its name, not its path.
    args.spec_label = (
        Path(args.spec).name if args.spec is not None else ("live-loop" if own else "default")
    )
    if args.spec is None:
        args.spec = frame.spec if frame is not None and frame.spec else "default"
    if args.window is None:
        args.window = frame.window if frame is not None else DEFAULT_WINDOW


def pricing(provider: str | None, frame: RequestFrame | None) -> tuple[CacheProfile, str]:
    """The cache profile the cost is priced under, and the name the cost line gives it.

    ``--provider`` if given; else the stored session's model's own profile (named by the
    model, and the one `ctxrules inspect` prices it under); else Anthropic's.

    >>> profile, name = pricing(None, RequestFrame("gpt-4o", 128_000))
    >>> profile.read, name, pricing("openai", None)[0].read
    (0.5, 'gpt-4o', 0.25)
    """
    if provider is not None:
        return PROFILES[provider], provider
    model = profile_for_model(frame.model) if frame is not None else None
    if frame is not None and model is not None:
        return model, frame.model
    return PROFILES["anthropic"], "anthropic"


def _inputs(args: argparse.Namespace) -> tuple[SpecSource, StoredRun, str] | str:
    """The spec, the log and its path (a stored session's own spec unless ``--spec``), or what is wrong."""
    given = args.spec
    # A --spec given is checked before any work; the live loop's own is read with its session.
    source = spec_source(given) if given is not None else None
    if isinstance(source, Failure):
        return str(source.failure())
    path = args.path or str(bundled_session())
    run = _source_log(path, args.session, args.skip_bad)
    if isinstance(run, str):
        return run
    _frame_defaults(args, run.frame)
    if source is None:
        source = spec_source(args.spec)
        if isinstance(source, Failure):
            return str(source.failure())
    return source.unwrap(), run, path


def _setup(args: argparse.Namespace) -> Setup | str:
    """The session, the engine, the log's path and format, whether the spec offers search, the frame.

    Or the one line saying what is wrong.
    """
    # What is missing is said before any work, not after the whole replay ran.
    if args.report is not None:
        absent = missing_module("plotly", "pip install 'ctxrules[report]'", "--report")
        if absent is not None:
            return absent
    inputs = _inputs(args)
    if isinstance(inputs, str):
        return inputs
    source, run, path = inputs
    if args.allow_imports:
        import_from_current_folder()
    spec = load_spec(source, allow_imports=args.allow_imports)
    if isinstance(spec, Failure):
        return str(spec.failure())
    summarizer = _summarizer(args.summarizer)
    if isinstance(summarizer, str):
        return summarizer
    latency = args.summary_latency
    engine = DefaultContextEngine(
        pipeline=spec.unwrap(),
        summarizer=summarizer,
        tokenizer=default_tokenizer(),
        background=Simulated(latency) if latency is not None else None,
        # As `Context` does: a gap longer than the model's cache lifetime is a batch point.
        cache_profile=profile_for_model(run.frame.model) if run.frame is not None else None,
    )
    # The spec loaded, so its [recall] table did too: search is offered when its tools are.
    # A live session offered them or not as its frame says.
    options = recall_options(source)
    offers_search = not isinstance(options, Failure) and options.unwrap().tools
    if run.frame is not None:
        offers_search = run.frame.receipts
    profile, priced_as = pricing(args.provider, run.frame)
    return Setup(engine, run, path, offers_search, profile, priced_as)


def _say_frame(setup: Setup, out: TextIO) -> None:
    """One line saying what a stored session's requests carried beside the history."""
    frame = setup.run.frame
    if frame is None:
        return
    ruler = setup.engine.tokenizer
    system = ruler.count(frame.system) if frame.system else 0
    pins = sum(1 for asked in setup.run.pins.values() for _, pinned in asked if pinned)
    tools = len(frame.tools)
    out.write(
        f"as the live loop sent it: {frame.model}, window {frame.window:,}, a system prompt of "
        f"{system:,} tokens, {tools} tool schema{'' if tools == 1 else 's'}"
        f"{', receipts' if frame.receipts else ''}"
        f"{f', {pins} pinned message' + ('' if pins == 1 else 's') if pins else ''}\n"
    )
    live, spec = setup.run.rules_version, setup.engine.pipeline.version
    if live is not None and live != spec:
        # The figures are then what this spec would have done, not what the loop did.
        out.write(
            f"the live loop ran another spec (rules version {live[:12]}); "
            f"this replay runs {spec[:12]}\n"
        )


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Replay, print the table, and write the store and report if asked."""
    setup = _setup(args)
    if isinstance(setup, str):
        sys.stderr.write(setup + "\n")
        return 2
    store = open_target(args.store) if args.store is not None else None
    if isinstance(store, str):
        sys.stderr.write(store + "\n")
        return 2
    try:
        return _run(args, setup, store, out)
    finally:
        if store is not None:
            store.close()


def _run(args: argparse.Namespace, setup: Setup, store: Store | None, out: TextIO) -> int:
    """Replay, print the figures, then keep the run in ``store`` and write the report if asked."""
    session, engine, path, fmt = setup.session, setup.engine, setup.path, setup.fmt
    base = session.session_id
    order = session.graph.order
    run = run_key(
        args.spec_label, engine, args.window, setup.profile.name, order[0] if order else None
    )
    if store is not None:
        # Chosen before the replay: the commits it makes name their session.
        session = attrs.evolve(session, session_id=run_session_id(store, base, run))
    # A stored session is named with its store: one store holds many.
    label = Path(path).name + (f" {args.session}" if args.session is not None else "")
    # With --json, stdout is the one JSON document; what people read goes to stderr.
    document, out = (out, sys.stderr) if args.json else (None, out)
    _say_frame(setup, out)
    frame = setup.run.frame
    requests = replay(
        session,
        engine,
        window=args.window,
        on_request=_progress(out, session),
        profile=setup.profile,
        search=setup.offers_search,
        system_prompt=frame.system if frame is not None else None,
        tools=frame.tools if frame is not None else (),
        pins=setup.run.pins,
    )
    if document is not None:
        found = replay_json(requests, label, setup.profile.name)
        document.write(json.dumps(found, indent=1) + "\n")
    else:
        print_summary(requests, label, out)
    figures = totals(requests)
    out.write(cost_line(figures, setup.priced_as) + "\n")
    if figures["snipped"]:
        sys.stderr.write(
            f"warning: {figures['snipped']:,.0f} of {figures['requests']:,.0f} requests were cut "
            f"to fit --window {args.window:,} (snipped), so the cost is not a saving; "
            "pass the model's real window\n"
        )
    # A session with no LLM call was never prepared, so it has no commits to audit.
    state = engine.states.get(session.session_id, SessionState())
    with memory_search(session) as search:
        audit = audit_commits(
            session.graph,
            state.by_id.values(),
            tokenizer=engine.tokenizer,
            search=search,
            final=state.head_commit,
        )
    out.write(audit_line(audit) + "\n")
    if store is not None:
        problem = save_run(store, session, engine, fmt, run)
        if problem is not None:
            sys.stderr.write(problem + "\n")
            return 2
        out.write(stored_line(args.store, session.session_id, base) + "\n")
    if args.report is not None:
        problem = write_report(requests, label, Path(args.report))
        if problem is not None:
            sys.stderr.write(problem + "\n")
            return 2
        out.write(f"report written to {args.report}\n")
    return 1 if figures["over_window"] else 0


def _progress(out: TextIO, session: Any) -> Any:  # noqa: ANN401 - a small callback factory
    total = sum(1 for c in session.branch() if c.role.value == "assistant")

    def report(request: Any) -> None:  # noqa: ANN401 - a replay Request
        if out.isatty():
            filled = int(30 * (request.index + 1) / max(total, 1))
            out.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {request.index + 1}/{total}")
            if request.index + 1 == total:
                out.write("\n")
            out.flush()

    return report


def register(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers type is private
    """Add the ``replay`` subcommand."""
    parser = commands.add_parser("replay", help="replay a recorded session through a pipeline")
    parser.add_argument(
        "path",
        nargs="?",
        default=None,
        help="a recorded session (Claude Code, OpenAI chat, LangChain, ctxrules JSON Lines) "
        "or a store with --session; default: the bundled example session",
    )
    parser.add_argument(
        "--session",
        default=None,
        help="with a store as PATH: replay this stored session (stored back as SESSION.replay)",
    )
    parser.add_argument(
        "--spec",
        default=None,
        help="a built-in spec (default, small-window, cache-sensitive) or a TOML file "
        "(default: a stored session's own, else default)",
    )
    parser.add_argument(
        "--window",
        type=int,
        default=None,
        help="the model's context window, 1024 to 10000000 tokens (default: a stored session's, "
        "else 200000)",
    )
    parser.add_argument(
        "--provider",
        choices=sorted(PROFILES),
        default=None,
        help="cache profile the cost is priced under (default: a stored session's model's own, "
        "as `ctxrules inspect` prices it, else anthropic)",
    )
    parser.add_argument("--summarizer", default=None, help="module:function used for summaries")
    parser.add_argument(
        "--summary-latency",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="write summaries in the background, each taking this long by the log's clock "
        "(simulated); default: compact in the turn",
    )
    parser.add_argument(
        "--allow-imports",
        action="store_true",
        help="allow Python rules in the spec (modules are found from the current folder)",
    )
    parser.add_argument(
        "--store",
        default=".ctxrules/store.sqlite",
        help="store to keep the run in, opened before the replay: a path, sqlite:///PATH or "
        "postgresql://USER@HOST/DB (:memory: keeps nothing)",
    )
    parser.add_argument("--report", default=None, help="write a self-contained HTML report here")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the totals and every request's figures (fidelity included) as JSON",
    )
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="replay past bad records (each is still reported); without it they stop the replay",
    )
    parser.set_defaults(run=run)
