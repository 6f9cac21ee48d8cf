"""distance: what a round trip between a client and its server costs each VCS's protocol.

MarkUs's students are remote. A clone (svn: a checkout), an update and a commit sent to
the server (``publish``: git and hg commit and push, svn commits) are timed by one
client at round trips of 0, 10, 50 and 100 ms (toxiproxy, each measured before use) over
the transports remote students use: Subversion's DAV over HTTPS (Apache, mod_ssl,
mod_dav_svn) and svnserve, git's smart HTTPS and SSH, and Mercurial's hgweb over HTTPS.
The slope of the median time against the measured round trip is how many round trips the
operation makes the client wait for; the intercept is what it costs with none. No
figures of this kind are published to set beside these.
"""

from __future__ import annotations

from collections.abc import Sequence

from vcsbench.report.format import render_rows
from vcsbench.results.model import Benchmark, Run
from vcsbench.servers.transports import TRANSPORTS
from vcsbench.studies.base import ANSWER, Study

PATHS = (
    ("svn-cli", "apache-svn-https"),
    ("svn-cli", "svnserve"),
    ("git-cli", "apache-git-https"),
    ("git-cli", "git-ssh"),
    ("hg-cli", "apache-hg-https"),
)
"""The transports the question is about: remote students reach a server over HTTPS (svn's
DAV, git's smart HTTP, hgweb) or SSH; svnserve is Subversion's other door. Plain HTTP and
the rest: ``--backends 'svn-cli[remote=apache-svn,rtt=50]'`` and so on."""
RTTS_MS = (0, 10, 50, 100)
VARIANTS = ",".join(
    f"{backend}[remote={transport},rtt={rtt}]" for backend, transport in PATHS for rtt in RTTS_MS
)
OPS = {"clone": "clone (svn: checkout)", "update": "update", "publish": "commit sent"}
"""The study's operations as its tables name them (svn's checkout is its clone)."""


def measured_rtt_ms(bench: Benchmark) -> float | None:
    """The round trip a client saw through the proxy before the benchmark (its median)."""
    found = ((bench.harness.server or {}).get("distance") or {}).get("calibration")
    value = (found or {}).get("measured_rtt_ms")
    return float(value) if isinstance(value, int | float) else None


def line_fit(points: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """Least squares: (slope, intercept) of y against x; None for fewer than two x."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    return slope, my - slope * mx


SLOPE_LEVEL = 0.95


def slope_text(points: Sequence[tuple[float, float]]) -> str:
    """The slope with its interval from the fit's residuals (Student's t, n - 2 degrees of
    freedom; scipy's linregress): the distances ran one after the other, so the residuals
    hold the machine's drift between them as well. With two distances there is none."""
    fit = line_fit(points)
    if fit is None:
        return "—"
    if len(points) < 3:
        return f"{fit[0]:.2f} (2 distances: no interval)"
    from scipy import stats

    found = stats.linregress([x for x, _ in points], [y for _, y in points])
    half = float(stats.t.ppf(0.5 + SLOPE_LEVEL / 2, len(points) - 2)) * float(found.stderr)
    low, high = fit[0] - half, fit[0] + half
    shown = f"{fit[0]:.2f} [{low:.2f}–{high:.2f}]"
    # an interval that holds 0 shows no round trip waited for, whatever the slope reads
    return shown + (" (holds 0: no round trip shown)" if low <= 0 <= high else "")


def path_label(backend: str, transport: str) -> str:
    """An access path in words (``git over smart HTTPS (Apache, mod_ssl)``), never a
    variant."""
    known = TRANSPORTS.get(transport)
    if known is None:
        return f"{backend}[remote={transport}]" if transport else f"{backend} (local)"
    return known.label


def _path_of(bench: Benchmark) -> tuple[str, str]:
    return bench.backend.name, bench.backend.options.get("remote", "")


def _answer(slopes: dict[str, list[tuple[float, str, str]]]) -> str:
    """Per operation, the access paths by the round trips they wait for, most first."""
    parts = [
        f"- {OPS[op]}: "
        + "; ".join(f"{label} {text}" for _, label, text in sorted(found, reverse=True))
        for op, found in slopes.items()
        if found
    ]
    if not parts:
        return ""
    return (
        f"**Round trips each access path waits for** (the slope of its time against the "
        f"round trip, with its {SLOPE_LEVEL:.0%} interval), most first:\n\n"
        + "\n".join(parts)
        + "\n"
    )


def distance_tables(runs: list[Run]) -> dict[str, str]:
    """The answer (per operation, the paths by the round trips they wait for), then a
    table per operation: a row per access path, its median at each round trip (asked;
    measured beneath), the round trips it waited for (the slope) and its time without
    distance (the intercept)."""
    benches = [b for run in runs for b in run.benchmarks]
    out: dict[str, str] = {}
    slopes: dict[str, list[tuple[float, str, str]]] = {}
    for op, op_label in OPS.items():
        ours = [b for b in benches if b.op == op or (op == "clone" and b.op == "checkout")]
        if not ours:
            continue
        rtts = sorted({int(b.backend.options.get("rtt") or 0) for b in ours})
        headers = ["access path", *(f"{r} ms" for r in rtts), "round trips", "at 0 ms"]
        rows = []
        for key in dict.fromkeys(_path_of(b) for b in ours):
            row_benches = {
                int(b.backend.options.get("rtt") or 0): b for b in ours if _path_of(b) == key
            }
            cells, points = [], []
            for rtt in rtts:
                bench = row_benches.get(rtt)
                median = bench.median_ms if bench is not None else None
                seen = measured_rtt_ms(bench) if bench is not None else None
                if median is None:
                    cells.append("—")
                    continue
                cells.append(f"{median:,.1f}" + (f" ({seen:.1f})" if seen is not None else ""))
                if seen is not None:
                    points.append((seen, median))
            fit = line_fit(points)
            slope = slope_text(points)
            intercept = f"{fit[1]:,.1f} ms" if fit else "—"
            label = path_label(*key)
            rows.append([label, *cells, slope, intercept])
            if fit is not None:
                slopes.setdefault(op, []).append((fit[0], label, slope))
        table = render_rows(headers, rows, text_columns=1)
        notes = (
            f"{op_label}: median ms of the verified rounds at each requested round trip, "
            "the round trip the client measured through the proxy in brackets. Round "
            "trips: the least-squares slope of the medians against the measured round "
            "trip -- how many round trips the client waited for -- with its 95% interval from "
            "the fit's residuals (the distances ran one after the other, so drift between "
            "them widens it); at 0 ms: the line's "
            "intercept. A TCP handshake with the proxy is not delayed (it accepts on "
            "loopback at once), so each new connection's own handshake is not in the "
            "count; TLS's and SSH's are."
        )
        out[op] = f"### {op_label}\n\n{table}\n\n_{notes}_\n"
    answer = _answer(slopes)
    return ({ANSWER: answer} if answer else {}) | out


STUDY = Study(
    name="distance",
    summary=(
        "clone, update and a commit sent to the server, by one client at round trips of "
        "0, 10, 50 and 100 ms over svn's DAV (HTTPS) and svnserve, git's smart HTTPS and SSH, "
        "and hgweb (HTTPS): the slope of time against the round trip is the round trips each needs"
    ),
    backends=VARIANTS,
    ops="clone,checkout,update,publish",
    payloads="hello",
    fs="tmpfs",
    repos=10,
    tables=distance_tables,
    vcs=("svn", "git", "hg"),
)
