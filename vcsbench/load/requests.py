"""What a local client asks of its process (:mod:`vcsbench.load.client_process`): one typed
request per VCS verb, one JSON line each way, encoded and read here alone.

A request is ``{"verb": …, …its fields}``; a reply is ``{}``, ``{"retries": N}`` or
``{"kind", "error"}``. A line that is not one of these is refused in one line, never
guessed at.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields


@dataclass(frozen=True)
class Create:
    """The repository at ``repo``, made by the backend (its server's side)."""

    repo: str
    kind = "create"


@dataclass(frozen=True)
class Stage:
    """Untimed: the files the next commit writes, as the student's machine has them
    (latin-1 text, so that any bytes cross as JSON)."""

    files: dict[str, str]
    kind = "prepare"


@dataclass(frozen=True)
class Commit:
    """The staged files committed to ``repo``; tried again up to ``retry`` times where
    another commit landed first. ``create``: the repository made first, in this request
    (a first visit's create and commit then cost one round trip to the process, as a
    commit alone does: a second costs about 95 us here)."""

    repo: str
    message: str
    retry: int = 0
    create: bool = False
    kind = "commit"


@dataclass(frozen=True)
class Clone:
    """A working copy of ``repo`` at ``target`` (a clone where the backend has one, else a
    checkout); ``kind`` is what a failure counts under."""

    repo: str
    target: str
    kind: str = "clone"


@dataclass(frozen=True)
class Update:
    """The working copy at ``target`` brought to its repository's newest revision."""

    target: str
    kind = "update"


Request = Create | Stage | Commit | Clone | Update
VERBS: dict[str, type[Request]] = {
    "create": Create,
    "stage": Stage,
    "commit": Commit,
    "clone": Clone,
    "update": Update,
}


def encode(request: Request) -> bytes:
    verb = next(name for name, cls in VERBS.items() if isinstance(request, cls))
    return json.dumps({"verb": verb, **asdict(request)}).encode() + b"\n"


def decode(line: str | bytes) -> Request:
    """One request line, its verb and fields exactly as :func:`encode` writes them."""
    data = json.loads(line)
    if not isinstance(data, dict) or data.get("verb") not in VERBS:
        raise ValueError(f"client request: a verb of {', '.join(VERBS)} expected")
    cls = VERBS[data.pop("verb")]
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"client request {cls.__name__}: unknown fields {unknown}")
    return cls(**data)
