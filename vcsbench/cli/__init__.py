"""The ``vcsbench`` command: a thin front door to the package."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench import __version__
from vcsbench.errors import VcsbenchError

if TYPE_CHECKING:
    from vcsbench.bench.options import Selection
    from vcsbench.report.studies import Study
    from vcsbench.results import Run


def _doctor(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.measure.machine import machine_info

    if args.calibrate:
        return _calibrate(args)
    rows = []
    for name, cls in REGISTRY.items():
        availability = cls.available()
        versions: dict[str, str] = {}
        if availability.ok:
            with cls() as backend:
                versions = backend.versions()
        rows.append(
            {
                "name": name,
                "vcs": cls.vcs,
                "available": availability.ok,
                "reason": availability.reason,
                "versions": versions,
                "options": dict(cls.option_defaults),
            }
        )
    can_mount = os.geteuid() == 0
    if args.json:
        print(
            json.dumps(
                {
                    "version": __version__,
                    "backends": rows,
                    "can_mount": can_mount,
                    "machine": machine_info(),
                },
                indent=2,
            )
        )
        return 0
    print(f"vcsbench {__version__}")
    for row in rows:
        state = "available" if row["available"] else f"UNAVAILABLE: {row['reason']}"
        print(f"  {row['name']:11} {row['vcs']:4} {state}")
        versions_shown = row["versions"]
        assert isinstance(versions_shown, dict)
        for tool, version in versions_shown.items():
            print(f"      {tool}: {version}")
    print(
        "  mounting sandboxes (tmpfs, ext4, xfs, btrfs): "
        + ("yes (root)" if can_mount else "no (not root); use --fs dir:PATH")
    )
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from vcsbench.measure.calibrate import calibrate
    from vcsbench.sandbox import parse_fs_list

    if args.fs:
        specs = parse_fs_list(args.fs)
    elif os.geteuid() == 0:
        specs = parse_fs_list("tmpfs,ext4,xfs,btrfs")
    else:
        specs = parse_fs_list(f"dir:{tempfile.gettempdir()}")
        print(f"not root: calibrating in {specs[0].text} only (sandboxes need root)")
    failed = 0
    for check in calibrate(specs, args.image_dir):
        print(check.line(), flush=True)
        failed += check.ok is False
    print(f"{failed} check(s) failed" if failed else "all checks passed")
    return 1 if failed else 0


def _cleanup(args: argparse.Namespace) -> int:
    from vcsbench.sandbox import clean_stale, report_problems

    cleaned, problems = clean_stale()
    for item in cleaned:
        print(f"removed {item}")
    report_problems(problems)
    print(
        f"{len(cleaned)} leftover sandbox(es) of killed runs removed"
        + (
            f"; {len({line.split(' ', 3)[2] for line in problems})} state file(s) left for a "
            "person: what they name could not be proven vcsbench's, or could not be removed "
            "(see above)"
            if problems
            else ""
        )
    )
    return 1 if problems else 0


def _add_selection(
    parser: argparse.ArgumentParser,
    *,
    defaults: dict[str, str | None] | None = None,
    exclude: tuple[str, ...] = (),
) -> None:
    from vcsbench.bench.options import add_options

    add_options(parser.add_argument, defaults=defaults, exclude=exclude)
    parser.add_argument("--name", default=None, help="run name (default: <command>-<time>)")
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON path (default: results/<name>.json)"
    )


def _selection(args: argparse.Namespace, **fixed: str) -> Selection:
    from vcsbench.bench.options import Selection

    values = vars(args)
    return Selection.from_getter(lambda dest: fixed.get(dest, values.get(dest)))


def _out_path(args: argparse.Namespace, prefix: str) -> Path:
    import time

    name = args.name or f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    return Path(args.out) if args.out else Path("results") / f"{name}.json"


def _this_run(out: Path, run_id: str) -> Run | None:
    """The results this run wrote, or None (it wrote none; an older file is not ours)."""
    from vcsbench.results import load

    if not out.exists():
        return None
    run = load(out)
    return run if run.run_id == run_id else None


def beside(out: Path, suffix: str) -> Path:
    """A file or directory written beside the result ``out`` (``.md``, ``-logs``)."""
    return out.with_name(out.name.removesuffix(".gz").removesuffix(".json") + suffix)


def check_out(out: Path, table: bool = False, logs: bool = False) -> None:
    """Refuse, before any sandbox is made, a result path that cannot be written (a
    directory, a symlink, a place nothing can be written), and with ``table`` and
    ``logs`` the ``.md`` and ``-logs/`` beside it likewise. Directories missing above it
    are made, and said."""
    from vcsbench.results.io import writable_target

    writable_target(out, "--out")
    if table:
        writable_target(beside(out, ".md"), "the table beside --out,")
    if logs and os.path.lexists(beside(out, "-logs")):
        from vcsbench.results.io import own_directory

        own_directory(beside(out, "-logs"), "the server log directory beside --out,")
    missing = [p for p in [out.parent, *out.parent.parents] if not p.exists()]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out.parent, prefix=f".{out.name}."):
            pass
        if out.exists() and not os.access(out, os.W_OK):
            raise PermissionError(13, "not writable")
    except OSError as exc:
        raise VcsbenchError(
            f"--out {out}: cannot be written ({exc.strerror or exc}); give a path in a "
            "directory you can write"
        ) from None
    if missing:
        made = ", ".join(str(p) for p in reversed(missing))
        print(f"vcsbench: made the directories {made} for the results", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from vcsbench.bench.engine import run_suite

    if args.resume is not None:
        return _resume(args)
    selection = _selection(args)
    out = _out_path(args, "run")
    check_out(out)
    extra = [a for a in args.pytest_args if a != "--"]
    code, run_id = run_suite(selection, out, extra, command=["vcsbench", *sys.argv[1:]])
    return _conclude(out, run_id, code)


def _resume(args: argparse.Namespace) -> int:
    """Run what an earlier ``vcsbench run`` left missing or partial, into the same file."""

    from vcsbench.bench.engine import run_suite
    from vcsbench.bench.options import Selection
    from vcsbench.measure.machine import machine_info
    from vcsbench.results import parse
    from vcsbench.results.io import read_document

    path = Path(args.resume)
    document = read_document(path)
    earlier = parse(document, path)
    where = f"--resume {path}"
    if earlier.version != __version__:
        raise VcsbenchError(
            f"{where}: written by vcsbench {earlier.version or '?'}, this is {__version__}; "
            "results of two versions are not one run (start a new one)"
        )
    here = machine_info()
    for key in ("cpu_model", "cpu_count", "memory_bytes", "kernel"):
        if here[key] != getattr(earlier.machine, key):
            raise VcsbenchError(
                f"{where}: written on another machine ({key} {getattr(earlier.machine, key)!r}, "
                f"here {here[key]!r}); resume it there, or start a new run"
            )
    facts = document.get("vcsbench") if isinstance(document, dict) else None
    facts = facts if isinstance(facts, dict) else {}
    if facts.get("door") != "vcsbench run":
        raise VcsbenchError(
            f"{where}: not written by 'vcsbench run' (by {str(facts.get('door', '?'))[:40]}); "
            "only its results can be resumed"
        )
    # Data, never a command: vcsbench's own options, each checked as on the command line.
    selection = Selection.from_recorded(facts.get("selection"), where)
    extra = [a for a in args.pytest_args if a != "--"]
    carry = {
        "benchmarks": [
            e
            for e in document["benchmarks"]
            if not (e.get("extra_info") or {}).get("vcsbench", {}).get("partial")
        ],
        "failed_benchmarks": [
            e
            for e in (document.get("vcsbench") or {}).get("failed_benchmarks", [])
            if not e.get("partial")
        ],
    }
    kept = len(carry["benchmarks"]) + len(carry["failed_benchmarks"])
    shown = shlex.join(["vcsbench", "run", *selection.command_line()])
    print(f"resuming {path}: {kept} finished benchmark(s) kept, running the rest of: {shown}")
    command = ["vcsbench", "run", *selection.command_line(), "--out", str(path)]
    code, run_id = run_suite(selection, path, extra, command=command, carry=carry)
    return _conclude(path, run_id, code)


def _conclude(out: Path, run_id: str, code: int) -> int:
    """This run's summary table and results path, then the exit status."""
    from vcsbench.report.tables import summary

    run = _this_run(out, run_id)
    if run is not None:
        from vcsbench.report.stability import warnings

        print()
        print(summary([run]))
        for line in warnings(run.benchmarks, run.machine.cpu_count):
            print(f"warning: {line}")
        print(f"\nresults: {out}")
    return _interrupted(out, run) or code


def _study(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.bench.engine import run_suite
    from vcsbench.load.studies import LOAD_STUDIES
    from vcsbench.report.studies import STUDIES

    if args.study in LOAD_STUDIES:
        return _load_study(args)
    if args.paths or args.step_seconds:
        raise VcsbenchError(
            f"--paths and --step-seconds are for load studies ({', '.join(LOAD_STUDIES)}), "
            f"not {args.study}"
        )

    study = STUDIES[args.study]
    backends = args.backends or study.backends
    if backends == "all":  # the study's: every backend of the VCSs it compares
        backends = ",".join(n for n, c in REGISTRY.items() if c.vcs in study.vcs)
    fixed = {
        "ops": study.ops,
        "payloads": study.payloads,
        "backends": backends,
        "repos": args.repos or str(study.repos),
        "fs": args.fs or study.fs,
    }
    selection = _selection(args, **fixed)
    out = _out_path(args, study.name)
    check_out(out, table=True)
    code, run_id = run_suite(
        selection, out, [], command=["vcsbench", *sys.argv[1:]], door="vcsbench study"
    )
    run = _this_run(out, run_id)
    interrupted = _interrupted(out, run)
    if interrupted or run is None:
        return interrupted or code or 1
    from vcsbench.results.io import write_file

    text = study_markdown(study, [run], out)
    markdown = beside(out, ".md")
    write_file(markdown, text, "the table")
    print()
    print(text)
    print(f"table: {markdown}")
    return code


def _load_study(args: argparse.Namespace) -> int:
    from vcsbench.load.studies import LOAD_STUDIES, run_study
    from vcsbench.process import install_signal_handlers

    study = LOAD_STUDIES[args.study]
    out = _out_path(args, study.name)
    check_out(out, table=True, logs=True)
    install_signal_handlers()
    text = run_study(study, out, args.paths, args.fs, args.step_seconds)
    print()
    print(text)
    print(f"table: {out.with_name(out.name.removesuffix('.gz').removesuffix('.json') + '.md')}")
    return 0


def _load_worker(args: argparse.Namespace) -> int:
    host, _, port = str(args.master).rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise VcsbenchError(f"master {args.master!r} is not HOST:PORT, like 10.0.0.5:5557")
    # The engine in a process of its own: Locust patches the standard library for gevent.
    argv = [sys.executable, "-m", "vcsbench.load.engine", "--worker", host, port]
    return subprocess.call(argv)


def _load(args: argparse.Namespace) -> int:
    from vcsbench.load.plan import LoadPlan
    from vcsbench.load.run import run_load
    from vcsbench.process import install_signal_handlers
    from vcsbench.report.load import load_markdown
    from vcsbench.results.io import write_file

    plan = LoadPlan.from_getter(lambda dest: getattr(args, dest))
    out = _out_path(args, "load")
    check_out(out, table=True, logs=True)
    install_signal_handlers()
    run_id = uuid.uuid4().hex
    try:
        run = run_load(plan, out, ["vcsbench", *sys.argv[1:]], run_id)
    except KeyboardInterrupt:
        return _interrupted(out, _this_run(out, run_id))
    text = load_markdown(run)
    table = beside(out, ".md")
    write_file(table, text, "the table")
    print()
    print(text)
    print(f"results: {out}; table: {table}")
    if plan.fail_on == "errors" and run.load is not None:
        failed = sum(row.error_count for entry in run.load.paths for row in entry.steps)
        broken = [entry.path for entry in run.load.paths if entry.failure]
        if failed or broken:
            print(
                f"vcsbench load: --fail-on errors: {failed:,} session(s) failed"
                + (f"; could not be run: {', '.join(broken)}" if broken else ""),
                file=sys.stderr,
            )
            return 1
    return 0


def study_markdown(study: Study, runs: list[Run], out: Path) -> str:
    """The study's tables under a header naming the results and the command."""
    sizes = sorted({b.repos for r in runs for b in r.benchmarks})
    n = ", ".join(f"{size:,}" for size in sizes)
    header = (
        f"# {study.name}: {n} repositories per benchmark\n\n"
        f"{study.summary[0].upper()}{study.summary[1:]}.\n\n"
        f"Results: `{out}`; command: `{shlex.join(['vcsbench', *sys.argv[1:]])}`\n"
    )
    return header + "\n" + "\n".join(study.tables(runs).values())


_SAID: list[int] = []


def _interrupted(out: Path | None = None, run: Run | None = None) -> int:
    """After a termination signal: one line on what happened; 128 + the signal, else 0."""
    import signal

    from vcsbench import process

    signals = process.received()
    if not signals:
        return 0
    signum = signals[0]
    if _SAID:
        return 128 + signum
    _SAID.append(signum)
    doing = process.activity()
    where = f" during {doing}" if doing else ""
    down = process.torn_down()
    torn = f"{len(down)} sandbox(es) torn down" if down else "no sandbox was up"
    up = process.still_up()
    left = (
        "nothing left mounted" if not up else f"left up: {', '.join(up)} (run 'vcsbench cleanup')"
    )
    kept = "no results written"
    if run is not None and out is not None and run.load is not None:
        steps = sum(len(entry.steps) for entry in run.load.paths)
        kept = (
            f"{steps} finished step(s) of {len(run.load.paths)} access path(s) kept in {out}, "
            "each verified when it ended"
        )
    elif run is not None and out is not None:
        partial = sum(b.partial for b in run.benchmarks)
        kept = f"{len(run.benchmarks)} benchmark(s) kept in {out}" + (
            f", {partial} of them partial" if partial else ""
        )
    print(
        f"vcsbench: interrupted by {signal.Signals(signum).name}{where}; {torn}, {left}; {kept}",
        file=sys.stderr,
    )
    return 128 + signum


def _plot_kinds(text: str) -> tuple[str, ...]:
    from vcsbench.report.plots import PLOT_KINDS

    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    if kinds == ("all",):
        return PLOT_KINDS
    unknown = [k for k in kinds if k not in PLOT_KINDS]
    if unknown or not kinds:
        raise VcsbenchError(f"--plot-kinds {text!r}: use some of {', '.join(PLOT_KINDS)}, or all")
    return kinds


def _report(args: argparse.Namespace) -> int:
    import base64

    from vcsbench.report.tables import render
    from vcsbench.results import load_many

    runs = load_many(args.results)
    load_runs = [run for run in runs if run.load is not None]
    bench_runs = [run for run in runs if run.load is None]
    plot_dir = args.plots or (args.out / "plots" if args.out and args.format == "html" else None)
    parts: list[str] = []
    if load_runs:
        parts.append(_report_loads(args, load_runs, plot_dir))
    plots: list[tuple[str, str]] = []
    if bench_runs and plot_dir is not None:
        from vcsbench.report.plots import write_plots

        try:
            written = write_plots(
                bench_runs, plot_dir, args.plot_format, _plot_kinds(args.plot_kinds),
                args.block_size,
            )  # fmt: skip
        except OSError as exc:
            raise _unwritable("--plots", plot_dir, exc) from None
        for title, png in written:
            if args.format == "html":
                data = base64.b64encode(png.read_bytes()).decode()
                plots.append((title, f"data:image/png;base64,{data}"))
            else:
                plots.append((title, os.path.relpath(png, args.out or Path.cwd())))
    if bench_runs:
        parts.append(render(bench_runs, args.format, args.baseline, plots, args.block_size))
    text = "\n".join(parts)
    if args.out is None:
        print(text, end="")
        return 0
    suffix = {
        "md": "md",
        "github": "md",
        "rst": "rst",
        "html": "html",
        "latex": "tex",
        "csv": "csv",
    }[args.format]
    from vcsbench.results.io import own_directory, write_file

    path = own_directory(args.out, "--out") / f"report.{suffix}"
    write_file(path, text, "--out")
    print(f"wrote {path}" + (f" and {len(plots)} plots in {plot_dir}" if plots else ""))
    return 0


def _unwritable(option: str, where: Path, exc: OSError) -> VcsbenchError:
    return VcsbenchError(
        f"{option} {where}: cannot be written ({exc.strerror or exc}); give a directory "
        "you can write"
    )


def _report_loads(args: argparse.Namespace, runs: list[Run], plot_dir: Path | None) -> str:
    """Load results: each one's tables (and with --plots, its plots beneath them)."""
    from vcsbench.report.load import load_csv, load_markdown
    from vcsbench.report.loadplots import write_load_plots

    if args.format == "csv":
        return load_csv(runs)
    parts = []
    for run in runs:
        parts.append(load_markdown(run, args.format))
        if plot_dir is None:
            continue
        try:
            written = write_load_plots(run, Path(plot_dir), args.plot_format)
        except OSError as exc:
            raise _unwritable("--plots", Path(plot_dir), exc) from None
        for title, png in written:
            parts.append(f"![{title}]({os.path.relpath(png, args.out or Path.cwd())})\n")
    return "\n".join(parts)


def _compare(args: argparse.Namespace) -> int:
    from vcsbench.report.compare import compare, parse_gate, regressions, render
    from vcsbench.report.load import compare_loads
    from vcsbench.results import load

    base = load(args.base)
    others = [load(path) for path in args.others]
    for other in others:
        if other.kind != base.kind:
            raise VcsbenchError(
                f"{other.path} holds {other.kind} and {base.path} {base.kind}; compare "
                "results of one kind (benchmarks with benchmarks, load runs with load runs)"
            )
    if base.load is not None:
        print("\n".join(compare_loads(base, other) for other in others), end="")
        return 0

    gate = parse_gate(args.fail_on) if args.fail_on else {}
    found: list[str] = []
    for i, other in enumerate(others):
        pairs = compare(base, other)
        if i:
            print()
        print(render(base, other, pairs), end="")
        found += regressions(pairs, gate) if gate else []
    for line in found:
        print(f"REGRESSION {line}")
    return 1 if found else 0


def _block_size(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(text)


def _export(args: argparse.Namespace) -> int:
    from vcsbench.report.export import to_bmf
    from vcsbench.results import load_many

    document = to_bmf(load_many(args.results))
    try:
        text = json.dumps(document, indent=2, allow_nan=False) + "\n"
    except ValueError as exc:  # a figure that is not a finite number: not JSON
        raise VcsbenchError(f"the export holds a figure that is not a number ({exc})") from None
    if args.out is None:
        print(text, end="")
        return 0
    from vcsbench.results.io import write_file

    write_file(args.out, text, "--out")
    print(f"wrote {args.out}: {len(document)} benchmarks")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vcsbench",
        description="Micro-benchmarks for version-control backends: time, CPU, IO at the "
        "process and at the device, and disk footprint, on filesystems vcsbench controls.",
    )
    parser.add_argument("--version", action="version", version=f"vcsbench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    doctor = commands.add_parser(
        "doctor",
        help="show backends, versions and whether sandboxes can be mounted",
        description="List every backend with availability, reason and versions; with "
        "--calibrate, check the measuring rig against known synthetic work.",
    )
    doctor.add_argument("--json", action="store_true", help="print as JSON")
    doctor.add_argument(
        "--calibrate",
        action="store_true",
        help="check timer, IO and footprint probes in each sandbox; exit 1 if any check fails",
    )
    doctor.add_argument(
        "--fs",
        help="sandboxes to calibrate in (default: tmpfs,ext4,xfs,btrfs as root, else dir:$TMPDIR)",
    )
    doctor.add_argument("--image-dir", type=Path, help="where loop images go (default: temp)")
    doctor.set_defaults(func=_doctor)

    run = commands.add_parser(
        "run",
        help="run the benchmark suite (the same one pytest --benchmark-only runs)",
        description="Run backend x operation x payload x filesystem benchmarks and write "
        "pytest-benchmark JSON with vcsbench's metrics. Arguments after -- go to pytest.",
    )
    _add_selection(run)
    run.add_argument(
        "--resume",
        type=Path,
        metavar="RESULTS",
        help="run only what RESULTS (written by an interrupted 'vcsbench run') lacks or has "
        "partial, with its selection, into the same file",
    )
    run.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="after --: extra pytest arguments, e.g. -- --benchmark-save=base",
    )
    run.set_defaults(func=_run)

    from vcsbench.load.studies import LOAD_STUDIES
    from vcsbench.report.studies import STUDIES

    study = commands.add_parser(
        "study",
        help=f"reproduce a published study or compare a VCS's choices ({', '.join(STUDIES)})",
        description="Run a study: its operations and payloads are fixed; backends, "
        "filesystems and N default to the study's (below) and may be changed. Prints the "
        "study's tables, with published figures beside this run's where they exist, and "
        "writes the result JSON (which report and compare read) and the tables as Markdown.",
        epilog="studies:\n"
        + "\n".join(
            textwrap.fill(
                f"{s.name}: {s.summary}. Defaults: --backends {s.backends} --fs {s.fs} "
                f"--repos {s.repos}; operations {s.ops}; payloads {s.payloads}.",
                width=88,
                initial_indent="  ",
                subsequent_indent="      ",
                break_on_hyphens=False,
                break_long_words=False,
            )
            for s in STUDIES.values()
        )
        + "\n"
        + "\n".join(
            textwrap.fill(
                f"{s.name} (load): {s.summary}. Defaults: --paths {s.paths} --fs {s.fs}; "
                f"{s.students} students; closed loop {s.closed_steps} clients, open loop "
                f"{s.open_steps} arrivals/s; --step-seconds {s.step_seconds:g}.",
                width=88,
                initial_indent="  ",
                subsequent_indent="      ",
                break_on_hyphens=False,
                break_long_words=False,
            )
            for s in LOAD_STUDIES.values()
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    study.add_argument("study", choices=[*STUDIES, *LOAD_STUDIES], help="which study")
    study.add_argument(
        "--paths", help="load studies: access paths (default: the study's, listed below)"
    )
    study.add_argument(
        "--step-seconds", type=float, help="load studies: each step's length (default: below)"
    )
    # The study fixes its operations and payloads; --ops and --payloads are not offered.
    _add_selection(
        study,
        defaults={"backends": None, "repos": None, "fs": None},
        exclude=("ops", "payloads"),
    )
    study.set_defaults(func=_study)

    load = commands.add_parser(
        "load",
        help="many clients at once over the real servers (Locust): latency, errors, capacity",
        description="Run a load scenario over each access path, in a sandbox of its own: "
        "servers (svnserve, git daemon) are started on 127.0.0.1 and stopped by vcsbench; "
        "Locust runs C clients at once for each step of --steps (closed loop); after each "
        "step every repository it wrote is read back and the step is written to the "
        "result file. Prints a table per path with p50-p99, errors, "
        "device IO per session and the capacity, and writes the JSON (raw latencies "
        "included) and the table as Markdown.",
    )
    from vcsbench.load.plan import add_load_options

    add_load_options(load.add_argument)
    load.add_argument(
        "--out", type=Path, default=None, help="results JSON (default results/load-<time>.json)"
    )
    load.add_argument("--name", default=None, help=argparse.SUPPRESS)
    load.set_defaults(func=_load)

    worker = commands.add_parser(
        "load-worker",
        help="a Locust worker for a 'vcsbench load --expect-workers' master elsewhere",
        description="Connect to a load master (vcsbench load --expect-workers N), take the "
        "configuration and the users it gives, and send each step's sessions back. Needs "
        "vcsbench, its clients (svn, svnmucc, git) and a route to the master and the "
        "servers.",
    )
    worker.add_argument("master", metavar="HOST:PORT", help="the master, as it printed")
    worker.set_defaults(func=_load_worker)

    report = commands.add_parser(
        "report",
        help="tables (and plots) for RFCs from result files",
        description="One table per (operation, payload, filesystem), a row per backend, "
        "with the environment and the command that reproduces the run. Several result "
        "files are merged into the same tables.",
    )
    report.add_argument("results", nargs="+", help="result JSON files")
    report.add_argument(
        "--format", default="md", choices=["md", "github", "rst", "html", "latex", "csv"]
    )
    report.add_argument(
        "--out", type=Path, help="directory to write report.<ext> into (html: with plots embedded)"
    )
    report.add_argument("--plots", type=Path, help="directory to write plots into")
    report.add_argument(
        "--plot-format",
        choices=["png", "svg"],
        default="png",
        help="png (default), or svg: PNG and SVG of every plot",
    )
    report.add_argument(
        "--plot-kinds",
        default="all",
        metavar="LIST",
        help="which plots: summary, latency, cdf, timeline, footprint, growth (default: all; "
        "growth where a benchmark has two blocks of rounds)",
    )
    report.add_argument("--baseline", help="backend variant to add a ratio column against")
    report.add_argument(
        "--block-size",
        type=_block_size,
        default=1000,
        metavar="N",
        help="rounds per block for cost as repositories accumulate: per-block percentiles, "
        "the growth column and plot, shown where a benchmark has two blocks (default 1000)",
    )
    report.set_defaults(func=_report)

    compare = commands.add_parser(
        "compare",
        help="compare result files against a base, with significance",
        description="Match benchmarks of BASE and each OTHER; show medians, ratios and a "
        "Mann-Whitney U test per benchmark, what differs between the environments, and "
        "benchmarks found in one file only.",
    )
    compare.add_argument("base", help="result JSON (vcsbench or pytest-benchmark --benchmark-save)")
    compare.add_argument(
        "others", nargs="+", metavar="OTHER", help="result files to compare against BASE, each"
    )
    compare.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="e.g. time:10%%,io_write_device:5%%: exit 1 on a significant "
        "regression beyond a threshold",
    )
    compare.set_defaults(func=_compare)

    export = commands.add_parser(
        "export",
        help="result files in a dashboard's format (Bencher's BMF)",
        description="Write the benchmarks of RESULTS in Bencher Metric Format: latency "
        "(median ns, quartiles as bounds) and every per-repository figure, so a team can "
        "keep history per machine (testbed) in Bencher.",
    )
    export.add_argument("results", nargs="+", help="result files")
    export.add_argument("--format", choices=["bmf"], default="bmf")
    export.add_argument("--out", type=Path, help="file to write (default: standard output)")
    export.set_defaults(func=_export)

    cleanup = commands.add_parser(
        "cleanup",
        help="remove sandboxes left behind by killed runs",
        description="Unmount, detach and delete what killed vcsbench runs left behind; "
        "touches only what their state files record.",
    )
    cleanup.set_defaults(func=_cleanup)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except VcsbenchError as exc:
        print(f"vcsbench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        from vcsbench import process

        if not process.received():  # a Ctrl-C before any handler of vcsbench's was installed
            import signal

            process.note_signal(signal.SIGINT)
        return _interrupted()
    return _interrupted() or code


if __name__ == "__main__":
    sys.exit(main())
