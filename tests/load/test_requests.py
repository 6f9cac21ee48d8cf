"""A local client's requests to its process: typed, the same after the trip, and a line
that is not one refused rather than guessed at."""

from __future__ import annotations

import json

import pytest

from vcsbench.load.requests import Clone, Commit, Create, Stage, Update, decode, encode


@pytest.mark.parametrize(
    "request_",
    [
        Create("/r/s000001"),
        Stage({"a.txt": "\x00\xffbytes", "dir/b.txt": ""}),
        Commit("/r/shared", "committer 3 commit 2", retry=50),
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
