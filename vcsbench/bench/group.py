"""One group of benchmarks, run: the one run path every benchmark takes.

A group is one benchmark, or several that run together in alternating blocks -- the
variants of one benchmark (``--interleave``), the filesystems of one run (several
``--fs``). Each member is a backend variant on a filesystem, with its sandbox (one a
filesystem, all up for the group's whole run), its :class:`~vcsbench.bench.plan.RoundPlan`
(built once, from the run's options) and its :class:`~vcsbench.bench.rounds.BenchmarkRun`.
Where the rounds run is decided here once per member (:meth:`GroupRun.placement`): a
group of one in this process (or, for a ``version=`` variant, in a worker of its
environment's interpreter); a group of several in a worker process each, all pinned to
one CPU, so that each member's process is of the same kind. The blocks then run in an
order drawn for each pair of blocks and reversed for its second (the seed recorded):
every member leads as often as it trails.
"""

from __future__ import annotations

import cProfile
import os
import random
import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, replace
from typing import Protocol

import pytest

from vcsbench import process
from vcsbench.backends import Backend, Variant
from vcsbench.bench.beside import perturbation_beside, serve
from vcsbench.bench.cases import Case
from vcsbench.bench.envs import environment_of
from vcsbench.bench.harness import Beside
from vcsbench.bench.interleave import Block, Blocks, describe_blocks, targets
from vcsbench.bench.plan import RoundPlan
from vcsbench.bench.planted import Planted
from vcsbench.bench.progress import ProgressDisplay
from vcsbench.bench.rounds import BenchmarkRun
from vcsbench.bench.rules import RoundRules
from vcsbench.bench.selection import Selection
from vcsbench.bench.where import counting_of, worker_of
from vcsbench.results.model import Benchmark
from vcsbench.sandbox import FsSpec, Sandbox
from vcsbench.workload.operation import Operation
from vcsbench.workload.operations import OperationSpec
from vcsbench.workload.seeds import REPLAY_PROGRESS


class Host(Protocol):
    """What a group needs of the session that runs it (:class:`~vcsbench.bench.session.
    VcsSession`): the run's selection and pytest config, its count of benchmarks, its
    sandboxes and shared seeds, the harness checks made once per variant, and where the
    asking item's result is kept as soon as it is measured."""

    selection: Selection
    config: pytest.Config
    count: int
    started: float
    serial: int
    """The benchmarks begun so far: names each one's working directory."""
    perturbed: dict[str, dict[str, object]]
    """The harness checks made once per variant."""

    def sandbox(self, spec: FsSpec) -> AbstractContextManager[Sandbox]: ...

    def keep_seeds(self) -> None: ...

    def keep_early(self, result: Benchmark, disabled: bool) -> None: ...

    def profiled(self, profile: cProfile.Profile) -> None: ...


@dataclass(frozen=True)
class Member:
    """One benchmark of a group: a backend variant on a filesystem; and its own
    operation where the group's members differ by it (the commands ``vcsbench time``
    sets against each other), else the group's."""

    variant: Variant
    fs: FsSpec
    spec: OperationSpec | None = None

    @property
    def text(self) -> str:
        own = f" {self.spec.text}" if self.spec is not None else ""
        return f"{self.variant.text}{own} on {self.fs.text}"


@dataclass
class Outcome:
    """What a group's run left: each member's result, the one that was interrupted."""

    results: dict[str, Benchmark]
    interrupted: KeyboardInterrupt | None
    teardown_s: float | None
    """The group's sandboxes' teardown (the sum; None where one was not timed)."""


class GroupRun:
    """Runs one group of the session: ``mine`` is the member whose pytest item asked
    (a group runs when its first member's turn comes)."""

    def __init__(
        self,
        session: Host,
        group: list[Member],
        mine: Member,
        op: str,
        payload: str,
        make: Callable[[Backend], Operation] | None,
        built_in: tuple[OperationSpec, str] | None,
        plan: RoundPlan,
        rules: RoundRules,
        named: tuple[str, str],
        disabled: bool,
    ) -> None:
        self.session = session
        self.group = group
        self.mine = mine
        self.op = op
        self.payload = payload
        self.make = make
        self.built_in = built_in
        self.plan = plan
        self.rules = rules
        self.named = named
        self.disabled = disabled
        self.alone = len(group) == 1
        ops = list(dict.fromkeys(self.op_of(m) for m in group))
        self.what = op if len(ops) == 1 else f"{len(ops)} commands"
        """What the group runs, for its progress: its operation, or how many commands."""
        self._kept_early = False
        """The asking item's result is kept (it is, once, as soon as it is measured)."""

    # -- what each member runs -----------------------------------------------------------

    def op_of(self, member: Member) -> str:
        """The member's operation as results name it."""
        return member.spec.text if member.spec is not None else self.op

    def built_in_of(self, member: Member) -> tuple[OperationSpec, str] | None:
        """The member's operation and payload, which a worker makes again."""
        if member.spec is not None:
            return member.spec, self.payload
        return self.built_in

    def operation(self, member: Member, vcs: Backend) -> Operation:
        if member == self.mine and self.make is not None:
            return self.make(vcs)
        from vcsbench.workload.payloads import load_payload

        built_in = self.built_in_of(member)
        assert built_in is not None  # a group of several is of built-in operations
        return built_in[0].make(vcs, load_payload(self.payload))

    def member_plan(self, member: Member) -> RoundPlan:
        """The plan with the member's own repositories present first and its delay."""
        selection = self.session.selection
        age = selection.age_of(member.variant)
        return replace(
            self.plan,
            age=age["age"],
            population=age["population"],
            delay_ns=member.variant.delay_ns,
            planted=Planted(*member.variant.planted),
        )

    # -- the run -------------------------------------------------------------------------

    def run(self) -> Outcome:
        session, selection = self.session, self.session.selection
        session.keep_seeds()
        blocks = 1 if self.alone else selection.blocks_for(self.plan.rounds)
        texts = [m.text for m in self.group]
        mine = self.mine
        label = (
            f"{mine.variant.text} {self.op} {self.payload} {mine.fs.text}"
            if self.alone
            else f"{self.what} {self.payload}: {len(self.group)} interleaved in {blocks} blocks"
        )
        process.doing(label)
        display = ProgressDisplay(
            session.config,
            selection.progress,
            label,
            (session.serial, session.count, session.started),
            len(self.group),
        )
        REPLAY_PROGRESS[:] = [display]  # a seed's replay shows its progress too
        seed = random.SystemRandom().getrandbits(32)
        cpu = max(os.sched_getaffinity(0))
        order = random.Random(seed)
        done: list[Block] = []
        planned = Blocks(blocks, seed, cpu, done)
        interrupted: KeyboardInterrupt | None = None
        results: dict[str, Benchmark] = {}
        sandboxes: dict[str, Sandbox] = {}
        with ExitStack() as stack:
            for member in self.group:
                if member.fs.text not in sandboxes:
                    sandboxes[member.fs.text] = stack.enter_context(session.sandbox(member.fs))
            runs: dict[str, tuple[BenchmarkRun, Backend]] = {}
            for index, member in enumerate(self.group):
                runs[member.text] = self._prepare(
                    stack, index, member, sandboxes[member.fs.text], cpu, display
                )
                # whatever ends the group (a worker that failed, a bug), its workers and
                # samplers end with it, before its sandbox comes down
                stack.callback(runs[member.text][0].abandon)
            # the rounds' pace from here: the members' servers and proxies are up (a
            # distance study's group of 12 took half a minute to that)
            started = time.perf_counter()
            try:
                turn = list(texts)
                for number, goal in enumerate(targets(self.plan.rounds, blocks)):
                    # a drawn order, then its reverse: each member leads as often as it
                    # trails, over each pair of blocks
                    turn = order.sample(texts, len(texts)) if number % 2 == 0 else turn[::-1]
                    for text in turn:
                        run = runs[text][0]
                        first = len(run.log)
                        run.run_to(goal)
                        done.append(Block(number, text, first, len(run.log)))
                    if not self.alone:
                        display(
                            sum(len(r.log) for r, _ in runs.values()),
                            self.plan.rounds * len(runs),
                            time.perf_counter() - started,
                        )
            except KeyboardInterrupt as exc:
                # Keep what finished: the rounds done so far are partial benchmarks.
                interrupted = exc

            if interrupted is None:  # untimed, outside the hold: a stop may land here
                try:
                    for run, _ in runs.values():
                        run.stop_workers()
                        run.count()
                        run.maintain()
                except KeyboardInterrupt as exc:
                    interrupted = exc
            # Measured and kept before the sandboxes come down, with the stop signals
            # held: one that arrives now waits until the benchmarks are kept. One that
            # lands before the hold takes (it was seen to, after the last round) is
            # caught, and the keeping goes on.
            kept = False
            while not kept:
                try:
                    kept = self._keep(runs, results, interrupted, planned, len(sandboxes))
                except KeyboardInterrupt as exc:
                    interrupted = interrupted or exc
                    continue
                if not kept:
                    assert interrupted is not None
                    raise interrupted
            profiled = self.alone and self.rules.cprofile and interrupted is None
            if profiled and runs[mine.text][0].environment is None:
                # pytest-benchmark's --benchmark-cprofile: one more round, profiled (its
                # time is no sample), shown and saved by pytest-benchmark.
                profile = cProfile.Profile()
                runs[mine.text][0].loop.aside("profile", 1, profile)
                session.profiled(profile)
        times = [s.teardown_s for s in sandboxes.values()]
        teardown = None if None in times else sum(t for t in times if t is not None)
        return Outcome(results, interrupted, teardown)

    def _keep(
        self,
        runs: dict[str, tuple[BenchmarkRun, Backend]],
        results: dict[str, Benchmark],
        interrupted: KeyboardInterrupt | None,
        blocks: Blocks,
        filesystems: int,
    ) -> bool:
        """Stop the workers, then measure and keep each member not kept yet, with the stop
        signals held (False: nothing to keep, interrupted before any round). Called again
        after a signal that landed before the hold: what was kept stays kept. ``blocks``:
        the group's blocks, planned and done."""
        with process.signals_held():
            for run, _ in runs.values():
                run.stop_workers()
            if interrupted is not None and not any(len(r.log) for r, _ in runs.values()):
                return False
            texts = [m.text for m in self.group]
            for member in self.group:
                if member.text in results:
                    continue
                run, vcs = runs[member.text]
                result = run.finish(described(member.variant, vcs))
                harness = result.harness
                if not self.alone:
                    where = (
                        "each member's rounds in a worker process of its own (its "
                        "environment's interpreter, or this one), all pinned to that CPU"
                    )
                    if filesystems > 1:
                        where += "; each filesystem a sandbox of its own, all up at once"
                    harness.interleaved = describe_blocks(member.text, texts, blocks, run, where)
                harness.teardown_s = None
                harness.teardown_note = self._teardown_note(interrupted)
                results[member.text] = result
            if not self._kept_early:  # once: a signal held till now lands as the hold ends
                self._kept_early = True
                self.session.keep_early(results[self.mine.text], self.disabled)
            return True

    def _teardown_note(self, interrupted: KeyboardInterrupt | None) -> str:
        if self.session.selection.fs_scope == "session":
            return "one sandbox for the session, torn down at its end"
        if interrupted is not None:
            return "the benchmark was interrupted; its sandbox came down after"
        return "the sandbox came down after the benchmark was kept"

    def _prepare(
        self,
        stack: ExitStack,
        index: int,
        member: Member,
        sandbox: Sandbox,
        cpu: int,
        display: ProgressDisplay,
    ) -> tuple[BenchmarkRun, Backend]:
        """A member's backend, its run, its server where it has one, and what its result
        records beside the rounds (the server, the environment, the harness check, the
        pytest-benchmark rules)."""
        session = self.session
        assert sandbox.info is not None
        vcs = stack.enter_context(session.selection.make_backend(member.variant))
        vcs.ready(sandbox.root)  # removed with the sandbox, recorded or mounted
        slug = (
            f"{session.serial:03d}-{vcs.name}-{self.op}-{self.payload}"
            if self.alone
            else f"{session.serial:03d}-{index}-{self.op_of(member)}"
        )
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", slug)
        environment, worker = worker_of(
            member.variant, vcs, sandbox.root, self.built_in_of(member), None if self.alone else cpu
        )
        name = self.named[0]
        if member != self.mine:
            own = Case(member.variant, self.op_of(member), self.payload, member.fs).id
            name = name.replace(self.named[1], own)
        run = BenchmarkRun(
            operation=self.operation(member, vcs),
            sandbox=sandbox.info,
            workdir=sandbox.root / slug,
            plan=self.member_plan(member),
            progress=display if self.alone else None,
            name=name,
            environment=environment,
            worker=worker,
            counting=counting_of(
                member.variant, vcs, sandbox.root, self.built_in_of(member), self.plan
            ),
        )
        server = serve(stack, member.variant, vcs, run, sandbox)
        built = environment_of(member.variant)
        run.beside = Beside(
            server=server,
            environment=built.describe() if built is not None else None,
            pytest_benchmark_rules=self.rules.describe(self.plan.rounds) or None,
            perturbation=perturbation_beside(
                f"{member.variant.text} {self.op} {self.payload} {member.fs.text}",
                lambda: self.operation(member, vcs),
                member.variant.text,
                run,
                server,
                "off" if self.disabled else session.selection.perturbation,
                session.perturbed,
            )
            if self.alone
            else None,
        )
        return run, vcs


def described(variant: Variant, vcs: Backend) -> dict[str, object]:
    """What the result records of the backend, labelled by the variant's own name where
    that says more than the backend's options (``version=``, ``copy=``); a worker's
    own description is recorded under this name too (:meth:`BenchmarkRun.finish`)."""
    found = vcs.describe()
    if variant.names_its_own:
        found["variant"] = variant.text
    return found
