"""A session: a graph, a head and the running nodes; every operation returns a new session."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from pyrsistent import PSet, pset
from returns.result import Failure, Result, Success

from ctxrules.canonical import content_hash
from ctxrules.dag.call import Call, Role, Status
from ctxrules.dag.errors import (
    AttachRefused,
    DagError,
    InvalidPayload,
    InvalidValue,
    SessionBusy,
    UnknownNode,
)
from ctxrules.dag.graph import Graph
from ctxrules.dag.json_values import clean_text
from ctxrules.dag.payload import Frozen, freeze, thaw
from ctxrules.dag.pointers import ATTACH, MERGE, AttachSource, marker_id


def _node_id(session_id: str, graph: Graph, fields: Mapping[str, object]) -> str:
    # Ids are derived from content plus the seq they will get, so the core needs no
    # randomness and two appends of equal content (a retry) still get distinct ids.
    return "n_" + content_hash({"session": session_id, "seq": graph.next_seq, **fields})[:24]


@attrs.frozen
class Session:
    """The true history of one conversation: ``graph`` plus where ``head`` points.

    >>> s = Session("demo").send("user", "hi").bind(lambda s: s.send("assistant", "hello"))
    >>> [call.output for call in s.unwrap().branch()]
    ['hi', 'hello']
    """

    session_id: str
    graph: Graph = attrs.field(factory=Graph)
    head: str | None = None
    running: PSet[str] = attrs.field(factory=pset)

    def branch(self) -> tuple[Call, ...]:
        """The conversation from the root to the head."""
        from ctxrules.dag.walks import branch  # noqa: PLC0415 - walks imports this module's peers

        return branch(self.graph, self.head)

    def send(
        self,
        role: Role | str,
        output: object,
        *,
        name: str = "",
        input: object = None,  # noqa: A002 - the DAG field is called input
        metadata: Mapping[str, object] | None = None,
        reads: tuple[str, ...] = (),
        status: Status | str = Status.DONE,
        created_at: float = 0.0,
    ) -> Result[Session, DagError]:
        """Append a node after the head and move the head to it."""
        return self._append(
            role=role,
            name=name,
            input_=input,
            output=output,
            metadata=metadata,
            predecessor=self.head,
            caller=None,
            reads=reads,
            status=status,
            created_at=created_at,
            move_head=True,
        )

    def record_call(
        self,
        caller: str,
        name: str,
        input: object,  # noqa: A002 - the DAG field is called input
        output: object = None,
        *,
        role: Role | str = Role.TOOL,
        metadata: Mapping[str, object] | None = None,
        status: Status | str = Status.DONE,
        created_at: float = 0.0,
    ) -> Result[Session, DagError]:
        """Append a node called by ``caller`` (a tool call under its assistant); head stays.

        A ``running`` call is finished later by `complete`.
        """
        if caller not in self.graph:
            return Failure(UnknownNode(caller, "caller"))
        return self._append(
            role=role,
            name=name,
            input_=input,
            output=output,
            metadata=metadata,
            predecessor=None,
            caller=caller,
            reads=(),
            status=status,
            created_at=created_at,
            move_head=False,
        )

    def complete(
        self, node_id: str, output: object, status: Status | str = Status.DONE
    ) -> Result[Session, DagError]:
        """Fill a running node's output once and mark it done or error."""
        return self.graph.complete(node_id, output, status).map(
            lambda graph: Session(self.session_id, graph, self.head, self.running.discard(node_id))
        )

    def retry(self, node_id: str, *, created_at: float = 0.0) -> Result[Session, DagError]:
        """Append a sibling of ``node_id`` with the same content and move the head to it."""
        return self._sibling("retry", node_id, None, keep_output=True, created_at=created_at)

    def edit(
        self, node_id: str, new_output: object, *, created_at: float = 0.0
    ) -> Result[Session, DagError]:
        """Append a sibling of ``node_id`` with ``new_output`` and move the head to it."""
        return self._sibling("edit", node_id, new_output, keep_output=False, created_at=created_at)

    def checkout(self, node_id: str) -> Result[Session, DagError]:
        """Move the head to ``node_id``; appends nothing and reruns nothing."""
        if node_id not in self.graph:
            return Failure(UnknownNode(node_id, "checkout target"))
        return Success(attrs.evolve(self, head=node_id))

    def fork(self, node_id: str, session_id: str | None = None) -> Result[Session, DagError]:
        """A new session whose head is ``node_id``, sharing this graph without a copy."""
        if node_id not in self.graph:
            return Failure(UnknownNode(node_id, "fork point"))
        new_id = (
            session_id
            or "s_"
            + content_hash({"fork_of": self.session_id, "at": node_id, "seq": self.graph.next_seq})[
                :24
            ]
        )
        return Success(Session(new_id, self.graph, node_id, self.running))

    def attach(self, source: AttachSource, *, created_at: float = 0.0) -> Result[Session, DagError]:
        """Append an attach pointer naming ``source`` after the head; the next commit expands it.

        Fails with `AttachRefused` for a commit of this session or one that already holds a
        block attached from this session (a cycle). A different rules version is allowed
        and recorded in the pointer.
        """
        refused = self._refuse(source)
        if refused is not None:
            return Failure(refused)
        return self.send(
            Role.SYSTEM,
            f"[attach commit {source.id} of session {source.session_id}]",
            name=ATTACH,
            metadata=_pointer_metadata(source, base=False),
            created_at=created_at,
        )

    def merge(
        self, peers: Sequence[AttachSource], instruction: str, *, created_at: float = 0.0
    ) -> Result[Session, DagError]:
        """Attach every peer (the first is the base, kept locked) and append the instruction.

        The commit generated past the instruction has the peers' commits as extra parents.
        """
        if not peers:
            return Failure(AttachRefused("merge", "a merge needs at least one peer"))
        for peer in peers:
            refused = self._refuse(peer)
            if refused is not None:
                return Failure(refused)
        if len({peer.id for peer in peers}) != len(peers):
            return Failure(AttachRefused("merge", "the same peer commit is named twice"))
        session: Session = self
        for index, peer in enumerate(peers):
            result = session.send(
                Role.SYSTEM,
                f"[attach commit {peer.id} of session {peer.session_id}]",
                name=ATTACH,
                metadata=_pointer_metadata(peer, base=index == 0),
                created_at=created_at,
            )
            if isinstance(result, Failure):  # pragma: no cover - the peers were checked above
                return result
            session = result.unwrap()
        merged = [{"session": p.session_id, "head": p.head_node_id, "commit": p.id} for p in peers]
        return session.send(
            Role.USER,
            instruction,
            name=MERGE,
            metadata={"peers": [p.id for p in peers], "merged_heads": merged},
            created_at=created_at,
        )

    def _refuse(self, source: AttachSource) -> AttachRefused | None:
        if not all(hasattr(source, field) for field in _SOURCE_FIELDS):
            # An id string, or any other value: only a loaded commit can be expanded.
            return AttachRefused(
                str(source)[:80],
                "expected a commit (id, session_id, head_node_id, rules_version, items); "
                "load it first, e.g. with the store's get_commit",
            )
        if source.session_id == self.session_id:
            return AttachRefused(
                source.id,
                f"it is a commit of this session ({self.session_id}); check out its head instead",
            )
        own = marker_id(self.session_id, "")
        if any(item.source_node_id.startswith(own) for item in source.items):
            return AttachRefused(
                source.id,
                f"it already holds a block attached from this session ({self.session_id}): a cycle",
            )
        return None

    def _sibling(
        self,
        operation: str,
        node_id: str,
        new_output: object,
        *,
        keep_output: bool,
        created_at: float,
    ) -> Result[Session, DagError]:
        if self.running:
            return Failure(SessionBusy(operation, tuple(sorted(self.running))))
        original = self.graph.get(node_id)
        if original is None:
            return Failure(UnknownNode(node_id, f"{operation} target"))
        metadata = {**original.metadata_value(), f"{operation}_of": node_id}
        return self._append(
            role=original.role,
            name=original.name,
            input_=thaw(original.input),
            output=thaw(original.output) if keep_output else new_output,
            metadata=metadata,
            predecessor=original.predecessor,
            caller=original.caller,
            reads=original.reads,
            status=Status.DONE,
            created_at=created_at,
            move_head=original.caller is None,
        )

    def _append(
        self,
        *,
        role: Role | str,
        name: str,
        input_: object,
        output: object,
        metadata: Mapping[str, object] | None,
        predecessor: str | None,
        caller: str | None,
        reads: tuple[str, ...],
        status: Status | str,
        created_at: float,
        move_head: bool,
    ) -> Result[Session, DagError]:
        checked = _check_fields(role, status, input_, output, metadata)
        if isinstance(checked, DagError):
            return Failure(checked)
        # The name is text like the payloads: a lone surrogate would fail every encoder.
        name = clean_text(name)
        fields = {
            "role": str(role),
            "name": name,
            "input": thaw(checked[0]),
            "output": thaw(checked[1]),
            "predecessor": predecessor,
            "caller": caller,
        }
        call = Call.of_frozen(
            id=clean_text(_node_id(self.session_id, self.graph, fields)),
            role=Role(role),
            name=name,
            input=checked[0],
            output=checked[1],
            predecessor=predecessor,
            caller=caller,
            reads=tuple(map(str, reads)),
            status=Status(status),
            metadata=checked[2],  # type: ignore[arg-type]
            created_at=created_at,
            seq=self.graph.next_seq,
        )
        # Built directly: attrs.evolve reads every field back by name, for four of them.
        return self.graph.append(call).map(
            lambda graph: Session(
                self.session_id,
                graph,
                call.id if move_head else self.head,
                self.running.add(call.id) if call.status is Status.RUNNING else self.running,
            )
        )


#: What `attach` and `merge` read of a source: the fields of `AttachSource`.
_SOURCE_FIELDS = ("id", "session_id", "head_node_id", "rules_version", "items")


def _pointer_metadata(source: AttachSource, *, base: bool) -> dict[str, object]:
    return {
        "session": source.session_id,
        "head": source.head_node_id,
        "commit": source.id,
        "rules_version": source.rules_version,
        "base": base,
    }


#: The values a node's role and status may take (built once: a set per append is garbage).
_ROLES = frozenset(Role)
_STATUSES = frozenset(Status)


def _check_fields(
    role: object, status: object, input_: object, output: object, metadata: object
) -> tuple[Frozen, Frozen, Frozen] | DagError:
    if role not in _ROLES:
        return InvalidValue("role", f"one of {[r.value for r in Role]}", repr(role))
    if status not in _STATUSES:
        return InvalidValue("status", f"one of {[s.value for s in Status]}", repr(status))
    if not isinstance(metadata or {}, Mapping):
        return InvalidPayload("metadata", f"a value of type {type(metadata).__name__}")
    frozen: list[Frozen] = []
    for path, value in (("input", input_), ("output", output), ("metadata", metadata or {})):
        result = freeze(value, path)
        if isinstance(result, Failure):
            error: DagError = result.failure()
            return error
        frozen.append(result.unwrap())
    return frozen[0], frozen[1], frozen[2]
