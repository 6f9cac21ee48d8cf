"""What a variant's ``version=`` may say (the release itself is the bench's to install)."""

from __future__ import annotations

import re

from vcsbench.errors import VcsbenchError

VERSION = re.compile(r"^[0-9]+(\.[0-9]+){0,3}([a-z]+[0-9]*)?$")
"""A release as the variant may name it (PEP 440's common forms, no local parts)."""
ENV_BARE = "VCSBENCH_ENV_BARE"
"""Set for a tool a release's environment installed (Mercurial's ``hg``): its interpreter
then starts without vcsbench's installation, which only the measured worker needs."""
RANGE = re.compile(r"^([0-9]+)\.([0-9]+)\.\.([0-9]+)\.([0-9]+)$")
"""A range of minor releases: ``1.14..1.21``."""


def check_version(library: str, version: str) -> None:
    if not VERSION.match(version):
        raise VcsbenchError(
            f"version {version!r} of {library} is not a release number (e.g. 1.15.1)"
        )
