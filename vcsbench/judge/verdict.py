"""A time figure compared between separate runs, the runs the unit.

Between runs the unit of replication is the run: each run's figure (its median time, its
CPU time per repository) is one value, however many rounds it had. A change must stand
out of how far runs of the same benchmark move on this machine, which two single runs
cannot show by themselves. So the test pools two estimates of that spread on the log
scale: the machine's calibration (``vcsbench doctor --spread``: K runs of the same
benchmark, K - 1 degrees of freedom, :mod:`vcsbench.results.spread`) and the spread
between the runs of each side where a side has several; the difference of the sides' mean
logarithms is then tested with Student's t on the pooled degrees of freedom (scipy), its
interval taken at the same level. With one run a side and no calibration there are no
degrees of freedom: the cell gives the ratio and says why there is no verdict.

A verdict is also withheld where drift may have made it whatever the test says: a side
whose run saw a busy machine (more runnable tasks than CPUs), or runs shorter than a
tenth of the calibration's (their medians spread more than it measured). Each such cell
says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vcsbench.results.drifting import UNDER
from vcsbench.results.spread import SpreadCell

ALPHA = 0.01
"""Between runs a verdict needs p below this: with 80 cells of an A/A, about one."""
POWER = 0.80
"""The power at which :func:`runs_needed` counts runs."""
MIN_ROUNDS = 10
"""Fewer successful rounds in a run and its median is not a run's level."""
LEVEL = 1 - ALPHA


@dataclass(frozen=True)
class Between:
    """One figure of one benchmark, base runs against other runs."""

    name: str
    base: tuple[float, ...]
    other: tuple[float, ...]
    ratio: float | None
    """Other over base: the ratio of the sides' geometric means (None: a figure missing)."""
    interval: tuple[float, float] | None
    p: float | None
    reach: float | None
    """The smallest change (a fraction: 0.12 is 12 %) that reads as one here."""
    detectable: float | None
    """The smallest change this comparison would find ``POWER`` of the time."""
    sd_log: float | None
    """The pooled run-to-run spread on the log scale."""
    df: int
    withheld: str = ""
    """Why there is no verdict although the test may have found one (busy, short runs)."""
    basis: str = ""
    """What the spread came from, for a person."""
    figure: str = ""
    """The calibration's figure the runs' values are: ``time_per_canary`` or
    ``time_per_writes`` where each run's value is its rounds over its canary or the
    canary's writes (the machine's drift taken out); "" for ``name`` itself."""

    @property
    def relative(self) -> str:
        """What the values are over, where not the median itself (for the cell)."""
        return f", against the {UNDER[self.figure]}" if self.figure in UNDER else ""

    @property
    def significant(self) -> bool:
        return self.p is not None and self.p < ALPHA and not self.withheld

    def text(self) -> str:
        ratio = self.ratio
        if ratio is None:
            return "n/a"
        shown = f"{ratio:.2f}x"
        if self.interval is not None:
            shown += f" [{self.interval[0]:.2f}–{self.interval[1]:.2f}]"
        if self.significant:
            word = ("slower" if ratio > 1 else "faster") if self.name == "time" else None
            word = word or ("more" if ratio > 1 else "less")
            factor = ratio if ratio >= 1 else 1 / ratio
            assert self.p is not None
            p = "p<0.001" if self.p < 0.001 else f"p={self.p:.3f}"
            return f"{factor:.2f}x {word} ({shown}, {p}{self.relative})"
        return f"~ {shown}{self.relative}: {self.why_none()}"

    def why_none(self) -> str:
        """Why the cell gives no verdict, in a few words (the footnote says more)."""
        if self.withheld:
            return self.withheld
        if self.df == 0:
            return "no verdict: one run a side, no spread measured"
        assert self.reach is not None
        return f"within run-to-run spread (beyond ±{100 * self.reach:.0f}% would be a change)"


def between(
    name: str,
    base: list[float | None],
    other: list[float | None],
    cell: SpreadCell | None,
    withheld: str = "",
    figure: str = "",
) -> Between:
    """``other``'s runs against ``base``'s (each value one run's figure), pooling the
    machine's calibration ``cell`` where there is one; ``figure``: the calibration's
    figure the values are, if not ``name`` (``time_per_canary``)."""
    key = figure or name
    if not base or not other or any(v is None or v <= 0 for v in (*base, *other)):
        kept_b = tuple(v for v in base if v is not None)
        kept_o = tuple(v for v in other if v is not None)
        return Between(
            name, kept_b, kept_o, None, None, None, None, None, None, 0, withheld, figure=figure
        )
    b = [math.log(v) for v in base if v is not None]
    o = [math.log(v) for v in other if v is not None]
    mean_b, mean_o = sum(b) / len(b), sum(o) / len(o)
    squares = sum((v - mean_b) ** 2 for v in b) + sum((v - mean_o) ** 2 for v in o)
    df = len(b) - 1 + len(o) - 1
    basis = []
    if df:
        basis.append(f"{len(b)} + {len(o)} runs")
    cell_sd = cell.sd_log(key) if cell is not None else None
    if cell is not None and cell_sd is not None:
        squares += cell.df(key) * cell_sd**2
        df += cell.df(key)
        basis.append(cell.basis(key))
    diff = mean_o - mean_b
    ratio = math.exp(diff)
    kept = (tuple(math.exp(v) for v in b), tuple(math.exp(v) for v in o))
    if df == 0:
        return Between(name, *kept, ratio, None, None, None, None, None, 0, withheld, figure=figure)
    sd = math.sqrt(squares / df)
    se = sd * math.sqrt(1 / len(b) + 1 / len(o))
    from scipy import stats

    t = stats.t
    critical = float(t.ppf(1 - ALPHA / 2, df))
    power = float(stats.norm.ppf(POWER))
    p = float(2 * t.sf(abs(diff) / se, df)) if se else (1.0 if diff == 0 else 0.0)
    interval = (math.exp(diff - critical * se), math.exp(diff + critical * se))
    return Between(
        name,
        *kept,
        ratio,
        interval,
        p,
        math.exp(critical * se) - 1,
        math.exp((critical + power) * se) - 1,
        sd,
        df,
        withheld,
        " and ".join(basis),
        figure,
    )


def runs_needed(sd_log: float, df: int, change: float, most: int = 50) -> int | None:
    """Runs a side for a change of ``change`` (a fraction) to read as one with ``POWER``
    probability, at the spread ``sd_log`` (known to ``df`` degrees of freedom besides the
    runs'); None if more than ``most``."""
    from scipy import stats

    effect = math.log1p(change)
    for n in range(1, most + 1):
        total = df + 2 * (n - 1)
        if total == 0:
            continue
        se = sd_log * math.sqrt(2 / n)
        reach = float(stats.t.ppf(1 - ALPHA / 2, total)) + float(stats.norm.ppf(POWER))
        if reach * se <= effect:
            return n
    return None


def single_run_reach(sd_log: float, df: int) -> float | None:
    """The smallest change one run a side can read as one at this spread (a fraction)."""
    if df < 1:
        return None
    from scipy import stats

    return math.exp(float(stats.t.ppf(1 - ALPHA / 2, df)) * sd_log * math.sqrt(2)) - 1
