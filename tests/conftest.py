"""Fixtures: root-only tests, every registered backend, isolated sandbox state."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import require_backend, skip_or_fail

from vcsbench.backends import REGISTRY


@pytest.fixture
def root() -> None:
    if os.geteuid() != 0:
        skip_or_fail("needs root (mount, losetup)")


@pytest.fixture(params=list(REGISTRY))
def backend_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    require_backend(name)
    return name


@pytest.fixture(autouse=True)
def isolated_state(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Sandbox state files of the tests go to a directory of their own."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("VCSBENCH_STATE_DIR", str(state))
    return state
