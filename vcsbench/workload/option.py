"""One option of a command, defined once, for both engines' tables: ``vcsbench run``'s and
the plugin's (:mod:`vcsbench.bench.options`), ``vcsbench load``'s
(:mod:`vcsbench.load.options`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class OptionDef:
    """``--NAME``, its default, help, metavar; ``repeat``: given more than once; ``kind``:
    the type its value is read as (``bool``: a flag)."""

    name: str
    """Without prefix: ``backends`` is ``--backends`` and ``--vcs-backends``."""
    default: Any
    help: str
    metavar: str | None = None
    repeat: bool = False
    kind: type = str

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")
