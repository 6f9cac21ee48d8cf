"""The load engine's configuration: typed on both sides of the process boundary, and the
same after the trip (the run to its engine, a master to its workers)."""

from __future__ import annotations

import json

import pytest

from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.paths import AccessPath


def config(**changes: object) -> EngineConfig:
    base: dict[str, object] = {
        "scenario": "deadline",
        "path": AccessPath("svnserve", "svn"),
        "repos": "/srv/r",
        "students": 12,
        "payload": "submission",
        "precreate": True,
        "steps": (1.0, 4.0, 8.0),
        "shape": "closed",
        "max_clients": 50,
        "step_seconds": 2.5,
        "start": {"a.txt": b"\x00\xffbytes"},
        "client_env": {"SVN_SSH": "ssh -F x"},
    }
    return EngineConfig(**{**base, **changes})  # type: ignore[arg-type]


def test_a_configuration_is_the_same_after_its_trip_through_json() -> None:
    sent = config(server_session=4321, device_stat="/sys/block/loop3/stat", step_ops=40)
    assert sent == EngineConfig.from_json(json.loads(json.dumps(sent.to_json())))
    mixed = config(scenario="mixed", mix=(("commit", 80), ("update", 15), ("clone", 5)))
    assert mixed == EngineConfig.from_json(json.loads(json.dumps(mixed.to_json())))


def test_the_pool_is_the_most_clients_in_flight_for_each_shape() -> None:
    assert 8 == config().pool  # closed: the highest step's clients
    assert 50 == config(shape="open").pool  # open: the cap on clients in flight


def test_a_worker_gets_its_index_and_the_rest_unchanged() -> None:
    worker = config().for_worker(2, 3)
    assert (2, 3) == (worker.worker_index, worker.workers)
    assert EngineConfig.from_json({**worker.to_json(), "worker_index": 0, "workers": 0}) == config()


def test_an_unknown_key_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"unknown keys \['master_port'\]"):
        EngineConfig.from_json({**config().to_json(), "master_port": 1})
