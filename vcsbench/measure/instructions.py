"""Instructions executed in user space by one round's operation, counted by valgrind's
callgrind: the one count of CPU work this machine type offers (its VM has no hardware
counters), and one that repeats whatever else the machine runs.

A process that counts runs under ``valgrind --tool=callgrind`` (:func:`command`) with its
children traced too (a CLI backend's ``git``, ``svnadmin``: each counted whole, from its
start to its exit). Around each round's operation it calls the small library
:file:`counter.c` (compiled once a machine with the machine's C compiler and valgrind's
own header, cached): the counts so far zeroed as the round starts, written as a part of
their own as it ends. :func:`read_counts` reads those parts, bounded, and adds each
round's children to it (every child's file is named by the round it started in:
``%q{VCSBENCH_COUNT_ROUND}``). Outside valgrind the library's calls do nothing.

Under valgrind a process runs 20-50x slower: counting is never done in a timed round,
only in counted rounds of their own (:mod:`vcsbench.bench.counted`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from vcsbench.process import COUNT_ROUND

SOURCE = Path(__file__).with_name("counter.c")
ROUND_VAR = COUNT_ROUND
"""The environment variable naming the round a process (and each child it starts) is
counted for: in the name of every file callgrind writes."""
MAIN = "main"
"""The counting process's own files: one part per round, in the order they ran."""
MAX_FILES = 20_000
"""The most files a counted pass's directory may hold: more is refused, not read."""
MAX_HEAD = 64 * 1024
"""How much of each file is read for its totals (callgrind writes them in its header
and at its end: the end's ``totals:`` line is read from the last bytes)."""


class Unavailable(Exception):
    """Instructions cannot be counted here; the message says why and what would do it."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vcsbench" / "counter"


def library() -> Path:
    """The counter's library, compiled now if this machine has none of this source yet;
    :class:`Unavailable` naming what is missing."""
    if shutil.which("valgrind") is None:
        raise Unavailable("valgrind is not installed (apt-get install valgrind)")
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = cache_dir() / f"counter-{digest}.so"
    if target.is_file():
        return target
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise Unavailable("counting instructions needs a C compiler (apt-get install gcc)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as building:
        built = Path(building) / target.name
        done = subprocess.run(
            [compiler, "-O1", "-shared", "-fPIC", "-o", str(built), str(SOURCE)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise Unavailable(
                f"the counter's library did not compile ({last}); it needs valgrind's "
                "header valgrind/callgrind.h (apt-get install valgrind)"
            )
        os.replace(built, target)  # whole or not at all: two runs building it both end well
    return target


class Counter:
    """The calls a counting process makes around each round (nothing outside valgrind)."""

    def __init__(self, path: Path) -> None:
        self._lib = ctypes.CDLL(str(path))
        self._lib.vcsbench_spin.argtypes = [ctypes.c_ulong]
        self._instrumented = False

    @property
    def counting(self) -> bool:
        """Whether this process runs under valgrind."""
        return bool(self._lib.vcsbench_under_valgrind())

    def start(self, index: int) -> None:
        """Round ``index`` starts: the counts so far forgotten, its children named by it."""
        os.environ[ROUND_VAR] = str(index)
        if not self._instrumented:  # a no-op where the process was instrumented from its start
            self._lib.vcsbench_instrument()
            self._instrumented = True
        self._lib.vcsbench_round_start()

    def end(self) -> None:
        """The round ends: its counts written as its part (every round writes one, failed
        or not, so the parts stay in the rounds' order)."""
        self._lib.vcsbench_round_end()
        os.environ[ROUND_VAR] = MAIN

    def spin(self, turns: int) -> None:
        """Execute ``2 * turns`` instructions, and a few more for the call (known work)."""
        self._lib.vcsbench_spin(turns)


def command(out_dir: Path, children: bool = True) -> list[str]:
    """What a counting process is started under: callgrind, its children too, each file
    named by the round it was started in (and its process id), its messages in a log.
    ``children`` False (its rounds start no process): instrumented from its first round
    on, not from its start -- an interpreter's start and imports run 4x faster, uncounted
    either way."""
    return [
        "valgrind",
        "--tool=callgrind",
        "--trace-children=yes",
        *([] if children else ["--instr-atstart=no"]),
        f"--callgrind-out-file={out_dir}/cg.%q{{{ROUND_VAR}}}.%p",
        f"--log-file={out_dir}/valgrind.%p.log",
        "--dump-line=no",
        "--dump-instr=no",
        "--compress-strings=no",
        "--compress-pos=no",
    ]


def _totals(path: Path) -> int:
    """A file's ``totals:`` (or ``summary:``) line, read from its last bytes; a file
    without one is refused."""
    size = path.stat().st_size
    with path.open("rb") as f:
        f.seek(max(0, size - MAX_HEAD))
        tail = f.read(MAX_HEAD).decode("ascii", "replace")
    for line in reversed(tail.splitlines()):
        key, _, value = line.partition(":")
        if key in ("totals", "summary"):
            first = value.split()
            if first and first[0].isdigit() and len(first[0]) <= 19:
                return int(first[0])
    raise ValueError(f"{path.name} has no totals line")


def read_counts(out_dir: Path, pid: int, rounds: int) -> list[int | None]:
    """Each round's instructions: the counting process's part for it, and every child
    started in it, whole. None for a round whose part is missing."""
    names = os.listdir(out_dir)
    if len(names) > MAX_FILES:
        raise ValueError(f"{out_dir} holds {len(names):,} files, over {MAX_FILES:,}")
    found: list[int | None] = [None] * rounds
    children = [0] * rounds
    for name in names:
        parts = name.split(".")
        if len(parts) < 3 or parts[0] != "cg" or name.endswith(".log"):
            continue
        label, proc = parts[1], parts[2]
        if label == MAIN and proc == str(pid) and len(parts) == 4 and parts[3].isdigit():
            index = int(parts[3]) - 1  # part N is the N-th dump: round N-1
            if 0 <= index < rounds:
                found[index] = _totals(out_dir / name)
        elif label.isdigit() and int(label) < rounds and len(parts) == 3:
            children[int(label)] += _totals(out_dir / name)
    return [None if f is None else f + c for f, c in zip(found, children, strict=True)]
