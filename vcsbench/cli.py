"""The ``vcsbench`` command: a thin front door to the package."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vcsbench import __version__
from vcsbench.errors import VcsbenchError


def _doctor(args: argparse.Namespace) -> int:
    from vcsbench.backends import REGISTRY
    from vcsbench.environment import machine_info

    if args.calibrate:
        return _calibrate(args)
    rows = []
    for name, cls in REGISTRY.items():
        availability = cls.available()
        rows.append(
            {
                "name": name,
                "vcs": cls.vcs,
                "available": availability.ok,
                "reason": availability.reason,
                "versions": cls().versions() if availability.ok else {},
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
        versions = row["versions"]
        assert isinstance(versions, dict)
        for tool, version in versions.items():
            print(f"      {tool}: {version}")
    print(
        "  mounting sandboxes (tmpfs, ext4, xfs, btrfs): "
        + ("yes (root)" if can_mount else "no (not root); use --fs dir:PATH")
    )
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from vcsbench.calibrate import calibrate
    from vcsbench.filesystems import parse_fs_list

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
    from vcsbench.filesystems import clean_stale

    cleaned = clean_stale()
    for item in cleaned:
        print(f"removed {item}")
    print(f"{len(cleaned)} leftover sandbox(es) of killed runs removed")
    return 0


SELECTION_FLAGS = (
    "backends",
    "ops",
    "payloads",
    "fs",
    "repos",
    "cache",
    "image-dir",
    "verify",
    "fs-scope",
)


def _add_selection(parser: argparse.ArgumentParser, *, defaults: dict[str, str]) -> None:
    from vcsbench.plugin import DEFAULT_REPOS
    from vcsbench.workloads import DEFAULT_PAYLOADS

    parser.add_argument(
        "--backends",
        default=defaults.get("backends", "all"),
        help="comma-separated backends, or all (see vcsbench doctor)",
    )
    parser.add_argument(
        "--ops",
        default=defaults.get("ops", "all"),
        help="comma-separated: create, create+commit, commit, checkout, or all",
    )
    parser.add_argument(
        "--payloads",
        default=defaults.get("payloads", ",".join(DEFAULT_PAYLOADS)),
        help="comma-separated payloads: hello, submission, many-files, large",
    )
    parser.add_argument(
        "--fs",
        default=None,
        help="sandboxes, comma-separated: tmpfs[:size=2G], "
        "ext4|xfs|btrfs[:size=8G,mkfs=...,mount=...], dir:PATH "
        "(default: tmpfs as root, else dir:$TMPDIR)",
    )
    parser.add_argument(
        "--repos",
        default=defaults.get("repos", str(DEFAULT_REPOS)),
        help=f"rounds per benchmark, a fresh repository each "
        f"(default {defaults.get('repos', DEFAULT_REPOS)})",
    )
    parser.add_argument("--cache", default="warm", help="warm (default) or cold (root)")
    parser.add_argument("--image-dir", default=None, help="where loop images go (default: temp)")
    parser.add_argument("--verify", default="all", help="all (default) or sample:K")
    parser.add_argument(
        "--fs-scope",
        default="benchmark",
        help="benchmark (a fresh sandbox each, default) or session",
    )
    parser.add_argument(
        "--backend-option",
        action="append",
        default=[],
        metavar="BACKEND:KEY=VALUE",
        help="repeatable, e.g. git-cli:core.fsync=all or git-pygit2:template=empty",
    )
    parser.add_argument("--name", default=None, help="run name (default: <command>-<time>)")
    parser.add_argument(
        "--out", type=Path, default=None, help="results JSON path (default: results/<name>.json)"
    )


def _selection_options(args: argparse.Namespace) -> dict[str, str | list[str] | None]:
    from vcsbench.plugin import Selection

    Selection.parse(
        backends=args.backends,
        ops=args.ops,
        payloads=args.payloads,
        fs=args.fs,
        repos=args.repos,
        cache=args.cache,
        image_dir=args.image_dir,
        verify=args.verify,
        fs_scope=args.fs_scope,
        backend_options=args.backend_option,
    )
    options: dict[str, str | list[str] | None] = {
        flag: getattr(args, flag.replace("-", "_")) for flag in SELECTION_FLAGS
    }
    options["backend-option"] = list(args.backend_option)
    return options


def _out_path(args: argparse.Namespace, prefix: str) -> Path:
    import time

    name = args.name or f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"
    return Path(args.out) if args.out else Path("results") / f"{name}.json"


def _run(args: argparse.Namespace) -> int:
    from vcsbench.engine import run_suite
    from vcsbench.report import summary
    from vcsbench.results import load

    options = _selection_options(args)
    out = _out_path(args, "run")
    extra = [a for a in args.pytest_args if a != "--"]
    code = run_suite(options, out, extra, command=["vcsbench", *sys.argv[1:]])
    if out.exists():
        print()
        print(summary([load(out)]))
        print(f"\nresults: {out}")
    return code


def _study(args: argparse.Namespace) -> int:
    from vcsbench.engine import run_suite
    from vcsbench.results import load
    from vcsbench.study import MARKUS2013_OPS, MARKUS2013_PAYLOAD, markus2013_tables

    args.ops, args.payloads = MARKUS2013_OPS, MARKUS2013_PAYLOAD
    options = _selection_options(args)
    out = _out_path(args, args.study)
    code = run_suite(options, out, [], command=["vcsbench", *sys.argv[1:]])
    if not out.exists():
        return code or 1
    tables = markus2013_tables([load(out)])
    header = (
        f"# markus2013 reproduced: {args.repos} repositories per operation\n\n"
        f"Results: `{out}`; command: `{' '.join(['vcsbench', *sys.argv[1:]])}`\n"
    )
    text = header + "\n" + "\n".join(tables.values())
    markdown = out.with_suffix(".md")
    markdown.write_text(text)
    print()
    print(text)
    print(f"table: {markdown}")
    return code


def _report(args: argparse.Namespace) -> int:
    import base64

    from vcsbench.report import render
    from vcsbench.results import load_many

    files = load_many(args.results)
    plots: list[tuple[str, str]] = []
    plot_dir = args.plots or (args.out / "plots" if args.out and args.format == "html" else None)
    if plot_dir is not None:
        from vcsbench.plots import write_plots

        for title, png in write_plots(files, plot_dir):
            data = base64.b64encode(png.read_bytes()).decode()
            plots.append((title, f"data:image/png;base64,{data}"))
    text = render(files, args.format, args.baseline, plots)
    if args.out is None:
        print(text, end="")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = {
        "md": "md",
        "github": "md",
        "rst": "rst",
        "html": "html",
        "latex": "tex",
        "csv": "csv",
    }[args.format]
    path = args.out / f"report.{suffix}"
    path.write_text(text)
    print(f"wrote {path}" + (f" and {len(plots)} plots in {plot_dir}" if plots else ""))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from vcsbench.compare import compare, parse_gate, regressions, render
    from vcsbench.results import load

    gate = parse_gate(args.fail_on) if args.fail_on else {}
    base, other = load(args.base), load(args.other)
    pairs = compare(base, other)
    print(render(base, other, pairs), end="")
    found = regressions(pairs, gate)
    for line in found:
        print(f"REGRESSION {line}")
    return 1 if found else 0


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
    _add_selection(run, defaults={})
    run.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="after --: extra pytest arguments, e.g. -- --benchmark-save=base",
    )
    run.set_defaults(func=_run)

    study = commands.add_parser(
        "study",
        help="reproduce a published study (markus2013)",
        description="markus2013: create N svn and git repositories, and N each with one commit "
        "of test.txt; print the 2013 blog's table with this run's figures beside it.",
    )
    study.add_argument("study", choices=["markus2013"], help="which study")
    _add_selection(study, defaults={"backends": "git-pygit2,svn-fs", "repos": "10000"})
    study.set_defaults(func=_study)

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
    report.add_argument("--plots", type=Path, help="directory for PNG and SVG plots")
    report.add_argument("--baseline", help="backend to add a ratio column against")
    report.set_defaults(func=_report)

    compare = commands.add_parser(
        "compare",
        help="compare two result files, with significance",
        description="Match benchmarks of BASE and OTHER; show medians, ratios and a "
        "Mann-Whitney U test per benchmark, and what differs between the environments.",
    )
    compare.add_argument("base", help="result JSON (vcsbench or pytest-benchmark --benchmark-save)")
    compare.add_argument("other", help="result JSON to compare against BASE")
    compare.add_argument(
        "--fail-on",
        metavar="SPEC",
        help="e.g. time:10%%,io_write_device:5%%: exit 1 on a significant "
        "regression beyond a threshold",
    )
    compare.set_defaults(func=_compare)

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
    except KeyboardInterrupt as exc:
        print(f"vcsbench: {exc or 'interrupted'}", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
