"""Populations: an aged sandbox of repositories that differ, as a course's do.

``--age term:students=S,assignments=A,commits=LO-HI[,seed=N][,content=PAYLOAD]`` fills the
sandbox with S × A repositories (MarkUs makes one per group and assignment), before the
measured rounds and among them. Repository *i*'s history has *c_i* commits, drawn
uniformly from LO..HI by a generator seeded with N (default 1), so every machine fills the
same population. Content (default ``submission``): with a payload of generated files, the
first commit is its files and each later one rewrites one to three of them (picked by the
same seed; each rewrite a line of its own at the top, the lines in another order), as a
student's next push does; with a ``history:`` payload, the first *c_i* commits of that
history, replayed.

Filling is untimed and made the way ``--age N`` is (:mod:`vcsbench.workload.age`): one
repository is built commit by commit through the backend, read at each length LO..HI as
it grows (its newest revision verified against what was committed: the files, or the
source's whole tree), and each repository of the population written as a copy of the one
of its length. Copies of one length are alike byte for byte, as many students' first
pushes of one assignment nearly are; no filesystem here shares their blocks. The result
records the spec, the commits' distribution and the bytes the population took.
"""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vcsbench.backends import Backend
from vcsbench.backends.changes import digest_tree, tree_differences
from vcsbench.backends.files import Files
from vcsbench.errors import Refusal, VcsbenchError
from vcsbench.measure.footprint import footprint
from vcsbench.sandbox.removal import remove_tree
from vcsbench.workload.history import HistoryPayload
from vcsbench.workload.payloads import Payload, load_payload
from vcsbench.workload.seeds import Seed

PREFIX = "term:"
MAX_REPOS = 10_000_000
MAX_COMMITS = 1000
MAX_SEED_BYTES = 2 << 30
"""What the population's seeds (one per history length, held in memory) may hold."""
DEFAULT_CONTENT = "submission"
KEYS = ("students", "assignments", "commits", "seed", "content")
USAGE = "term:students=S,assignments=A,commits=LO-HI[,seed=N][,content=PAYLOAD]"


@dataclass(frozen=True)
class Population:
    text: str
    students: int
    assignments: int
    low: int
    high: int
    seed: int = 1
    content: str = DEFAULT_CONTENT

    @property
    def repos(self) -> int:
        return self.students * self.assignments

    def commits(self) -> list[int]:
        """Each repository's number of commits, in the order the layout places them."""
        rng = random.Random(f"vcsbench-population-{self.seed}")
        return [rng.randint(self.low, self.high) for _ in range(self.repos)]


def is_population(text: str) -> bool:
    return text.startswith(PREFIX)


def parse_population(text: str) -> Population:
    """``term:students=S,assignments=A,commits=LO-HI[,seed=N][,content=PAYLOAD]``
    (``content`` last: a history's own options follow it)."""
    body = text[len(PREFIX) :]
    head, sep, content = body.partition("content=")
    fields: dict[str, str] = {"content": content if sep else DEFAULT_CONTENT}
    for pair in filter(None, head.split(",")):
        key, eq, value = pair.partition("=")
        if not eq or key not in KEYS:
            raise VcsbenchError(f"age {text!r}: {pair!r} is not one of {USAGE}")
        fields[key] = value
    missing = [k for k in ("students", "assignments", "commits") if k not in fields]
    if missing:
        raise VcsbenchError(f"age {text!r}: give {', '.join(missing)}; {USAGE}")

    def whole(key: str, value: str, most: int) -> int:
        if not value.isdigit() or not 1 <= int(value) <= most:
            raise VcsbenchError(
                f"age {text!r}: {key}={value!r} is not a whole number from 1 to {most:,}"
            )
        return int(value)

    students = whole("students", fields["students"], MAX_REPOS)
    assignments = whole("assignments", fields["assignments"], MAX_REPOS)
    low_text, dash, high_text = fields["commits"].partition("-")
    low = whole("commits", low_text, MAX_COMMITS)
    high = whole("commits", high_text, MAX_COMMITS) if dash else low
    if high < low:
        raise VcsbenchError(f"age {text!r}: commits={fields['commits']} runs backwards; LO-HI")
    if students * assignments > MAX_REPOS:
        raise VcsbenchError(
            f"age {text!r}: {students * assignments:,} repositories, more than {MAX_REPOS:,}"
        )
    seed = fields.get("seed", "1")
    if not seed.isdigit():
        raise VcsbenchError(f"age {text!r}: seed={seed!r} is not a whole number")
    payload = load_payload(fields["content"])  # a bad payload is refused here, in one line
    if isinstance(payload, HistoryPayload) and high > payload.revisions:
        raise VcsbenchError(
            f"age {text!r}: commits up to {high} from {payload.name}, which replays "
            f"{payload.revisions} (give commits=...-{payload.revisions} or fewer)"
        )
    return Population(text, students, assignments, low, high, int(seed), fields["content"])


def parse_age(text: str) -> tuple[int, Population | None]:
    """``--age`` of ``run`` and ``load`` alike: N repositories as created, or a population
    (their count, and what they are)."""
    if is_population(text):
        population = parse_population(text)
        return population.repos, population
    if not text.isdigit():
        raise VcsbenchError(
            f"age {text!r} is not a whole number >= 0 or a population "
            "(term:students=S,assignments=A,commits=LO-HI)"
        )
    return int(text), None


def rewrite(payload: Payload, commit: int, seed: int) -> Files:
    """Commit ``commit`` (2 and later) of a generated payload's population history: one to
    three of its files, each with a line of its own at the top and its lines in another
    order (what the generator draws is fixed by ``seed`` and ``commit``)."""
    rng = random.Random(f"vcsbench-population-{seed}-{commit}")
    names = sorted(payload.files)
    picked = rng.sample(names, min(len(names), rng.randint(1, 3)))
    files: dict[str, bytes] = {}
    for name in picked:
        lines = payload.files[name].split(b"\n")
        rng.shuffle(lines)
        files[name] = f"vcsbench population commit {commit}\n".encode() + b"\n".join(lines)
    return files


@dataclass
class Grown:
    """The seeds by history length, and what each takes on the disk."""

    seeds: dict[int, Seed]
    inodes: dict[int, int]
    allocated: dict[int, int]
    build_s: float = 0.0


def grow(
    backend: Backend, where: Path, scratch: Path, population: Population, *, kept: bool = False
) -> Grown:
    """Build the population's repository commit by commit, verified and read at each
    length from LO to HI; ``kept``: each length's read as a server keeps it (a copy put
    through the backend's own maintenance, ``Backend.keep``, and verified again)."""
    started = time.perf_counter()
    payload = load_payload(population.content)
    repo = where / "population"
    backend.create(repo)
    grown = Grown({}, {}, {})
    held = 0
    packed = where / "population-kept"

    def as_kept(check: Callable[[Path], list[str]], length: int) -> Path:
        """The repository as it is now, kept (a copy through the maintenance) and
        checked as the one it was copied from; the copy's path."""
        if not kept or type(backend).keep is Backend.keep:
            return repo
        remove_tree(packed)
        Seed.read(repo).copy_to(packed)
        backend.keep(packed)
        _refuse_if(check(packed), population, backend, length, " and kept")
        return packed

    def keep(length: int, check: Callable[[Path], list[str]]) -> None:
        nonlocal held
        source = as_kept(check, length)
        seed = Seed.held(source)  # the repository grows on: this length's copy kept
        held += sum(len(e.data) for e in seed.entries or ())
        if held > MAX_SEED_BYTES:
            raise Refusal(
                f"--age {population.text}: its repositories of {population.low} to {length} "
                f"commits hold {held:,} bytes, more than the {MAX_SEED_BYTES >> 30} GiB "
                "vcsbench keeps in memory to copy; give a smaller commits=LO-HI"
            )
        grown.seeds[length] = seed
        made = footprint(source)
        grown.inodes[length], grown.allocated[length] = made.inodes, made.allocated_bytes

    if isinstance(payload, HistoryPayload):
        with payload.source() as history:
            for length, change in enumerate(history.changes(), 1):
                backend.replay(repo, change, scratch)
                if length >= population.low:
                    want = digest_tree(history.tree(length - 1))

                    def same(at: Path, n: int = length, want: Any = want) -> list[str]:
                        return tree_differences(want, backend.tree(at, n))

                    _refuse_if(same(repo), population, backend, length)
                    keep(length, same)
                if length == population.high:
                    break
    else:
        files = dict(payload.files)
        for length in range(1, population.high + 1):
            written = files if length == 1 else rewrite(payload, length, population.seed)
            message = f"vcsbench population commit {length}"
            backend.commit(repo, written, message, scratch)
            files.update(written)
            if length >= population.low:
                held_files = dict(files)

                def holds(at: Path, held_files: Files = held_files) -> list[str]:
                    return backend.verify(at, held_files)

                _refuse_if(holds(repo), population, backend, length)
                keep(length, holds)
    remove_tree(packed)
    grown.build_s = time.perf_counter() - started
    return grown


def _refuse_if(
    problems: list[str], population: Population, backend: Backend, n: int, how: str = ""
) -> None:
    if problems:
        raise VcsbenchError(
            f"--age {population.text}: {backend.label}'s repository after {n} commits{how} "
            f"does not hold what was committed: {'; '.join(problems[:3])}"
        )


def describe(population: Population, counts: list[int], grown: Grown) -> dict[str, Any]:
    """What the result records of a population: the spec, how its commits and bytes are
    spread, and how it was made."""
    sizes = [grown.allocated[c] for c in counts]
    return {
        "spec": population.text,
        "students": population.students,
        "assignments": population.assignments,
        "content": population.content,
        "seed": population.seed,
        "commits": {
            "min": min(counts),
            "median": statistics.median(counts),
            "max": max(counts),
            "total": sum(counts),
        },
        "repos_by_commits": {str(c): n for c, n in sorted(Counter(counts).items())},
        "allocated_bytes": {
            "total": sum(sizes),
            "min": min(sizes),
            "median": statistics.median(sizes),
            "max": max(sizes),
        },
        "build_s": grown.build_s,
    }
