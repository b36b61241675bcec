"""Nothing is lost: recall handles, offloaded originals, and the tools a model calls to get them back."""

from ctxrules.recall.growing import CommitHandles, NodeHandles, SessionHandles
from ctxrules.recall.lookup import (
    Handles,
    Original,
    RecallIndex,
    node_index,
    node_original,
    recall_index,
)
from ctxrules.recall.offload import OFFLOAD_CHARS, BlobStore, offload, offload_plan
from ctxrules.recall.paging import page_bounds
from ctxrules.recall.tools import (
    PAGE_TOKENS,
    RECALL,
    SEARCH_HISTORY,
    HistoryHit,
    HistorySearch,
    ToolAnswer,
    answer_recall,
    answer_search,
    answer_tool_call,
    offered_tools,
    recall_tools,
)
from ctxrules.rules.handles import fold_handle, handle_for, handles_in

__all__ = [
    "OFFLOAD_CHARS",
    "PAGE_TOKENS",
    "RECALL",
    "SEARCH_HISTORY",
    "BlobStore",
    "CommitHandles",
    "Handles",
    "HistoryHit",
    "HistorySearch",
    "NodeHandles",
    "Original",
    "RecallIndex",
    "SessionHandles",
    "ToolAnswer",
    "answer_recall",
    "answer_search",
    "answer_tool_call",
    "fold_handle",
    "handle_for",
    "handles_in",
    "node_index",
    "node_original",
    "offered_tools",
    "offload",
    "offload_plan",
    "page_bounds",
    "recall_index",
    "recall_tools",
]
