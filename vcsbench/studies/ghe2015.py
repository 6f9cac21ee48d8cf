"""ghe2015: concurrent clones ramped over HTTPS and SSH, as the GitHub Enterprise load
tests of 2015 behind this project ramped them.

Those tests cloned a real repository with more and more clients at once, over HTTPS and
over SSH, drew a boxplot of clone times per step beside the clones per second, and marked
every failed clone; the transports behaved differently under load (one hit its listen
backlog, the other its firewall), and regressions showed only as the concurrent clones
ramped up until errors appeared. No figures were published to set beside a run. This
study ramps 1 to 16 clients cloning one repository over git's smart HTTPS and SSH, and
Subversion's (DAV over HTTPS, svn+ssh) and Mercurial's (hgweb over HTTPS, hg-ssh)
counterparts, each server started with the run's own certificate or keys.
"""

from __future__ import annotations

from vcsbench.report.format import cell, level_text
from vcsbench.results import Run
from vcsbench.results.load import Load
from vcsbench.servers.apache import MAX_REQUEST_WORKERS
from vcsbench.servers.ssh import MAX_STARTUPS
from vcsbench.studies.base import LoadStudy

SOURCE = (
    "GitHub Enterprise's load tests (2015): concurrent clones of a real repository ramped "
    "over HTTPS and SSH; per step a boxplot of clone times, clones per second and the "
    "failed clones; the transports behaved differently under load (the listen backlog of "
    "one, the firewall of the other) and regressions showed only as the clones ramped up "
    "until errors appeared"
)


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def ghe_tables(study: LoadStudy, closed: Run, open_: Run | None) -> str:
    """Per access path: clones per second and p95 at each step, the errors, the capacity;
    then the post's findings beside the run's."""
    load: Load | None = closed.load
    assert load is not None
    entries = load.paths
    levels = [f"{row.level:g}" for row in entries[0].steps] if entries else []
    lines = [
        f"### Clones ramped from {levels[0] if levels else '?'} to "
        f"{levels[-1] if levels else '?'} at once",
        "",
        "| access path | clones/s at "
        + " / ".join(levels)
        + " clients | p95 ms at "
        + " / ".join(levels)
        + " | errors | capacity |",
        "|---|---|---|---|---|",
    ]
    for entry in entries:
        rates = " / ".join(
            "—" if row.ops_per_s is None else f"{row.ops_per_s:,.1f}" for row in entry.steps
        )
        p95 = " / ".join(_ms(row.p95_ms) for row in entry.steps)
        errors = sum(row.error_count for row in entry.steps)
        level = entry.capacity.level
        capacity = "—" if level is None else level_text(load, level)
        lines.append(f"| {cell(entry.label)} | {rates} | {p95} | {errors:,} | {capacity} |")
    served = [entry for entry in entries if entry.steps]
    failing = [entry.label for entry in served if any(row.error_count for row in entry.steps)]

    def top(vcs: str, ending: str) -> str:
        """Clones per second at the top step of the VCS's path over HTTPS or SSH."""
        found = [e for e in served if e.vcs == vcs and e.label.endswith(ending)]
        rate = found[0].steps[-1].ops_per_s if found else None
        return "—" if rate is None else f"{rate:,.1f}"

    top_level = levels[-1] if levels else "?"
    by_vcs = "; ".join(
        f"{vcs} HTTPS {top(vcs, '-https')}, SSH {top(vcs, '-ssh')}"
        for vcs in dict.fromkeys(e.vcs for e in served)
    )

    lines += [
        "",
        "| | the 2015 post | this run |",
        "|---|---|---|",
        "| errors as clones ramped up | appeared past some step (listen backlog, firewall) "
        f"| {'in ' + ', '.join(failing) if failing else 'none on any path'} |",
        f"| HTTPS and SSH under load | behaved differently | clones/s at {top_level} "
        f"clients: {by_vcs} |",
        "",
        f"_{SOURCE}. Here sshd allows {MAX_STARTUPS} unauthenticated connections at once "
        "(MaxStartups; its default of 10:30:100 drops some beyond 10) and Apache "
        f"{MAX_REQUEST_WORKERS} requests at once: the limits the post ran into are set "
        "where a host sets them. The "
        "boxplots: `vcsbench report RESULT --plots DIR`._",
        "",
    ]
    return "\n".join(lines)


STUDY = LoadStudy(
    "ghe2015",
    "concurrent clones of one repository ramped from 1 to 16 clients over git's smart "
    "HTTPS and SSH, and svn's (DAV over HTTPS, svn+ssh) and hg's (hgweb over HTTPS, "
    "hg-ssh), as GitHub Enterprise's 2015 load tests ramped them",
    "apache-git-https,git-ssh,apache-svn-https,svn-ssh,apache-hg-https,hg-ssh",
    "ext4",
    16,
    "1,2,4,8,16",
    "",
    8.0,
    16,
    "many-files",
    SOURCE,
    ghe_tables,
    scenario="clone-storm",
    history=100,
)
