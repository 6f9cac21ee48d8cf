"""fsfs-format: Subversion's FSFS format 7 (logical addressing, 1.9) against format 6 (1.8)
on a history: ``svn log -v`` of every revision, with the page cache cold or warm and on a
storage profile's disk, beside the speed-ups quoted from the format's development."""

from __future__ import annotations

from collections.abc import Callable

from vcsbench.report.format import fmt_ratio
from vcsbench.results.model import Benchmark, Run
from vcsbench.studies.base import PER_REPO_NOTE, Study, first, fs_note, groups, variant_table

FSFS_FORMAT_SOURCE = (
    "dev@subversion.apache.org, February 2013: FSFS format 7 (logical addressing, then in "
    "development) against format 6, `svn log -v`; quoted as format 7's speed-up: 6.1x with "
    "a cold cache on a USB disk, 0.82x warm on an SSD"
)
FSFS_PUBLISHED = {"cold": 6.1, "warm": 0.82}
"""Format 7's speed-up over format 6 (format 6's time over format 7's), as quoted."""
VARIANTS = (
    "svn-cli[compatible-version=1.8,seed-pack=full],svn-cli[compatible-version=1.9,seed-pack=full]"
)


def _format(bench: Benchmark) -> str:
    return {"1.8": "6", "1.9": "7"}.get(bench.backend.options.get("compatible-version", ""), "?")


def _speedup(base: Benchmark | None) -> Callable[[Benchmark], tuple[str, str]]:
    """Format 7's row: its speed-up over ``base`` (format 6) and the quoted one."""

    def published(bench: Benchmark) -> tuple[str, str]:
        quoted = FSFS_PUBLISHED.get(bench.cache)
        if quoted is None or _format(bench) != "7":
            return "—", "—"
        speedup = "—"
        if base is not None and base.median_ms and bench.median_ms:
            speedup = fmt_ratio(base.median_ms / bench.median_ms)
        return speedup, fmt_ratio(quoted)

    return published


OTHER_CASE = {"cold": "--cache warm on a fast disk", "warm": "--cache cold --profile usb-stick"}


def fsfs_format_tables(runs: list[Run]) -> dict[str, str]:
    out: dict[str, str] = {}
    for (fs, op, payload), group in groups(runs).items():
        base = first(group, lambda b: _format(b) == "6")
        table = variant_table(
            group,
            dict.fromkeys((b.label for b in group), base),
            _speedup(base),
            ("format 7 speed-up", "quoted speed-up"),
            durability=False,
        )
        cache = group[0].cache
        quoted = "cold USB disk" if cache == "cold" else "warm SSD"
        notes = (
            f"`{op}` on `{payload}`, page cache {cache} before each round. Format 6: "
            "`svnadmin create --compatible-version 1.8`; format 7: `1.9` (logical "
            "addressing: a shard's data found through its own index, laid out to be read "
            "together); both packed after the replay (`svnadmin pack`, full shards of "
            "1,000). The speed-up is format 6's median over format 7's; the quote is the "
            f"{quoted} figure (run with {OTHER_CASE.get(cache, '')} for the other). The "
            f"quoted repository was larger than this history. {PER_REPO_NOTE}{fs_note(fs)} "
            f"Quoted: {FSFS_FORMAT_SOURCE}."
        )
        heading = f"### fsfs-format on {fs}, {cache} cache"
        out[f"{fs}/{op}/{payload}"] = f"{heading}\n\n{table}\n\n_{notes}_\n"
    return out


STUDY = Study(
    "fsfs-format",
    "Subversion's FSFS format 7 against format 6: svn log -v of a 2,000-commit history "
    "(--cache cold --profile usb-stick for the quoted cold case)",
    VARIANTS,
    "log[verbose=true]",
    "history:synthetic:2000",
    "ext4",
    10,
    fsfs_format_tables,
    ("svn",),
    FSFS_FORMAT_SOURCE,
)
