"""Who wrote to the device over a load step or a benchmark, as the result model holds it
(measured by :mod:`vcsbench.measure.writers`): the top tasks by what the kernel charged
them with, and the share of the device's writes charged to no task."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from vcsbench.results.schema import count, expect, optional_number

MAX_WRITERS = 20
"""Writers read at most (a result file is data: its lists are bounded)."""


@dataclass(frozen=True)
class Writer:
    name: str
    kernel_thread: bool
    write_bytes: int


@dataclass(frozen=True)
class Writers:
    """Who wrote to the device over an interval (:mod:`vcsbench.measure.writers`)."""

    top: tuple[Writer, ...]
    charged_bytes: int
    other_kernel_bytes: int
    unattributed_share: float | None
    own: tuple[Writer, ...] | None = None
    """vcsbench's own processes (a load's run, engine, workers, clients), apart from the
    writers; None where they were not told apart (a benchmark's harness, older files)."""
    own_bytes: int = 0
    elsewhere_bytes: int | None = None
    """Other processes' charges, not ranked: they held no file on the device (another
    tenant writing its own disk); None in files from before they were told apart."""

    @classmethod
    def from_json(cls, data: object, where: str) -> Writers:
        d = expect(data, dict, where)

        def listed(key: str) -> tuple[Writer, ...]:
            items = expect(d.get(key) or [], list, f"{where}.{key}")[:MAX_WRITERS]
            found = []
            for i, item in enumerate(items):
                at = f"{where}.{key}[{i}]"
                item = expect(item, dict, at)
                found.append(
                    Writer(
                        name=expect(item.get("name"), str, f"{at}.name")[:64],
                        kernel_thread=expect(item.get("kernel_thread", False), bool, at),
                        write_bytes=count(item, "write_bytes", at),
                    )
                )
            return tuple(found)

        return cls(
            top=listed("top"),
            charged_bytes=count(d, "charged_bytes", where, 0),
            other_kernel_bytes=count(d, "other_kernel_bytes", where, 0),
            unattributed_share=optional_number(d, "unattributed_share", where),
            own=listed("own") if "own" in d else None,
            own_bytes=count(d, "own_bytes", where, 0),
            elsewhere_bytes=(
                count(d, "elsewhere_bytes", where, 0) if "elsewhere_bytes" in d else None
            ),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "top": [asdict(w) for w in self.top],
            "charged_bytes": self.charged_bytes,
            "other_kernel_bytes": self.other_kernel_bytes,
            "unattributed_share": self.unattributed_share,
            **({} if self.elsewhere_bytes is None else {"elsewhere_bytes": self.elsewhere_bytes}),
            **(
                {"own": [asdict(w) for w in self.own], "own_bytes": self.own_bytes}
                if self.own is not None
                else {}
            ),
        }
