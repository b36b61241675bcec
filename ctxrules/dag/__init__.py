"""The true history: an append-only DAG of `Call` nodes and the `Session` over it."""

from ctxrules.dag.call import Call, Role, Status
from ctxrules.dag.errors import (
    AttachRefused,
    ConflictingEdges,
    DagError,
    DuplicateNode,
    InvalidPayload,
    InvalidValue,
    MalformedRecord,
    NotRunning,
    SessionBusy,
    UnknownNode,
    UnknownReads,
)
from ctxrules.dag.graph import Graph
from ctxrules.dag.jsonl import call_from_json, call_to_json, graph_from_jsonl, graph_to_jsonl
from ctxrules.dag.payload import Frozen, freeze, thaw
from ctxrules.dag.pointers import (
    ATTACH,
    MARKER_PREFIX,
    MERGE,
    AttachSource,
    is_attach_pointer,
    is_merge_instruction,
    marker_id,
    pointer_commit,
)
from ctxrules.dag.session import Session
from ctxrules.dag.walks import (
    ancestors,
    branch,
    branch_internal,
    branch_terminals,
    compute_reads,
    fold_history,
    last_user_message,
    linear_back_to,
    siblings,
)

__all__ = [
    "ATTACH",
    "MARKER_PREFIX",
    "MERGE",
    "AttachRefused",
    "AttachSource",
    "Call",
    "ConflictingEdges",
    "DagError",
    "DuplicateNode",
    "Frozen",
    "Graph",
    "InvalidPayload",
    "InvalidValue",
    "MalformedRecord",
    "NotRunning",
    "Role",
    "Session",
    "SessionBusy",
    "Status",
    "UnknownNode",
    "UnknownReads",
    "ancestors",
    "branch",
    "branch_internal",
    "branch_terminals",
    "call_from_json",
    "call_to_json",
    "compute_reads",
    "fold_history",
    "freeze",
    "graph_from_jsonl",
    "graph_to_jsonl",
    "is_attach_pointer",
    "is_merge_instruction",
    "last_user_message",
    "linear_back_to",
    "marker_id",
    "pointer_commit",
    "siblings",
    "thaw",
]
