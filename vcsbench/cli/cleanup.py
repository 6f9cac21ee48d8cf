"""``vcsbench cleanup``: remove what killed runs left, once proven theirs."""

from __future__ import annotations

import argparse

from vcsbench.cli.command import Command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: it acts on the state files of this user (see docs/safety.md)."""


def run(args: argparse.Namespace) -> int:
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


COMMAND = Command(
    "cleanup",
    add_arguments,
    run,
    dict(
        help="remove sandboxes left behind by killed runs",
        description="Unmount, detach and delete what killed vcsbench runs left behind; "
        "touches only what their state files record.",
    ),
)
