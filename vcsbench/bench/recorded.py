"""What a result file's recorded selection may supply to ``--resume``: values, never a
program, a directory of programs, a release to install, mkfs or mount arguments or an
image directory -- those the command line states again, the same, or the resume is
refused in one line naming them."""

from __future__ import annotations

import os
from typing import Any

from vcsbench.backends import REGISTRY
from vcsbench.bench.options import parse_variants
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox import parse_fs_list

PLACE_OPTIONS = ("backends", "backend_option", "fs", "image_dir")
"""The options whose values may name a program, a place or a release to install."""


def places_in(dest: str, value: str | list[str]) -> list[str]:
    """What ``value`` of option ``dest`` names that is a program, a directory of programs,
    a release to install, mkfs or mount arguments or an image directory."""
    if dest == "backends":
        return [
            f"{variant.text}: {place}" for variant in parse_variants(str(value))
            for place in variant.places
        ]  # fmt: skip
    if dest == "backend_option":
        found = []
        for item in value if isinstance(value, list) else [value]:
            name, _, pair = item.partition(":")
            key = pair.partition("=")[0]
            backend = REGISTRY.get(name)
            if backend is not None and key in backend.place_options:
                found.append(item)
        return found
    if dest == "fs":
        return [
            f"{spec.text}: {place}" for spec in parse_fs_list(str(value)) for place in spec.places
        ]
    if dest == "image_dir":
        return [str(value)] if value else []
    return []


def places_stated_again(recorded: dict[str, Any], stated: dict[str, Any], where: str) -> None:
    """A recorded selection is values, never programs or places: each option of
    :data:`PLACE_OPTIONS` whose recorded value names one must be given again, the same,
    on the command line; one given there must be the recorded one (a resume runs the
    recorded selection)."""
    for dest in PLACE_OPTIONS:
        flag = "--" + dest.replace("_", "-")
        mine, theirs = stated.get(dest), recorded.get(dest)
        if mine is not None and _normal(dest, mine) != _normal(dest, theirs):
            raise VcsbenchError(
                f"{where}: {flag} {_shown(mine)} is not the recorded {_shown(theirs)}; a "
                "resume runs the selection it recorded (start a new run for another)"
            )
        if mine is None and theirs:
            named = places_in(dest, theirs)
            if named:
                raise VcsbenchError(
                    f"{where}: its recorded {flag} names a program, a place or a release "
                    f"({named[0]}); a result file is data, never that: give {flag} "
                    f"{_shown(theirs)} again on the command line to run it"
                )


def _normal(dest: str, value: object) -> object:
    if value is None or value == [] or value == "":
        return None
    if dest == "backends":
        return [v.text for v in parse_variants(str(value))]
    if dest == "fs":
        return [spec.text for spec in parse_fs_list(str(value))]
    if dest == "image_dir":
        return os.path.realpath(str(value))
    return sorted(value) if isinstance(value, list) else value


def _shown(value: object) -> str:
    import shlex

    if isinstance(value, list):
        return " ".join(shlex.quote(str(v)) for v in value)
    return shlex.quote(str(value)) if value else "(none)"
