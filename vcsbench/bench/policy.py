"""How a benchmark treats its rounds: which are verified, and the page cache before each."""

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
