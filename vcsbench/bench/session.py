"""The benchmarks of one pytest session: each run in its sandbox, measured, kept.

Timing: vcsbench runs its own round loop (``rounds.BenchmarkRun``) and then hands the
successful rounds' wall times to pytest-benchmark, so that pytest-benchmark's statistics,
``--benchmark-compare`` and ``--benchmark-save`` see exactly vcsbench's one clock, and no
failed round (:mod:`vcsbench.bench.adapter`: pytest-benchmark has no public call for
that).
"""

from __future__ import annotations

import cProfile
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, NoReturn

import pytest

from vcsbench import process
from vcsbench.backends import Backend, Variant
from vcsbench.bench import adapter
from vcsbench.bench.cases import Case
from vcsbench.bench.group import GroupRun, Member, Outcome
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.policy import KeptPolicy
from vcsbench.bench.progress import duration
from vcsbench.bench.record import FAILED, WRITTEN, preset_of, result_path, write_results
from vcsbench.bench.rules import rules_of
from vcsbench.bench.selection import Selection
from vcsbench.errors import Refusal, VcsbenchError
from vcsbench.results import layout
from vcsbench.results.environment import history_by_name
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import FsSpec, Sandbox
from vcsbench.sandbox.spec import parse_fs_spec
from vcsbench.workload.operation import Operation
from vcsbench.workload.operations import OperationSpec
from vcsbench.workload.seeds import SHARED_SEEDS

COUNT = pytest.StashKey[int]()


class VcsSession:
    """Runs the benchmarks of one pytest session."""

    def __init__(self, config: pytest.Config, selection: Selection) -> None:
        self.config = config
        self.selection = selection
        self._session_sandboxes: dict[str, Sandbox] = {}
        self._stack = ExitStack()
        self.serial = 0
        self.started = time.perf_counter()
        self.count = config.stash.get(COUNT, 0) or len(selection.cases())
        self._groups: dict[tuple[str, ...], dict[str, Benchmark]] = {}
        self._failed_groups: dict[tuple[str, ...], str] = {}
        """Interleaved groups run so far: (op, payload, its members) to each member's
        result not yet kept by its own item."""
        self.perturbed: dict[str, dict[str, object]] = {}
        """--perturbation once: the check made beside a backend's first benchmark, by
        variant, recorded in each later benchmark of it too (:mod:`vcsbench.bench.group`)."""
        self.ops_wall_s = 0.0
        self._seeds_kept = False
        self._asking: Any = None
        """The pytest-benchmark fixture of the item whose group is running."""

    def close(self) -> None:
        self._stack.close()

    def keep_seeds(self) -> None:
        """Once per run, before its first benchmark: a directory of the run's own where a
        seed one benchmark built (a replayed history, a repository of N revisions) waits
        for the next benchmark of the same backend variant, named to the workers in the
        environment (any value found there is replaced). A marked ``dir:`` sandbox in the
        temp directory: removed with the run, and by ``cleanup`` after a SIGKILL."""
        if self._seeds_kept:
            return
        self._seeds_kept = True
        os.environ.pop(SHARED_SEEDS, None)
        if not any(op.builds_seed for op in self.selection.ops):
            return
        box = Sandbox(parse_fs_spec(f"dir:{tempfile.gettempdir()}"))
        box.counted = False  # not a sandbox the closing line counts: no benchmark ran in it
        self._stack.enter_context(box)
        os.environ[SHARED_SEEDS] = str(box.root)
        self._stack.callback(os.environ.pop, SHARED_SEEDS, None)

    @contextmanager
    def sandbox(self, spec: FsSpec) -> Iterator[Sandbox]:
        if self.selection.fs_scope == "session":
            if spec.text not in self._session_sandboxes:
                self._session_sandboxes[spec.text] = self._stack.enter_context(
                    Sandbox(spec, self.selection.image_dir)
                )
            yield self._session_sandboxes[spec.text]
            return
        with Sandbox(spec, self.selection.image_dir) as sandbox:
            yield sandbox

    def run_operation(
        self,
        benchmark: Any,
        backend: Variant,
        fs: FsSpec,
        op: str,
        payload: str,
        make: Callable[[Backend], Operation],
        repos: int | None = None,
        built_in: tuple[OperationSpec, str] | None = None,
    ) -> Benchmark | None:
        """Run, record and keep one benchmark of ``make(backend)``'s operation; the
        result (None with --benchmark-disable). ``built_in``: the built-in operation and
        payload it is, which a worker of another interpreter makes again. Every
        benchmark runs as a member of a group (:mod:`vcsbench.bench.group`): of itself
        alone, or of those it alternates with in blocks; the group runs when its first
        member's turn comes, and each member's item keeps its own result."""
        selection = self.selection
        availability = backend.availability
        if not availability.ok:
            pytest.skip(f"backend {backend.name} unavailable: {availability.reason}")
        self.serial += 1
        adapter.mark_used(benchmark, "vcsbench")  # used, whatever follows
        benchmark.group = history_by_name(f"{op} {payload} {fs.text}")  # no machine path
        # The case's objects (a Variant, an FsSpec) as the text they were named by, for
        # pytest-benchmark's JSON.
        benchmark.params = {
            key: getattr(value, "text", value) for key, value in (benchmark.params or {}).items()
        }
        # pytest-benchmark's --benchmark-disable: one verified round, as a check that the
        # benchmark works (no figures are kept).
        disabled = bool(benchmark.disabled)
        if disabled:
            adapter.mark_used(benchmark, "vcsbench (disabled: one verified round)")
        rules = rules_of(self.config)
        rounds = 1 if disabled else rules.rounds(repos or selection.repos)
        mine = Member(backend, fs)
        group = [] if disabled else self._interleaved_group(backend, fs, op, payload, built_in)
        if any(m.spec is not None for m in group):  # commands set against each other
            mine = next(
                m
                for m in group
                if (m.variant.text, m.fs.text, str(m.spec)) == (backend.text, fs.text, op)
            )
        group = group or [mine]
        shared_op = "" if mine.spec is not None else op  # the same key for every command
        key = (shared_op, payload, *(m.text for m in group))
        if key not in self._groups:
            plan = RoundPlan(
                rounds,
                cache=selection.cache,
                verify=selection.verify,
                kept=KeptPolicy(off=True) if disabled else selection.kept,
                layout=selection.layout,
                recycle=selection.recycle,
                warmup=0 if disabled else rules.warmup(rounds),
                budget_s=None if disabled else rules.max_time_s,
                min_rounds=rules.budget_floor(rounds),
                gc_off=rules.gc_off,
                counted=0 if disabled else selection.counted,
                counted_instructions=selection.counted_instructions,
            )
            named = (benchmark.name, Case(backend, op, payload, fs).id)
            runner = GroupRun(
                self, group, mine, op, payload, make, built_in, plan, rules, named, disabled
            )
            self._asking = benchmark
            self._groups[key] = {}
            try:
                outcome = runner.run()
            except Refusal as exc:
                self._refuse(exc)
            except BaseException as exc:  # each member's item fails with it
                where = (
                    f" (in the interleaved group {op} {payload}: "
                    f"{', '.join(m.text for m in group)})"
                    if len(group) > 1
                    else ""
                )
                if isinstance(exc, VcsbenchError):
                    self._failed_groups[key] = f"{exc}{where}"
                else:  # a bug: its traceback in this item, and named in the others
                    self._failed_groups[key] = f"{type(exc).__name__}: {exc}{where}"
                    raise
            else:
                return self._ran(benchmark, mine, key, outcome, disabled)
        if key in self._failed_groups:
            pytest.fail(self._failed_groups[key], pytrace=False)
        result = self._groups[key].pop(mine.text)
        self._keep(benchmark, result)
        return self._judged(result)

    def _ran(
        self, benchmark: Any, mine: Member, key: tuple[str, ...], outcome: Outcome, disabled: bool
    ) -> Benchmark | None:
        """After a group ran, for the item that ran it (its result already kept): the
        sandboxes' teardown recorded, the other members' results left for their items (or,
        interrupted, kept with the run's facts now), and its own judged."""
        result = outcome.results.pop(mine.text)
        if outcome.interrupted is None and outcome.teardown_s is not None:
            for each in (result, *outcome.results.values()):
                each.harness.teardown_s = outcome.teardown_s
                each.harness.teardown_note = ""
            if not disabled:
                self._amend(benchmark, result)
        self._groups[key] = outcome.results
        if outcome.interrupted is not None:
            # The group's other members have no pytest item left to keep them: they go
            # with the run's facts (as benchmarks without samples do), now.
            self.config.stash.setdefault(FAILED, []).extend(outcome.results.values())
            write_results(self.config)
            raise outcome.interrupted
        process.doing("")
        judged = self._judged(result)
        return None if disabled else judged

    @staticmethod
    def _judged(result: Benchmark) -> Benchmark:
        """The result, or the item failed where rounds failed (the result is kept)."""
        if result.errors:
            first = result.error_samples[0]
            cause = result.diagnosis or f"first, round {first.round}: {first.error}"
            pytest.fail(
                f"{result.errors} of {result.repos} operations failed ({cause})",
                pytrace=False,
            )
        return result

    def keep_early(self, result: Benchmark, disabled: bool) -> None:
        """The asking item's result, kept as soon as it is measured (before its sandbox
        comes down: an interrupt then loses nothing)."""
        if not disabled:
            self._keep(self._asking, result)

    def profiled(self, profile: cProfile.Profile) -> None:
        """pytest-benchmark's --benchmark-cprofile round, for the asking item."""
        if self._asking.stats is not None:
            adapter.save_profile(self._asking, profile)

    def _refuse(self, exc: Refusal) -> NoReturn:
        """Bad input found once a benchmark started: in pytest's door a failed benchmark, in
        one line; in vcsbench run's, refused as the command line refuses it (one line, exit
        2), by the command once pytest has stopped."""
        preset = preset_of(self.config)
        if preset is None:
            pytest.fail(str(exc), pytrace=False)
        kept = len(self.config.stash.get(WRITTEN, []))
        path = result_path(self.config)
        preset.refusal = str(exc) + (
            f" (the {kept} benchmark(s) finished before it are kept in {path})"
            if kept and path
            else ""
        )
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:  # pytest's own words for an exit would be a second line
            self.config.pluginmanager.unregister(reporter)
        pytest.exit(str(exc), returncode=2)

    def _interleaved_group(
        self,
        backend: Variant,
        fs: FsSpec,
        op: str,
        payload: str,
        built_in: tuple[OperationSpec, str] | None,
    ) -> list[Member]:
        """The benchmarks run with this one in alternating blocks, or none: the variants
        of one filesystem (--interleave), the filesystems of one run (several given,
        unless --interleave off) -- each such group one sandbox a filesystem, all up at
        once -- and the commands ``vcsbench time`` sets against each other."""
        if built_in is None:
            return []
        selection = self.selection
        commands = selection.interleaves_commands() and built_in[0].cls.user_command
        cases = [
            Member(b, f, o if commands else None)
            for b, o, p, f in selection.cases()
            if isinstance(o, OperationSpec)
            and (o.cls.user_command if commands else str(o) == op)
            and p == payload
            and b.availability.ok
        ]
        variants = selection.interleaves([m.variant for m in cases if m.fs.text == fs.text])
        filesystems = selection.interleaves_filesystems()
        group = [
            m
            for m in cases
            if (filesystems or m.fs.text == fs.text)
            and (variants or m.variant.text == backend.text)
        ]
        return group if len(group) > 1 else []

    def _amend(self, benchmark: Any, result: Benchmark) -> None:
        """Write a kept benchmark again with what was learnt after it was kept (how long
        its sandbox took to come down)."""
        if benchmark.stats is not None and layout.amend_benchmark(
            benchmark.extra_info, "harness", result.harness.to_json()
        ):
            write_results(self.config, amend=benchmark.stats)
        else:  # every round failed: it is in the run's facts, written again
            write_results(self.config)

    def _keep(self, benchmark: Any, result: Benchmark) -> None:
        """Put the benchmark in the results and write the result file at once."""
        self.ops_wall_s += result.harness.ops_wall_s or 0.0
        layout.put_benchmark(benchmark.extra_info, result.to_json())
        ok_walls = result.samples_s
        if ok_walls:
            adapter.feed(benchmark, ok_walls)
        else:
            # No sample to give pytest-benchmark; the benchmark and its errors are
            # kept in vcsbench's own part of the file.
            adapter.mark_used(benchmark, "vcsbench (every round failed)")
            self.config.stash.setdefault(FAILED, []).append(result)
        write_results(self.config)


SESSION = pytest.StashKey[VcsSession]()


def closing_line(terminalreporter: Any, config: pytest.Config) -> None:
    """The closing line: wall time, and how much of it the timed operations were."""
    session = config.stash.get(SESSION, None)
    if session is None or not session.serial:
        return
    wall = time.perf_counter() - session.started
    share = 100 * session.ops_wall_s / wall if wall > 0 else 0.0
    terminalreporter.write_line(
        f"vcsbench: {session.serial} benchmark(s) in {duration(wall)}; timed operations "
        f"{session.ops_wall_s:,.1f} s ({share:.0f}%), the rest set-up, probes, verification"
    )
