"""The one registry of what vcsbench measures: every metric's unit, label and meaning.

Runner, report, compare, plots and studies ask this module; none of them spells a
metric name it does not define. Adding a metric is one entry here plus the probe that
measures it.

``totalled`` says how a benchmark's total is formed: ``sum`` over its successful rounds,
``final`` a state measured once after the last round (footprint), ``peak`` a high-water
mark. ``round_key`` names the per-round array a metric keeps (``Rounds.values``), which
compare tests for significance; ``None`` for metrics measured once per benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass

KIB = 1024.0


@dataclass(frozen=True)
class MetricDef:
    name: str
    unit: str
    label: str
    """Column label, in the display unit (``scale`` converts to it)."""
    scale: float
    """Divide a value in ``unit`` by this to show it in the label's unit."""
    description: str
    totalled: str = "sum"
    round_key: str | None = None
    per_repo: bool = True
    digits: int = 1
    """Decimals when shown."""
    signed: bool = False
    """Whether a figure can be below 0 (a change); a result file's negative figure for
    any other metric is refused."""


def _defs(*defs: MetricDef) -> dict[str, MetricDef]:
    return {d.name: d for d in defs}


METRICS: dict[str, MetricDef] = _defs(
    MetricDef(
        "wall",
        "s",
        "wall ms",
        1e-3,
        "wall time of the operation alone (perf_counter_ns around the call)",
        round_key="wall",
        digits=2,
    ),
    MetricDef(
        "cpu",
        "s",
        "CPU ms",
        1e-3,
        "user + system CPU, this process and its waited children (getrusage)",
        round_key="cpu",
        digits=2,
    ),
    MetricDef("cpu_user", "s", "user CPU ms", 1e-3, "user CPU (getrusage, children incl.)"),
    MetricDef("cpu_sys", "s", "system CPU ms", 1e-3, "system CPU (getrusage, children incl.)"),
    MetricDef(
        "io_read_logical",
        "B",
        "logical KiB read",
        KIB,
        "bytes fetched from storage for this process (/proc/self/io read_bytes)",
        round_key="io_read_logical",
    ),
    MetricDef(
        "io_write_logical",
        "B",
        "logical KiB written",
        KIB,
        "bytes this process sent towards storage (/proc/self/io write_bytes)",
        round_key="io_write_logical",
    ),
    MetricDef(
        "io_read_syscall",
        "B",
        "syscall KiB read",
        KIB,
        "bytes through read calls, whatever they reach (rchar)",
        round_key="io_read_syscall",
    ),
    MetricDef(
        "io_write_syscall",
        "B",
        "syscall KiB written",
        KIB,
        "bytes through write calls, whatever they reach (wchar)",
        round_key="io_write_syscall",
    ),
    MetricDef(
        "io_read_device",
        "B",
        "device KiB read",
        KIB,
        "bytes the sandbox's block device read (/sys/block/*/stat)",
        round_key="io_read_device",
    ),
    MetricDef(
        "io_write_device",
        "B",
        "device KiB written",
        KIB,
        "bytes the sandbox's block device wrote after syncfs: journal, metadata, writeback",
        round_key="io_write_device",
    ),
    MetricDef(
        "io_read_requests_device",
        "requests",
        "device read requests",
        1.0,
        "read requests the sandbox's block device completed",
    ),
    MetricDef(
        "io_write_requests_device",
        "requests",
        "device write requests",
        1.0,
        "write requests the sandbox's block device completed",
        round_key="io_write_requests_device",
    ),
    MetricDef(
        "io_flush_requests_device",
        "requests",
        "device flushes",
        1.0,
        "cache flushes the sandbox's block device completed during the operation "
        "(/sys/block/*/stat, field 16): what its fsync calls reached; the harness's syncfs "
        "after the operation not counted",
        round_key="io_flush_requests_device",
    ),
    MetricDef(
        "sync_calls",
        "calls",
        "fsync-family calls",
        1.0,
        "fsync, fdatasync, sync_file_range, syncfs, msync and sync calls the operation made, "
        "its waited children's included (the kernel's syscall tracepoints, counted through "
        "perf events; needs root)",
        round_key="sync_calls",
    ),
    *(
        MetricDef(
            name,
            "calls",
            label,
            1.0,
            f"{what} the operation made, its waited children's included (the kernel's syscall "
            "tracepoints, counted through perf events; needs root)",
            round_key=name,
        )
        for name, label, what in (
            ("rename_calls", "renames", "rename, renameat and renameat2 calls"),
            ("mkdir_calls", "mkdirs", "mkdir and mkdirat calls"),
            ("unlink_calls", "unlinks", "unlink, unlinkat and rmdir calls"),
            ("process_calls", "processes", "processes and threads started (clone, fork)"),
            ("exec_calls", "execs", "programs started (execve, execveat; failed tries too)"),
        )
    ),
    MetricDef(
        "footprint_content",
        "B",
        "content KiB",
        KIB,
        "bytes of regular files and symlinks in the repository (st_size); the same on "
        "every filesystem",
        totalled="final",
    ),
    MetricDef(
        "footprint_dirs",
        "B",
        "directory KiB",
        KIB,
        "st_size of the repository's directories: a property of the filesystem",
        totalled="final",
    ),
    MetricDef(
        "footprint_apparent",
        "B",
        "apparent KiB",
        KIB,
        "content + directory bytes (du -b)",
        totalled="final",
    ),
    MetricDef(
        "footprint_allocated",
        "B",
        "allocated KiB",
        KIB,
        "blocks allocated to the repository (st_blocks x 512, du -B1)",
        totalled="final",
    ),
    MetricDef(
        "footprint_inodes",
        "inodes",
        "inodes",
        1.0,
        "files, directories and links of the repository",
        totalled="final",
        digits=0,
    ),
    MetricDef(
        "footprint_kept_allocated",
        "B",
        "kept KiB",
        KIB,
        "blocks allocated to the repository after its VCS's own maintenance (git gc, "
        "svnadmin pack; Mercurial: as written), as a server keeps it; per repository of "
        "those kept (--kept)",
        totalled="final",
    ),
    MetricDef(
        "footprint_kept_content",
        "B",
        "kept content KiB",
        KIB,
        "bytes of regular files and symlinks after the VCS's own maintenance",
        totalled="final",
    ),
    MetricDef(
        "footprint_kept_inodes",
        "inodes",
        "kept inodes",
        1.0,
        "files, directories and links after the VCS's own maintenance",
        totalled="final",
        digits=0,
    ),
    MetricDef(
        "footprint_change",
        "B",
        "allocated change KiB",
        KIB,
        "blocks allocated to the repository (and what else the round measured) after the "
        "round minus before it: what the operation added, or freed (a repack)",
        totalled="final",
        signed=True,
    ),
    MetricDef(
        "scratch_allocated",
        "B",
        "scratch KiB",
        KIB,
        "blocks allocated to the backend's scratch space (staging, working copies); "
        "not part of the repository",
        totalled="final",
    ),
    MetricDef(
        "scratch_inodes",
        "inodes",
        "scratch inodes",
        1.0,
        "inodes of the backend's scratch space",
        totalled="final",
        digits=0,
    ),
    MetricDef(
        "fs_used_delta",
        "B",
        "fs used KiB",
        KIB,
        "growth of the sandbox's used blocks (statvfs) across the operation",
        round_key="fs_used_delta",
        signed=True,
    ),
    MetricDef(
        "fs_inodes_delta",
        "inodes",
        "fs inodes used",
        1.0,
        "growth of the sandbox's used inodes (statvfs) across the operation",
        digits=0,
        signed=True,
    ),
    MetricDef(
        "rss_peak",
        "B",
        "peak RSS MiB",
        float(1 << 20),
        "peak resident memory of the process that ran the operations (VmHWM)",
        totalled="peak",
        per_repo=False,
    ),
    MetricDef(
        "rss_growth",
        "B",
        "RSS growth KiB",
        KIB,
        "resident memory after the last round minus before the first",
        totalled="final",
        signed=True,
    ),
)
KEPT_FOOTPRINT = "footprint_kept_allocated"
"""The footprint as a server keeps it (``--kept``): what tables and studies compare on."""
DURABILITY_METRICS = ("sync_calls", "io_flush_requests_device")
CALL_METRICS = (
    "sync_calls", "rename_calls", "mkdir_calls", "unlink_calls", "process_calls", "exec_calls"
)  # fmt: skip
"""The system calls counted in every timed round, by kind (``syscalls.IN_ROUND``)."""
"""What a round's durability is made of; tables show them where some backend of the table
had them counted (root; a device for flushes)."""


def metric(name: str) -> MetricDef:
    """The definition of ``name``; a name the registry does not know is a programming error."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"metric {name!r} is not in the registry ({', '.join(METRICS)})") from None


PERTURBATION_GOAL = 1.05
"""The most the harness may move a timing: its median over a bare loop's of the same calls
(``vcsbench.bench.perturbation``); reports warn beyond it."""
