"""A local client's requests to its process: typed, the same after the trip, and a line
that is not one refused rather than guessed at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers import one_client_config, require_backend

from vcsbench.load.requests import Clone, Commit, Create, Stage, Update, decode, encode


@pytest.mark.parametrize(
    "request_",
    [
        Create("/r/s000001"),
        Stage({"a.txt": "\x00\xffbytes", "dir/b.txt": ""}),
        Commit("/r/shared", "committer 3 commit 2", retry=50),
        Commit("/r/s000001", "submission 1", create=True),
        Clone("/r/storm", "/c/clone-4", "prepare"),
        Update("/c/wc-s000002"),
    ],
)
def test_a_request_is_the_same_after_the_trip(request_: object) -> None:
    assert decode(encode(request_)) == request_  # type: ignore[arg-type]


def test_a_failure_counts_under_its_verbs_kind() -> None:
    kinds = [Create("r").kind, Commit("r", "m").kind, Clone("r", "t").kind, Update("t").kind]
    assert kinds == ["create", "commit", "clone", "update"]


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ({"repo": "/r", "create": True}, "a verb of create, stage, commit, clone, update"),
        ({"verb": "push", "repo": "/r"}, "a verb of"),
        ({"verb": "update", "target": "/t", "shell": "rm -rf /"}, "unknown fields ['shell']"),
    ],
)
def test_a_line_that_is_not_a_request_is_refused(line: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=said.replace("[", r"\[").replace("]", r"\]")):
        decode(json.dumps(line))


def test_a_first_visits_create_and_commit_are_one_request(tmp_path: Path) -> None:
    """A local client's timed first visit asks its process once, as before the verbs (a
    second round trip is ~95 us here): the commit carries the create; a create asked
    alone is a request of its own."""
    require_backend("git-pygit2")
    from vcsbench.load.clients import make_client
    from vcsbench.load.repositories import Reader
    from vcsbench.load.scenario import Session
    from vcsbench.load.scenarios import SCENARIOS

    (tmp_path / "repos").mkdir()
    client = make_client(
        one_client_config("local:git-pygit2", str(tmp_path / "repos")), tmp_path / "c"
    )
    sent: list[Any] = []
    ask = client._ask  # type: ignore[attr-defined]
    client._ask = lambda request: sent.append(request) or ask(request)  # type: ignore[attr-defined]
    deadline = SCENARIOS["deadline"]
    try:
        first = Session(1, 1, {"a.txt": b"one\n"})
        deadline.prepare_client(client, first)
        sent.clear()
        deadline.timed(client, first)
        assert [type(r).__name__ for r in sent] == ["Commit"] and sent[0].create
        client.create("s000002")
        client.clone("s000002", tmp_path / "wc")
        assert [type(r).__name__ for r in sent[1:]] == ["Create", "Clone"]
    finally:
        client.close()
    with Reader("git") as reader:  # the commit landed, in the repository made with it
        assert reader.read(tmp_path / "repos" / "s000001", first.files) == (1, [])
