"""What ``vcsbench bisect`` prints: its plan, each step as it is found, and the answer
(Markdown, first, then the steps and how they were decided)."""

from __future__ import annotations

import math
import re
from pathlib import Path

from vcsbench.judge.bisection import METHOD, Outcome, Step, direction
from vcsbench.judge.count_bisection import METHOD as COUNT_METHOD
from vcsbench.judge.count_bisection import CountOutcome, CountStep
from vcsbench.judge.paired import LEVEL
from vcsbench.results.counted import COUNTED

_RELEASE = re.compile(r"(?P<backend>[^\[]+)\[version=(?P<version>[^\],]+)\]")


def names(chain: list[str]) -> list[str]:
    """Each version as the answer names it: the release alone where every version is
    one backend's ``[version=...]``, else the variant as written."""
    found = [_RELEASE.fullmatch(text) for text in chain]
    if all(found) and len({m.group("backend") for m in found if m}) == 1:
        return [m.group("version") for m in found if m]
    return list(chain)


def most_steps(count: int) -> int:
    return 1 + math.ceil(math.log2(max(1, count - 1)))


def header(chain: list[str], figure: str, threshold: float, repos: int) -> str:
    shown = names(chain)
    what = (
        f"{_RELEASE.fullmatch(chain[0]).group('backend')} releases "  # type: ignore[union-attr]
        if shown != chain
        else ""
    )
    return (
        f"vcsbench bisect: {figure} — {len(chain)} {what or 'versions '}from {shown[0]} (good) to "
        f"{shown[-1]} (bad), a change past {threshold:.0%} to find; each step runs one version "
        f"against {shown[0]} interleaved in one run, {repos} rounds each "
        f"(at most {most_steps(len(chain))} steps, one more for each unclear or skipped version)"
    )


def reading(step: Step, good: str, bad: str) -> str:
    return {
        "change": "the change to find",
        "bad": f"like {bad}",
        "good": f"like {good}",
        "unclear": "across the halfway point: measured again with twice the rounds",
        "by its median": f"still across it: {step.why}",
        "skipped": f"skipped: {step.why}",
    }[step.side]


def step_line(step: Step, chain: list[str]) -> str:
    shown = names(chain)
    width = max(len(n) for n in shown)
    return (
        f"step {step.number:<3} {shown[step.index]:<{width}}  {step.cell():<24} "
        f"{reading(step, shown[0], shown[-1])}"
    )


def answer(outcome: Outcome, figure: str, out: Path) -> str:
    shown = names(outcome.versions)
    good, bad = shown[0], shown[-1]
    if outcome.first_bad is None:
        first = outcome.nothing
    else:
        found = outcome.measured(outcome.first_bad)
        before = outcome.measured(outcome.last_good)
        if outcome.last_good and before is not None:
            was = (
                f"where {shown[outcome.last_good]}, the last version like {good}, read "
                f"{before.cell()}"
            )
        else:
            was = f"the version right after {good}"
        moved = (
            f", {abs(found.found.ratio - 1):.1%} {direction(found.found.ratio)}"
            if found is not None and found.found is not None
            else ""
        )
        first = (
            f"**{shown[outcome.first_bad]} is the first version where it changed**: "
            f"{found.cell() if found else '—'} of {good} ({figure}{moved}), {was}."
        )
        share = outcome.share()
        if share is not None:
            first += f" That step holds {share:.0%} of the change from {good} to {bad}."
        passed = [shown[i] for i in range(outcome.last_good + 1, outcome.first_bad)]
        if passed:
            first += f" Between them, skipped: {', '.join(passed)}."
        if outcome.uncertain:
            numbers = [str(s.number) for s in outcome.uncertain]
            several = len(numbers) > 1
            steps = ", ".join(numbers[:-1]) + " and " + numbers[-1] if several else numbers[0]
            first += (
                f" Not certain: {'steps' if several else 'step'} {steps} read across the "
                f"halfway point twice and {'were' if several else 'was'} decided by "
                f"{'their medians' if several else 'its median'}."
            )
    rows = [
        "| step | version | against " + good + ", by block | reading |",
        "|---|---|---|---|",
    ]
    rows += [
        f"| {s.number} | {shown[s.index]} | {s.cell()} | {reading(s, good, bad)} |"
        for s in outcome.steps
    ]
    return "\n".join(
        [
            first,
            "",
            *rows,
            "",
            f"How: {METHOD} Interval: at least {100 * LEVEL:.0f}%. Each step's results: "
            f"{out}/step-NN.json.",
            "",
        ]
    )


def count_header(chain: list[str], figure: str, by: str, counted: int) -> str:
    shown = names(chain)
    what = "the first count that changed" if by == "counts" else COUNTED[by][0]
    return (
        f"vcsbench bisect: {figure} — {len(chain)} versions from {shown[0]} (good) to "
        f"{shown[-1]} (bad), by {what}; each version one run with {counted} counted rounds, "
        f"the two ends together first (at most {most_steps(len(chain))} runs)"
    )


def _value(step: CountStep) -> str:
    return "—" if step.value is None else f"{step.value:,.0f}"


def count_step_line(step: CountStep, chain: list[str]) -> str:
    shown = names(chain)
    width = max(len(n) for n in shown)
    reading = {
        "ends": "good" if step.index == 0 else "bad",
        "good": f"like {shown[0]}",
        "bad": f"like {shown[-1]}",
        "skipped": f"skipped: {step.why}",
    }[step.side]
    return f"step {step.number:<3} {shown[step.index]:<{width}}  {_value(step):>14}  {reading}"


def count_answer(outcome: CountOutcome, figure: str, out: Path) -> str:
    shown = names(outcome.versions)
    if outcome.first_bad is None or outcome.change is None:
        first = outcome.nothing
    else:
        label = COUNTED[outcome.by][0]
        change = outcome.change
        first = (
            f"**{shown[outcome.first_bad]} is the first version where {label} per operation "
            f"changed**: {change.text()} from {shown[0]} to {shown[-1]} ({figure}); "
            f"{shown[outcome.last_good]} is the last like {shown[0]}. Decided by {label}, "
            f"in {outcome.runs} runs."
        )
    rows = [
        "| step | version | "
        + (COUNTED[outcome.by][0] if outcome.by else "count")
        + " | reading |",
        "|---|---|---|---|",
    ]
    rows += [
        f"| {s.number} | {shown[s.index]} | {_value(s)} | "
        + ("good" if s.side == "ends" and s.index == 0 else "bad" if s.side == "ends" else s.side)
        + (f": {s.why}" if s.why else "")
        + " |"
        for s in outcome.steps
    ]
    return "\n".join(
        [first, "", *rows, "", f"How: {COUNT_METHOD} Each run's results: {out}/step-NN.json.", ""]
    )
