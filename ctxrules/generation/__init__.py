"""Commit generation: copy the parent's items, add the new branch nodes, run the pipeline.

It sits above `commit/` and `rules/` because it runs the rules on commits.
"""

from ctxrules.generation.generate import (
    NO_COMMITS,
    CommitIndex,
    CommitMap,
    branch_items,
    branch_nodes,
    ensure_latest_commit,
    generate_commit,
    item_for,
    new_branch_nodes,
    node_text,
)

__all__ = [
    "NO_COMMITS",
    "CommitIndex",
    "CommitMap",
    "branch_items",
    "branch_nodes",
    "ensure_latest_commit",
    "generate_commit",
    "item_for",
    "new_branch_nodes",
    "node_text",
]
