"""The benchmarks of one pytest session: each run in its sandbox, measured, kept.

Timing: vcsbench runs its own round loop (``rounds.BenchmarkRun``) and then hands the
successful rounds' wall times to pytest-benchmark, so that pytest-benchmark's statistics,
``--benchmark-compare`` and ``--benchmark-save`` see exactly vcsbench's one clock, and no
failed round. pytest-benchmark has no public call for that; :func:`feed_pytest_benchmark`
does what its own ``pedantic`` does with the samples, and a test pins it.
"""

from __future__ import annotations

import cProfile
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest

from vcsbench import process
from vcsbench.backends import Backend, Variant
from vcsbench.bench.envs import environment_of
from vcsbench.bench.progress import ProgressDisplay, duration
from vcsbench.bench.record import FAILED, WRITTEN, preset_of, result_path, write_results
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.bench.rules import rules_of
from vcsbench.bench.selection import Selection, case_id
from vcsbench.errors import Refusal, VcsbenchError
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import FsSpec, Sandbox
from vcsbench.sandbox.spec import parse_fs_spec
from vcsbench.workload.operation import Operation
from vcsbench.workload.operations import operation_class
from vcsbench.workload.seeded import REPLAY_PROGRESS, SHARED_SEEDS

COUNT = pytest.StashKey[int]()
ROUNDS_BESIDE = 50
"""Rounds per block of the perturbation measured beside a benchmark (--perturbation on)."""


def feed_pytest_benchmark(benchmark: Any, wall_s: list[float]) -> None:
    """Give pytest-benchmark these samples as its statistics, as its ``pedantic`` would.

    pytest-benchmark (5.x) keeps a benchmark's samples in the ``Metadata`` that
    ``_make_stats`` registers with its session, and marks the fixture used by ``_mode``.
    """
    benchmark._mode = "vcsbench (its own round loop)"
    stats = benchmark._make_stats(1)
    for value in wall_s:
        stats.update(value)


class VcsSession:
    """Runs the benchmarks of one pytest session."""

    def __init__(self, config: pytest.Config, selection: Selection) -> None:
        self.config = config
        self.selection = selection
        self._session_sandboxes: dict[str, Sandbox] = {}
        self._stack = ExitStack()
        self._serial = 0
        self.started = time.perf_counter()
        self.count = config.stash.get(COUNT, 0) or len(selection.cases())
        self._groups: dict[tuple[str, ...], dict[str, Benchmark]] = {}
        self._failed_groups: dict[tuple[str, ...], str] = {}
        """Interleaved groups run so far: (op, payload, its members) to each member's
        result not yet kept by its own item."""
        self._perturbed: dict[str, dict[str, object]] = {}
        """--perturbation once: the check made beside a backend's first benchmark, by
        variant, recorded in each later benchmark of it too."""
        self.ops_wall_s = 0.0
        self._seeds_kept = False

    def close(self) -> None:
        self._stack.close()

    def _keep_seeds(self) -> None:
        """Once per run, before its first benchmark: a directory of the run's own where a
        seed one benchmark built (a replayed history, a repository of N revisions) waits
        for the next benchmark of the same backend variant, named to the workers in the
        environment (any value found there is replaced). A marked ``dir:`` sandbox in the
        temp directory: removed with the run, and by ``cleanup`` after a SIGKILL."""
        if self._seeds_kept:
            return
        self._seeds_kept = True
        os.environ.pop(SHARED_SEEDS, None)
        if not any(operation_class(op).builds_seed for op in self.selection.ops):
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
        built_in: tuple[str, str] | None = None,
    ) -> Benchmark | None:
        """Run, record and keep one benchmark of ``make(backend)``'s operation; the
        result (None with --benchmark-disable). ``built_in``: the built-in operation and
        payload it is, which a ``version=`` variant's environment makes again."""
        selection = self.selection
        availability = backend.availability
        if not availability.ok:
            pytest.skip(f"backend {backend.name} unavailable: {availability.reason}")
        self._serial += 1
        benchmark._mode = "vcsbench"  # used, whatever follows: never "fixture was not used"
        label = f"{backend.text} {op} {payload} {fs.text}"
        benchmark.group = f"{op} {payload} {fs.text}"
        # The case's objects (a Variant, an FsSpec) as the text they were named by, for
        # pytest-benchmark's JSON.
        benchmark.params = {
            key: getattr(value, "text", value) for key, value in (benchmark.params or {}).items()
        }
        # pytest-benchmark's --benchmark-disable: one verified round, as a check that the
        # benchmark works (no figures are kept).
        rules = rules_of(self.config)
        rounds = 1 if benchmark.disabled else rules.rounds(repos or selection.repos)
        if benchmark.disabled:
            benchmark._mode = "vcsbench (disabled: one verified round)"
        group = self._interleaved_group(backend, fs, op, payload, built_in)
        if group and not benchmark.disabled:
            return self._from_group(benchmark, backend, fs, op, payload, group, rounds)
        self._keep_seeds()
        display = ProgressDisplay(
            self.config, selection.progress, label, (self._serial, self.count, self.started)
        )
        REPLAY_PROGRESS[:] = [display]  # a seed's replay shows its progress too
        process.doing(label)
        try:
            with (
                self.sandbox(fs) as sandbox,
                selection.make_backend(backend) as vcs,
                ExitStack() as stack,
            ):
                assert sandbox.info is not None
                vcs.ready(sandbox.root)  # removed with the sandbox, recorded or mounted
                slug = re.sub(
                    r"[^A-Za-z0-9_.-]+", "_", f"{self._serial:03d}-{vcs.name}-{op}-{payload}"
                )
                run = BenchmarkRun(
                    operation=make(vcs),
                    sandbox=sandbox.info,
                    workdir=sandbox.root / slug,
                    rounds=rounds,
                    cache=selection.cache,
                    verify=selection.verify,
                    progress=display,
                    name=benchmark.name,
                    **selection.age_of(backend),
                    layout=selection.layout,
                    recycle=selection.recycle,
                    warmup=0 if benchmark.disabled else rules.warmup(rounds),
                    budget_s=None if benchmark.disabled else rules.max_time_s,
                    min_rounds=rules.budget_floor(rounds),
                    gc_off=rules.gc_off,
                    delay_ns=backend.delay_ns,
                    **self._environment(backend, vcs, sandbox, built_in),
                )
                server = self._serve(stack, backend, vcs, run, sandbox)
                perturbation: dict[str, object] | None = None
                if run.environment is not None:
                    perturbation = {
                        "label": label,
                        "error": "not measured: the rounds run in the variant's environment, "
                        "the check in this process",
                    }
                elif server is not None:
                    perturbation = {
                        "label": label,
                        "error": "not measured: the rounds reach their repositories through "
                        "the variant's server, a bare loop of the calls would not",
                    }
                elif not benchmark.disabled:
                    perturbation = self._perturbation(
                        lambda: make(vcs), sandbox, slug, (backend.text, label), rounds
                    )
                interrupted: KeyboardInterrupt | None = None
                try:
                    run.run_all()
                except KeyboardInterrupt as exc:
                    # Keep what finished: the rounds done so far are a partial benchmark.
                    interrupted = exc
                    process.doing(f"{label}, round {len(run.log) + 1} of {rounds}")
                    if not len(run.log):
                        raise
                # Measured and written before the sandbox comes down, with the stop
                # signals held: one that arrives now waits until the benchmark is kept.
                with process.signals_held():
                    result = run.finish(described(backend, vcs))
                    if perturbation is not None:
                        result.harness["perturbation"] = perturbation
                    if server is not None:
                        result.harness["server"] = server
                    built = environment_of(backend)
                    if built is not None:
                        result.harness["environment"] = built.describe()
                    if rules.describe(rounds):
                        result.harness["pytest_benchmark_rules"] = rules.describe(rounds)
                    result.harness["teardown_s"] = None
                    result.harness["teardown_note"] = (
                        "one sandbox for the session, torn down at its end"
                        if selection.fs_scope == "session"
                        else "the benchmark was interrupted; its sandbox came down after"
                    )
                    if not benchmark.disabled:
                        self._keep(benchmark, result)
                if rules.cprofile and benchmark.stats is not None and run.environment is None:
                    # pytest-benchmark's --benchmark-cprofile: one more round, profiled (its
                    # time is no sample), shown and saved by pytest-benchmark.
                    profile = cProfile.Profile()
                    run.aside("profile", 1, profile)
                    benchmark._save_cprofile(profile)
        except Refusal as exc:
            self._refuse(exc)
        except VcsbenchError as exc:
            failure = str(exc)
        else:
            failure = ""
        if failure:
            pytest.fail(failure, pytrace=False)
        if sandbox.teardown_s is not None and interrupted is None:
            result.harness["teardown_s"] = sandbox.teardown_s
            result.harness.pop("teardown_note")
            if not benchmark.disabled:
                self._amend(benchmark, result)
        if interrupted is not None:
            raise interrupted
        process.doing("")
        if result.errors:
            first = result.error_samples[0]
            cause = result.diagnosis or f"first, round {first.round}: {first.error}"
            pytest.fail(
                f"{result.errors} of {result.repos} operations failed ({cause})",
                pytrace=False,
            )
        return None if benchmark.disabled else result

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
        self, backend: Variant, fs: FsSpec, op: str, payload: str, built_in: object
    ) -> list[Member]:
        """The benchmarks run with this one in alternating blocks, or none: the variants
        of one filesystem (--interleave), and the filesystems of one run (several given,
        unless --interleave off) -- each such group one sandbox a filesystem, all up at
        once."""
        if built_in is None:
            return []
        selection = self.selection
        cases = [
            Member(b, f)
            for b, o, p, f in selection.cases()
            if o == op and p == payload and b.availability.ok
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

    def _from_group(
        self,
        benchmark: Any,
        backend: Variant,
        fs: FsSpec,
        op: str,
        payload: str,
        group: list[Member],
        rounds: int,
    ) -> Benchmark:
        """This case's benchmark of its interleaved group: the group runs (every member,
        in alternating blocks) when its first member's turn comes; each member's item
        keeps its own result."""
        key = (op, payload, *(m.text for m in group))
        mine = Member(backend, fs).text
        if key not in self._groups:
            self._groups[key] = {}
            named = (benchmark.name, case_id(backend, op, payload, fs))
            try:
                interrupted = self._run_group(named, op, payload, group, rounds, key)
            except Refusal as exc:
                self._refuse(exc)
            except VcsbenchError as exc:  # each member's item fails with it
                where = f"{op} {payload}: {', '.join(m.text for m in group)}"
                self._failed_groups[key] = f"{exc} (in the interleaved group {where})"
                interrupted = None
            if interrupted is not None:
                # The group's other members have no pytest item left to keep them: they
                # go with the run's facts (as benchmarks without samples do), now.
                for text, other in self._groups[key].items():
                    if text != mine:
                        self.config.stash.setdefault(FAILED, []).append(other)
                self._keep(benchmark, self._groups[key].pop(mine))
                raise interrupted
        if key in self._failed_groups:
            pytest.fail(self._failed_groups[key], pytrace=False)
        result = self._groups[key].pop(mine)
        self._keep(benchmark, result)
        return result

    def _run_group(
        self,
        named: tuple[str, str],
        op: str,
        payload: str,
        group: list[Member],
        rounds: int,
        key: tuple[str, ...],
    ) -> KeyboardInterrupt | None:
        """Every member of the group in ``blocks`` blocks of rounds, each filesystem's in
        a sandbox of its own (all up for the group's whole run): in each block every
        member runs its next share of rounds, in an order drawn anew (seeded), so drift in
        the machine reaches all of them alike."""
        from vcsbench.bench.interleave import Block, describe_blocks, targets
        from vcsbench.workload.operations import make_operation
        from vcsbench.workload.payloads import load_payload

        selection = self.selection
        self._keep_seeds()
        blocks = selection.blocks_for(rounds)
        texts = [m.text for m in group]
        label = f"{op} {payload}: {len(group)} interleaved in {blocks} blocks"
        process.doing(label)
        progress = ProgressDisplay(
            self.config, selection.progress, label, (self._serial, self.count, self.started)
        )
        seed = random.SystemRandom().getrandbits(32)
        # Every member's rounds in a worker process of its own, all on one CPU: a
        # process's kind (its heap, what it imported) and its core are then the same for
        # each, and the blocks compare the libraries (or filesystems) alone.
        cpu = max(os.sched_getaffinity(0))
        order = random.Random(seed)
        started = time.perf_counter()
        done: list[Block] = []
        interrupted: KeyboardInterrupt | None = None
        with ExitStack() as stack:
            sandboxes: dict[str, Sandbox] = {}
            for member in group:
                if member.fs.text not in sandboxes:
                    sandboxes[member.fs.text] = stack.enter_context(self.sandbox(member.fs))
            runs: dict[str, tuple[BenchmarkRun, Backend]] = {}
            servers: dict[str, dict[str, object] | None] = {}
            for index, member in enumerate(group):
                variant, sandbox = member.variant, sandboxes[member.fs.text]
                assert sandbox.info is not None
                vcs = stack.enter_context(selection.make_backend(variant))
                vcs.ready(sandbox.root)
                slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{self._serial:03d}-{index}-{op}")
                run = BenchmarkRun(
                    operation=make_operation(op, vcs, load_payload(payload)),
                    sandbox=sandbox.info,
                    workdir=sandbox.root / slug,
                    rounds=rounds,
                    cache=selection.cache,
                    verify=selection.verify,
                    name=named[0].replace(named[1], case_id(variant, op, payload, member.fs)),
                    **selection.age_of(variant),
                    layout=selection.layout,
                    recycle=selection.recycle,
                    delay_ns=variant.delay_ns,
                    **self._environment(variant, vcs, sandbox, (op, payload), worker=True, cpu=cpu),
                )
                servers[member.text] = self._serve(stack, variant, vcs, run, sandbox)
                runs[member.text] = (run, vcs)
            try:
                turn = list(texts)
                for number, goal in enumerate(targets(rounds, blocks)):
                    # a drawn order, then its reverse: each member leads as often as it
                    # trails, over each pair of blocks
                    turn = order.sample(texts, len(texts)) if number % 2 == 0 else turn[::-1]
                    for text in turn:
                        run = runs[text][0]
                        first = len(run.log)
                        run.run_to(goal)
                        done.append(Block(number, text, first, len(run.log)))
                    progress(
                        sum(len(r.log) for r, _ in runs.values()),
                        rounds * len(runs),
                        time.perf_counter() - started,
                    )
            except KeyboardInterrupt as exc:
                interrupted = exc
            finally:
                for run, _ in runs.values():
                    run.stop_workers()
            with process.signals_held():
                for member in group:
                    run, vcs = runs[member.text]
                    result = run.finish(described(member.variant, vcs))
                    result.harness["interleaved"] = {
                        **describe_blocks(member.text, texts, blocks, done, run),
                        "order_seed": seed,
                        "cpu": cpu,
                        "process": "each member's rounds in a worker process of its own "
                        "(its environment's interpreter, or this one), all pinned to that CPU"
                        + (
                            "; each filesystem a sandbox of its own, all up at once"
                            if len(sandboxes) > 1
                            else ""
                        ),
                    }
                    built = environment_of(member.variant)
                    if built is not None:
                        result.harness["environment"] = built.describe()
                    if servers[member.text] is not None:
                        result.harness["server"] = servers[member.text]
                    result.harness["teardown_s"] = None
                    result.harness["teardown_note"] = (
                        "the group's sandboxes came down after its members were kept"
                    )
                    self._groups[key][member.text] = result
        return interrupted

    def _serve(
        self,
        stack: ExitStack,
        variant: Variant,
        vcs: Backend,
        run: BenchmarkRun,
        sandbox: Sandbox,
    ) -> dict[str, object] | None:
        """A remote variant's server over ``run``'s repositories until ``stack`` closes,
        the backend (and a worker's) told where it is; what the result records of it."""
        from vcsbench.bench.remote import served

        serving = stack.enter_context(served(variant, vcs, run.workdir, sandbox))
        if serving is None:
            return None
        described_server, run.owner = serving
        if run.worker_spec is not None:
            assert vcs.remote is not None
            run.worker_spec["reach"] = vcs.remote.to_json()
            run.worker_spec["owner"] = run.owner
        return described_server

    def _environment(
        self,
        backend: Variant,
        vcs: Backend,
        sandbox: Sandbox,
        built_in: tuple[str, str] | None,
        worker: bool = False,
        cpu: int | None = None,
    ) -> dict[str, Any]:
        """For a ``version=`` variant: the environment's interpreter its rounds run in and
        what its worker makes there (the same operation, payload and options); with
        ``worker``, any variant in a worker process (of this interpreter where it names no
        release), pinned to ``cpu`` if given: the variants of an interleaved group run
        alike."""
        found = environment_of(backend)
        if found is None and not worker:
            return {}
        if built_in is None:
            raise Refusal(
                f"{backend.text}: a version= variant runs vcsbench's built-in operations "
                "(vcsbench.operation(...)); a benchmark of your own runs on this process's "
                "library"
            )
        op, payload = built_in
        return {
            "environment": found.python if found is not None else Path(sys.executable),
            "worker_spec": {
                "cpu": cpu,
                "variant": backend.plain.text,
                "options": dict(vcs.options),
                "op": op,
                "payload": payload,
                "temp_root": str(sandbox.root),
                "delay_ns": backend.delay_ns,
            },
        }

    def _perturbation(
        self,
        make: Callable[[], Operation],
        sandbox: Sandbox,
        slug: str,
        named: tuple[str, str],
        rounds: int,
    ) -> dict[str, object] | None:
        """The harness timed against a bare loop of the same calls (``--perturbation``),
        before the benchmark's rounds (no sampler, no timed round yet) in its sandbox:
        for every benchmark (on, at most 50 rounds a block), or beside the first of each
        backend variant within about a second (once, the default; its later benchmarks
        record that figure and where it was measured). A check that fails is recorded
        as such; the benchmark's own rounds say what is wrong."""
        from vcsbench.bench.perturbation import BLOCKS_BESIDE, BUDGET_ONCE_S, measure

        mode = self.selection.perturbation
        variant, label = named
        if mode == "off":
            return None
        if mode == "once" and variant in self._perturbed:
            return {**self._perturbed[variant], "once": True}
        assert sandbox.info is not None
        try:
            found = measure(
                make,
                sandbox.info,
                sandbox.root / f"{slug}-perturbation",
                label,
                blocks=BLOCKS_BESIDE,
                rounds=max(1, min(ROUNDS_BESIDE, rounds)),
                budget_s=BUDGET_ONCE_S if mode == "once" else None,
            ).describe()
        except Exception as exc:  # a full sandbox, a failing backend: its rounds will tell
            found = {"label": label, "error": f"{type(exc).__name__}: {exc}"}
        if mode == "once":
            self._perturbed[variant] = found
            found = {**found, "once": True}
        return found

    def _amend(self, benchmark: Any, result: Benchmark) -> None:
        """Write a kept benchmark again with what was learnt after it was kept (how long
        its sandbox took to come down)."""
        if benchmark.stats is not None and "vcsbench" in benchmark.extra_info:
            benchmark.extra_info["vcsbench"]["harness"] = result.harness
            write_results(self.config, amend=benchmark.stats)
        else:  # every round failed: it is in the run's facts, written again
            write_results(self.config)

    def _keep(self, benchmark: Any, result: Benchmark) -> None:
        """Put the benchmark in the results and write the result file at once."""
        self.ops_wall_s += float(result.harness.get("ops_wall_s") or 0.0)
        benchmark.extra_info["vcsbench"] = result.to_json()
        ok_walls = result.samples_s
        if ok_walls:
            feed_pytest_benchmark(benchmark, ok_walls)
        else:
            # No sample to give pytest-benchmark; the benchmark and its errors are
            # kept in vcsbench's own part of the file.
            benchmark._mode = "vcsbench (every round failed)"
            self.config.stash.setdefault(FAILED, []).append(result)
        write_results(self.config)


@dataclass(frozen=True)
class Member:
    """One benchmark of an interleaved group: a backend variant on a filesystem."""

    variant: Variant
    fs: FsSpec

    @property
    def text(self) -> str:
        return f"{self.variant.text} on {self.fs.text}"


def described(variant: Variant, vcs: Backend) -> dict[str, object]:
    """What the result records of the backend, labelled by the variant's own name where
    that says more than the backend's options (``version=``, ``copy=``); a worker's
    own description is recorded under this name too (:meth:`BenchmarkRun.finish`)."""
    found = vcs.describe()
    if variant.names_its_own:
        found["variant"] = variant.text
    return found


SESSION = pytest.StashKey[VcsSession]()


def closing_line(terminalreporter: Any, config: pytest.Config) -> None:
    """The closing line: wall time, and how much of it the timed operations were."""
    session = config.stash.get(SESSION, None)
    if session is None or not session._serial:
        return
    wall = time.perf_counter() - session.started
    share = 100 * session.ops_wall_s / wall if wall > 0 else 0.0
    terminalreporter.write_line(
        f"vcsbench: {session._serial} benchmark(s) in {duration(wall)}; timed operations "
        f"{session.ops_wall_s:,.1f} s ({share:.0f}%), the rest set-up, probes, verification"
    )
