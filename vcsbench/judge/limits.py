"""A gate's limits (``compare --fail-on``, the pytest door's ``--benchmark-compare-fail``)
and what fails them: a comparison's pairs held to each limit, failing closed -- what it
cannot judge (a benchmark one side lacks, no rounds, a rising error rate, a figure not
measured, a withheld verdict, too few runs for the limit) fails."""

from __future__ import annotations

import re

from vcsbench.errors import VcsbenchError
from vcsbench.judge.comparison import COMPARED_METRICS, Change, Pair
from vcsbench.judge.count_changes import FLOOR
from vcsbench.judge.verdict import Between, runs_needed
from vcsbench.results.counted import COUNTED
from vcsbench.results.drifting import DRIFTING
from vcsbench.results.metrics import CALL_METRICS, DURABILITY_METRICS
from vcsbench.results.model import Benchmark
from vcsbench.results.run_figures import run_figure

GATE_NAMES = tuple(
    dict.fromkeys(("time", *COMPARED_METRICS, *DURABILITY_METRICS, *CALL_METRICS, *COUNTED))
)
"""What a gate can hold; durability and system-call counts are compared on the rounds as
bytes are, or exactly where every round of each side made the same count; the counted
rounds' counts (``instructions``, ``open_calls``...) as :mod:`count_changes` judges them."""


def parse_gate(text: str) -> dict[str, float]:
    """``time:10%,io_write_device:5%`` -> {"time": 0.10, "io_write_device": 0.05}."""
    gate: dict[str, float] = {}
    for item in text.split(","):
        match_ = re.fullmatch(r"\s*([\w]+):(\d+(?:\.\d+)?)%\s*", item)
        if not match_ or match_.group(1) not in GATE_NAMES or float(match_.group(2)) <= 0:
            raise VcsbenchError(
                f"--fail-on {item.strip()!r} is not NAME:N% with N above 0 and NAME one of "
                + ", ".join(GATE_NAMES)
            )
        gate[match_.group(1)] = float(match_.group(2)) / 100
    return gate


def _runs_advice(change: Between, limit: float, sides: tuple[int, int]) -> str:
    if change.sd_log is None:
        return (
            "measure this machine's run-to-run spread (vcsbench doctor --spread) or give "
            "several runs a side (--base-runs, --other-runs)"
        )
    calibration = change.df - (sides[0] - 1) - (sides[1] - 1)
    needed = runs_needed(change.sd_log, max(0, calibration), limit)
    if needed is None:
        return "more than 50 runs a side would be needed at this spread"
    return f"{needed} runs a side would (--base-runs, --other-runs)"


def _missing_reason(bench: Benchmark, name: str) -> str:
    if name == "time" or not bench.repos_ok:
        return "no successful round"
    return bench.metric(name).reason or "not recorded"


def _exact_count(
    where: str, change: Change, limit: float, failed: list[str], judged: list[str]
) -> None:
    """A count every round of each side made the same of, against the limit: a rise
    from none is beyond any limit; no test is needed, and none is made."""
    base, other = change.base or 0.0, change.other or 0.0
    said = f"{base:,.0f} → {other:,.0f} per operation, the same in every round"
    if other > base and (base == 0 or other / base > 1 + limit):
        failed.append(f"{where} {said}: exceeds +{limit * 100:g}%")
    else:
        judged.append(f"{where} {said}: within +{limit * 100:g}%")


def _by_counted_rounds(pair: Pair, name: str) -> bool:
    """Whether a gate on ``name`` is held by the counted rounds: a count they alone
    count, or one the timed rounds did not count (on tmpfs) and they did."""
    if name not in pair.changes:
        return True
    counted = pair.counted.get(name)
    return not pair.in_round(name) and counted is not None and counted.kind != "missing"


def _counted_gate(
    pair: Pair, name: str, limit: float, failed: list[str], judged: list[str]
) -> None:
    """A count of the counted rounds against the limit, failing closed: not counted, a
    count that moves, too few rounds, or a limit below what is called a change fail."""
    where = f"{pair.label}: {name}"
    change = pair.counted.get(name)
    if change is None or change.kind == "missing":
        why = change.why if change is not None and change.why else "no counted rounds (--counted N)"
        failed.append(f"{where} not counted ({why})")
        return
    assert change.base is not None and change.other is not None
    said = f"{change.base:,.0f} → {change.other:,.0f} per operation"
    if change.kind == "exact":
        rise = change.other > change.base
        if rise and (change.base == 0 or change.other / change.base > 1 + limit):
            failed.append(f"{where} {said}, the same in every counted round: exceeds +{limit:.0%}")
        else:
            judged.append(f"{where} {said}, the same in every counted round: within +{limit:.0%}")
        return
    if change.why:
        failed.append(f"{where}: cannot judge: {change.why}")
    elif limit < FLOOR:
        failed.append(
            f"{where}: cannot judge +{limit * 100:g}%: a change under {FLOOR:.0%} of a count "
            "that moves between rounds is not called one"
        )
    elif change.changed and (change.ratio or 0) > 1 + limit:
        failed.append(f"{where} {said} (medians): {change.text()} exceeds +{limit * 100:g}%")
    else:
        judged.append(f"{where} {said} (medians): within +{limit * 100:g}%")


def gate_lines(
    pairs: list[Pair], left: list[str], gate: dict[str, float], sides: tuple[int, int]
) -> tuple[list[str], list[str]]:
    """(what fails the gate, what it judged and could detect): it fails closed."""
    failed = [f"{line}: the gate cannot judge a benchmark one side lacks" for line in left]
    judged: list[str] = []
    for pair in pairs:
        (errors_b, errors_o), (rounds_b, rounds_o) = pair.errors, pair.rounds
        if not rounds_b or not rounds_o:
            which = "base" if not rounds_b else "other"
            failed.append(f"{pair.label}: no rounds in {which}; nothing to judge")
            continue
        if errors_o / rounds_o > errors_b / rounds_b:
            failed.append(
                f"{pair.label}: error rate rose from {errors_b} of {rounds_b} to "
                f"{errors_o} of {rounds_o} rounds"
            )
        for name, limit in gate.items():
            if _by_counted_rounds(pair, name):
                _counted_gate(pair, name, limit, failed, judged)
                continue
            change = pair.changes[name]
            ratio = change.ratio
            where = f"{pair.label}: {name}"
            if isinstance(change, Change) and change.exact:
                _exact_count(where, change, limit, failed, judged)
                continue
            if isinstance(change, Change) and change.moves:
                failed.append(f"{where}: cannot judge: {change.moves}")
                continue
            if ratio is None:
                reasons = [
                    f"{side}: {_missing_reason(bench, name)}"
                    for side, group in (("base", pair.base), ("other", pair.other))
                    for bench in group[:1]
                    if (run_figure(bench, name) if name in DRIFTING else bench.per_repo(name))
                    is None
                ]
                failed.append(f"{where} not measured ({'; '.join(reasons) or 'no figure'})")
                continue
            if change.significant and ratio > 1 + limit:
                failed.append(f"{where} {change.text()} exceeds +{limit * 100:g}%")
                continue
            if isinstance(change, Between):
                # No spread at all is said first: whatever else withholds a verdict, the
                # runs cannot be judged without one, and measuring it is what to do.
                if change.withheld and change.detectable is not None:
                    failed.append(f"{where}: cannot judge, {change.withheld}")
                    continue
                if change.detectable is None or change.detectable > limit:
                    could = (
                        f"it could detect only changes beyond {100 * change.detectable:.0f}%"
                        if change.detectable is not None
                        else "it has no run-to-run spread to judge by"
                    )
                    failed.append(
                        f"{where}: too few runs to judge +{limit * 100:g}%: {could}; "
                        + _runs_advice(change, limit, sides)
                    )
                    continue
                judged.append(
                    f"{where} {ratio:.2f}x, within +{limit * 100:g}% (it would detect "
                    f"+{100 * change.detectable:.1f}% or more 4 times in 5)"
                )
            else:
                if not change.reachable:
                    failed.append(
                        f"{where}: too few rounds for the test to reach significance; "
                        "run more repositories"
                    )
                    continue
                judged.append(f"{where} {ratio:.2f}x, within +{limit * 100:g}%")
    return failed, judged
