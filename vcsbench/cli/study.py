"""``vcsbench study``: a published study or a VCS's choices, re-run in one command."""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from pathlib import Path

from vcsbench.cli.command import Command
from vcsbench.cli.common import (
    add_selection,
    check_out,
    interrupted,
    out_path,
    selection_of,
    this_whole,
)
from vcsbench.errors import VcsbenchError, without_secrets
from vcsbench.results import Run
from vcsbench.results.io import beside
from vcsbench.results.model import Benchmark
from vcsbench.sandbox.spec import parse_fs_list, with_option
from vcsbench.sandbox.throttle import PROFILES
from vcsbench.studies import LOAD_STUDIES, STUDIES
from vcsbench.studies.base import ANSWER, Study


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", choices=[*STUDIES, *LOAD_STUDIES], help="which study")
    parser.add_argument(
        "--paths", help="load studies: access paths (default: the study's, listed below)"
    )
    parser.add_argument(
        "--step-seconds", type=float, help="load studies: each step's length (default: below)"
    )
    parser.add_argument(
        "--students",
        type=int,
        help="load studies: how many students submit (default: the study's, below)",
    )
    parser.add_argument(
        "--profile",
        help="a storage profile on the study's filesystems, as --fs ext4:profile=NAME: "
        f"{', '.join(PROFILES)} (vcsbench doctor --calibrate lists their figures)",
    )
    # The study fixes its operations and payloads; --ops and --payloads are not offered.
    add_selection(
        parser,
        defaults={"backends": None, "repos": None, "fs": None},
        exclude=("ops", "payloads"),
    )


def run(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.bench.runner import run_suite

    if args.study in LOAD_STUDIES:
        if args.students is not None and args.students < 1:
            raise VcsbenchError(f"--students {args.students} must be 1 or more")
        _refuse_benchmark_options(args)
        return _load_study(args)
    if args.paths or args.step_seconds or args.students is not None:
        raise VcsbenchError(
            f"--paths, --step-seconds and --students are for load studies "
            f"({', '.join(LOAD_STUDIES)}), not {args.study}"
        )

    study = STUDIES[args.study]
    backends = args.backends or study.backends
    if backends == "all":  # the study's: every backend of the VCSs it compares
        backends = ",".join(n for n, c in REGISTRY.items() if c.vcs in study.vcs)
    fixed = {
        **({"interleave": study.interleave} if args.interleave == "auto" else {}),
        "ops": study.ops,
        "payloads": study.payloads,
        "backends": backends,
        "repos": args.repos or str(study.repos),
        "fs": _with_profile(args.fs or study.fs, args.profile),
    }
    selection = selection_of(args, **fixed)
    out = out_path(args, study.name)
    check_out(out, table=True)
    # the study's tables below are its answer (pytest-benchmark's stay in the result file)
    code, run_id = run_suite(
        selection, out, command=["vcsbench", *sys.argv[1:]], door="vcsbench study"
    )
    whole = this_whole(out, run_id)
    stopped = interrupted(out, None if whole is None else whole.run)
    if stopped or whole is None:
        return stopped or code or 1
    run = whole.run
    from vcsbench.cli.store import remember

    remember(args, out, whole)
    from vcsbench.results.io import write_file

    text = study_markdown(study, [run], out)
    markdown = beside(out, ".md")
    write_file(markdown, text, "the table")
    from vcsbench.report.terminal import for_terminal

    print()
    print(for_terminal(text))  # the terminal's width; the file keeps the Markdown
    print(f"table: {markdown}")
    return code


LOAD_STUDY_OPTIONS = (
    "paths",
    "students",
    "step_seconds",
    "fs",
    "profile",
    "out",
    "name",
    "store",
)
"""What a load study takes from the command line; it sets the rest itself."""


def _refuse_benchmark_options(args: argparse.Namespace) -> None:
    """A benchmark option given to a load study is refused in one line, not ignored (its
    repositories, population and sessions are the study's own)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_arguments(parser)
    defaults = vars(parser.parse_args([args.study]))
    given = sorted(
        key
        for key, default in defaults.items()
        if key not in (*LOAD_STUDY_OPTIONS, "study") and getattr(args, key, default) != default
    )
    if given:
        options = ", ".join("--" + key.replace("_", "-") for key in given)
        takes = ", ".join("--" + key.replace("_", "-") for key in LOAD_STUDY_OPTIONS)
        raise VcsbenchError(
            f"{options}: for benchmark studies; {args.study} is a load study, which sets its "
            f"own repositories and sessions and takes {takes}"
        )


def _load_study(args: argparse.Namespace) -> int:
    import time

    from vcsbench.process import install_signal_handlers
    from vcsbench.results import read
    from vcsbench.studies.base import run_load_study

    study = LOAD_STUDIES[args.study]
    out = out_path(args, study.name)
    check_out(out, table=True, logs=True)
    install_signal_handlers()
    started = time.time()
    try:
        text = run_load_study(
            study,
            out,
            args.paths,
            _with_profile(args.fs or study.fs, args.profile),
            args.step_seconds,
            args.students,
        )
    except KeyboardInterrupt:  # the closed loop's file, if this run wrote it
        mine = out.exists() and out.stat().st_mtime >= started
        return interrupted(out, read(out) if mine else None)
    from vcsbench.cli.store import remember
    from vcsbench.report.terminal import for_terminal

    remember(args, out)
    print()
    print(for_terminal(text))
    print(f"table: {beside(out, '.md')}")
    return 0


def _with_profile(fs: str, profile: str | None) -> str:
    """The study's filesystems with ``--profile`` on each (refused in one line where it
    does not apply: an unknown name, tmpfs, a spec that names its own)."""
    if profile is None:
        return fs
    if profile not in PROFILES:
        raise VcsbenchError(
            f"--profile {profile!r} is not a storage profile; use one of {', '.join(PROFILES)}"
        )
    for spec in parse_fs_list(fs):
        if spec.limits:
            raise VcsbenchError(
                f"--profile {profile} and --fs {spec.text} both set storage limits; give one"
            )
    text = with_option(fs, f"profile={profile}")
    parse_fs_list(text)  # tmpfs and dir: are refused here, with what would be accepted
    return text


def study_markdown(study: Study, runs: list[Run], out: Path) -> str:
    """The study's tables under a header naming the results and the command."""
    sizes = sorted({b.repos for r in runs for b in r.benchmarks})
    n = ", ".join(f"{size:,}" for size in sizes)
    benches = [b for r in runs for b in r.benchmarks]
    tables = study.tables(runs)
    answer = tables.pop(ANSWER, "")
    header = (
        f"# {study.name}: {n} repositories per benchmark\n\n"
        + (f"{answer}\n" if answer else "")
        + f"{study.summary[0].upper()}{study.summary[1:]}. {ran_here(benches)}\n\n"
        f"Results: `{out}`; command: `{without_secrets(shlex.join(['vcsbench', *sys.argv[1:]]))}`\n"
    )
    from vcsbench.report.stability import warnings

    cpus = max((r.machine.cpu_count for r in runs), default=0)
    advice = "".join(f"\n> warning: {line}\n" for line in warnings(benches, cpus))
    return header + advice + "\n" + "\n".join(tables.values())


def ran_here(benches: list[Benchmark]) -> str:
    """What this run of the study ran, which its options may have narrowed: the backends
    (with how many variants of each), operations, payloads and filesystems."""
    if not benches:
        return "Ran here: nothing finished."

    def listed(values: list[str]) -> str:
        return ", ".join(dict.fromkeys(values))

    variants: dict[str, set[str]] = {}  # in the order they ran
    for b in benches:
        variants.setdefault(b.backend.name, set()).add(b.label)
    backends = ", ".join(
        name + (f" ({len(labels)} variants)" if len(labels) > 1 else "")
        for name, labels in variants.items()
    )
    return (
        f"Ran here: {len(benches)} benchmarks — {backends}; "
        f"{listed([b.op for b in benches])}; {listed([b.payload.shown for b in benches])}; "
        f"on {listed([b.fs for b in benches])}."
    )


def _entry(text: str) -> str:
    """One study in the epilog of ``--help``: wrapped, its name standing out."""
    return textwrap.fill(
        text,
        width=88,
        initial_indent="  ",
        subsequent_indent="      ",
        break_on_hyphens=False,
        break_long_words=False,
    )


STUDY_PARSER = dict(
    help="reproduce a published study or compare a VCS's choices "
    f"({', '.join([*STUDIES, *LOAD_STUDIES])})",
    description="Run a study: its operations and payloads are fixed; backends, "
    "filesystems and N default to the study's (below) and may be changed. Prints the "
    "study's tables, with published figures beside this run's where they exist, and "
    "writes the result JSON (which report and compare read) and the tables as Markdown.",
    epilog="studies:\n"
    + "\n".join(
        _entry(
            f"{s.name}: {s.summary}. Defaults: --backends {s.backends} --fs {s.fs} "
            f"--repos {s.repos}; operations {s.ops}; payloads {s.payloads}."
        )
        for s in STUDIES.values()
    )
    + "\n"
    + "\n".join(
        _entry(
            f"{s.name} (load): {s.summary}. Defaults: --paths {s.paths} --fs {s.fs}; "
            + (f"{s.students} students; " if s.scenario == "deadline" else "")
            + f"closed loop {s.closed_steps} clients"
            + (f", open loop {s.open_steps} arrivals/s" if s.open_steps else "")
            + f"; --step-seconds {s.step_seconds:g}."
        )
        for s in LOAD_STUDIES.values()
    ),
    formatter_class=argparse.RawDescriptionHelpFormatter,
)
COMMAND = Command("study", add_arguments, run, STUDY_PARSER)
