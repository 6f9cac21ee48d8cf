"""How a benchmark treats its rounds: which are verified, the page cache before each, and
which repositories are kept (maintained) after the last one."""

from __future__ import annotations

from dataclasses import dataclass

from vcsbench.errors import VcsbenchError

CACHE_STATES = ("warm", "cold")


@dataclass(frozen=True)
class VerifyPolicy:
    """Which rounds are verified: all, or ``sample`` evenly spaced ones."""

    sample: int | None = None

    @classmethod
    def parse(cls, text: str) -> VerifyPolicy:
        if text == "all":
            return cls()
        kind, _, count = text.partition(":")
        if kind == "sample" and count.isdigit() and int(count) > 0:
            return cls(int(count))
        raise VcsbenchError(f"verify {text!r} is not 'all' or 'sample:K' with K > 0")

    def verifies(self, index: int, total: int) -> bool:
        """Whether round ``index`` of ``total`` is verified; no set of rounds is built."""
        k = self.sample
        if k is None or k >= total:
            return True
        if k == 1:
            return index == total - 1
        nearest = round(index * (k - 1) / (total - 1))
        return round(nearest * (total - 1) / (k - 1)) == index

    def __str__(self) -> str:
        return "all" if self.sample is None else f"sample:{self.sample}"


@dataclass(frozen=True)
class KeptPolicy:
    """Which rounds' repositories go through their VCS's maintenance after the last round,
    for the footprint as kept: all, ``sample`` evenly spaced ones (default at most 100:
    maintenance costs what a repack costs), or none."""

    sample: int | None = 100
    off: bool = False

    @classmethod
    def parse(cls, text: str) -> KeptPolicy:
        if text == "all":
            return cls(None)
        if text == "none":
            return cls(None, off=True)
        kind, _, count = text.partition(":")
        if kind == "sample" and count.isdigit() and int(count) > 0:
            return cls(int(count))
        raise VcsbenchError(f"kept {text!r} is not 'all', 'none' or 'sample:K' with K > 0")

    def chosen(self, candidates: list[int]) -> list[int]:
        """Which of ``candidates`` (the rounds that succeeded, in order) are kept."""
        if self.off:
            return []
        pick = VerifyPolicy(self.sample)
        return [c for i, c in enumerate(candidates) if pick.verifies(i, len(candidates))]

    def __str__(self) -> str:
        if self.off:
            return "none"
        return "all" if self.sample is None else f"sample:{self.sample}"


DEFAULT_KEPT = str(KeptPolicy())
