"""Which cases of a selection run, and one line for each pair that does not, saying why:
an operation the backend lacks, ``back=`` without a history, a file the backend's VCS acts
on rather than keeps (Mercurial's ``.hgsub``), attributes by which git writes a work tree
other than committed (``eol=crlf``, ``ident``), a history for a backend that does not
replay, a call a remote variant does not make through its server."""

from __future__ import annotations

from typing import NamedTuple

from vcsbench.backends import Variant
from vcsbench.bench.remote import reaches
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import FsSpec
from vcsbench.workload.operations import OperationSpec
from vcsbench.workload.source import is_history


class Case(NamedTuple):
    """One benchmark of a selection: what the suite parametrizes its test by, and names it
    by (:attr:`id`); in its result, :class:`~vcsbench.results.model.BenchmarkKey`."""

    variant: Variant
    op: OperationSpec | str
    """The operation, parsed; or as its text, where the engine holds only that."""
    payload: str
    fs: FsSpec

    @property
    def id(self) -> str:
        """Its test's id in pytest and its result's name."""
        return f"{self.variant.text}-{self.op}-{self.payload}-{self.fs.text}"


def runnable(
    backends: list[Variant], ops: list[OperationSpec], payloads: list[str], fs: list[FsSpec]
) -> list[Case]:
    """Every benchmark of the selection the backend can run."""
    return [
        Case(backend, op, payload, spec)
        for spec in fs
        for payload in payloads
        for op in ops
        for backend in backends
        if op.supported_by(backend.cls)
        and reaches(backend, op.needs)
        and replays(backend, op, payload)
        and (op.takes_payload or payload == payloads[0])
    ]


def skipped(backends: list[Variant], ops: list[OperationSpec], payloads: list[str]) -> list[str]:
    """One line per (backend variant, operation) pair of the selection that cannot
    run, saying why (what the operation needs that the backend lacks)."""
    lines = [
        f"{op} × {', '.join(payloads[1:])}: skipped, {op} takes no payload (run once, "
        f"with {payloads[0]})"
        for op in ops
        if not op.takes_payload and len(payloads) > 1
    ]
    for op in ops:
        needs = op.needs
        for backend in backends:
            if stood_in(backend, op, ops):
                continue  # the selection runs what stands in for it on this backend
            lacks = needs - backend.cls.capabilities
            if lacks:
                lines.append(
                    f"{backend.text} × {op}: skipped, {backend.name} has no "
                    f"{', '.join(sorted(lacks))}"
                )
            elif not op.supported_by(backend.cls):
                continue  # a command for another VCS's repositories (cmd[vcs=...]): by design
            elif op.back and any(not is_history(p) for p in payloads):
                plain = [p for p in payloads if not is_history(p)]
                lines.append(
                    f"{backend.text} × {op}: skipped for {', '.join(plain)}, back= reaches "
                    "into a replayed history"
                )
            elif acted_on := [
                f"{p} holds {name}, which {backend.name} cannot keep as a file: {why}"
                for p in payloads
                for name, why in acts_on(backend, p).items()
            ]:
                lines.append(f"{backend.text} × {op}: skipped, " + "; ".join(acted_on))
            elif turned := [(p, c) for p in payloads if (c := converted(backend, op, p))]:
                lines.append(
                    f"{backend.text} × {op}: skipped, "
                    + "; ".join(
                        f"{p}'s .gitattributes make {backend.name}'s work tree differ from the "
                        f"committed bytes ({found[0]}{' …' if len(found) > 1 else ''}), which "
                        f"the check of {op} compares"
                        for p, found in turned
                    )
                )
            elif any(not replays(backend, op, p) for p in payloads):
                lines.append(
                    f"{backend.text} × {op}: skipped for history: payloads, "
                    f"{backend.name} does not replay histories"
                )
            elif not reaches(backend, needs):
                lines.append(
                    f"{backend.text} × {op}: skipped, remote= goes through the server "
                    f"for {', '.join(sorted(backend.cls.remote_calls))} only; {op} would "
                    "run on the repository directly"
                )
    return lines


def stood_in(backend: Variant, op: OperationSpec, ops: list[OperationSpec]) -> bool:
    """Whether ``op`` cannot run on ``backend`` and the selection runs, on it, the
    operation that stands in for it there (its ``stand_in``: svn's checkout for a clone, a
    remote git's clone for a checkout): a selection of both asks for whichever each
    backend has, and is not told of the other, twenty lines for the distance study."""
    other = op.cls.stand_in
    if not other or (op.supported_by(backend.cls) and reaches(backend, op.needs)):
        return False
    return any(
        o.cls.name == other and o.supported_by(backend.cls) and reaches(backend, o.needs)
        for o in ops
    )


def check_back(ops: list[OperationSpec], payloads: list[str]) -> None:
    """``back=K`` counts revisions of a replayed history: one line if no payload is one,
    or if K reaches before a history's first revision."""
    from vcsbench.workload.history import HistoryPayload
    from vcsbench.workload.payloads import load_payload

    for op in ops:
        back = op.back
        if not back:
            continue
        histories = [p for p in map(load_payload, payloads) if isinstance(p, HistoryPayload)]
        if not histories:  # with one, the others' benchmarks of it are skipped, said
            raise VcsbenchError(
                f"operation {op} reaches back into a replayed history, and payload "
                f"{payloads[0]!r} is not one; use a history:REPO payload or drop back="
            )
        for payload in histories:  # loaded (and cached) when the payloads were read
            name = payload.name
            if back >= payload.revisions:
                raise VcsbenchError(
                    f"operation {op}: payload {name} replays {payload.revisions} "
                    "revisions, so back= must be below that"
                )


def replays(backend: Variant, op: OperationSpec, payload: str) -> bool:
    """A history payload's operations on a repository built from it need a backend that
    replays (``create``, which commits nothing, does not); ``back=K`` needs a history."""
    if acts_on(backend, payload) or converted(backend, op, payload):
        return False
    if not is_history(payload):
        return not op.back
    if not op.builds_seed:
        return True
    return "replay" in backend.cls.capabilities


def converted(backend: Variant, op: OperationSpec, payload: str) -> list[str]:
    """The ``.gitattributes`` lines of ``payload`` by which the operation's work tree is
    written other than committed, where the backend applies them in its calls."""
    from vcsbench.workload.payloads import load_payload

    if not op.needs & backend.cls.converts_on:
        return []
    return load_payload(payload).converting()


def acts_on(backend: Variant, payload: str) -> dict[str, str]:
    """The files of ``payload`` (at its root, in any revision) that the backend's VCS
    acts on rather than keeps (Mercurial's ``.hgsub``), and what it does with each."""
    from vcsbench.workload.payloads import load_payload

    names = backend.cls.acts_on
    if not names:
        return {}
    found = load_payload(payload).root_names()
    return {name: why for name, why in names.items() if name in found}
