"""The options of ``vcsbench load``, defined once: ``vcsbench load`` adds them to its
parser (:func:`add_load_options`) and a study builds its plan from the same table
(:meth:`vcsbench.load.plan.LoadPlan.parse`, which checks every value)."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from vcsbench.load.scenarios import SCENARIOS
from vcsbench.servers.server import HOST
from vcsbench.servers.transports import TRANSPORTS
from vcsbench.workload.option import OptionDef

SHAPES = ("closed", "open")


LOAD_OPTIONS: tuple[OptionDef, ...] = (
    OptionDef(
        "scenario",
        "deadline",
        f"{', '.join(SCENARIOS)}: "
        + "; ".join(f"{s.name}: {s.summary}" for s in SCENARIOS.values())
        + " (default deadline)",
    ),
    OptionDef(
        "paths",
        "svnserve,git-daemon",
        "access paths, comma-separated: "
        + "; ".join(f"{t.name}: {t.summary}" for t in TRANSPORTS.values())
        + "; local:BACKEND (e.g. local:svn-fs, local:git-pygit2: a backend in a process "
        "of each client's own; with its options, local:git-pygit2[fsync=true] for a git "
        "as durable as svn); default svnserve,git-daemon",
    ),
    OptionDef("fs", "tmpfs", "sandbox filesystem spec (default tmpfs)"),
    OptionDef(
        "rtt",
        "",
        "round-trip times between the clients and each server path, comma-separated "
        "milliseconds (e.g. 0,10,50ms): every path is run at each, through toxiproxy on "
        "127.0.0.1, the round trip measured before it is used (default: none, direct)",
        metavar="MS,...",
    ),
    OptionDef(
        "bandwidth",
        "",
        "with --rtt: a bandwidth each way between clients and server, e.g. 100mbit (default: none)",
        metavar="RATE",
    ),
    OptionDef("students", 800, "students (default 800)", kind=int),
    OptionDef(
        "shape",
        "closed",
        "closed (default): --steps are client counts, each submitting back to back; "
        "open: --steps are arrivals per second, sessions arrive on schedule whatever the "
        "server does and latency counts from the scheduled arrival",
    ),
    OptionDef(
        "arrivals",
        "fixed",
        "open loop: fixed (default: evenly spaced) or poisson[:SEED] (exponential gaps, "
        "as independent users arrive; seeded, default seed 1: the same times every run)",
        metavar="fixed|poisson[:SEED]",
    ),
    OptionDef(
        "think",
        "0",
        "closed loop: each client's pause between its sessions, seconds: S, or LO-HI drawn "
        "evenly between them (Locust's between), seeded per client (default 0: back to back)",
        metavar="S|LO-HI",
    ),
    OptionDef(
        "steps",
        "1,2,4,8",
        "one step each: client counts (closed) or arrivals per second (open); default 1,2,4,8",
    ),
    OptionDef(
        "max-clients",
        64,
        "open loop: clients that may be busy at once (default 64); an arrival with none "
        "free waits, and the wait counts in its latency",
        kind=int,
    ),
    OptionDef("step-seconds", 10.0, "each step's length (default 10)", kind=float),
    OptionDef(
        "step-ops",
        0,
        "end a step after this many sessions started, if sooner than --step-seconds",
        kind=int,
    ),
    OptionDef(
        "mix",
        "commit=80,update=15,clone=5",
        "mixed: each kind's share of the sessions, KIND=WEIGHT for commit (a student's "
        "submission), update (a student's working copy brought to the newest revision) and "
        "clone (of the --history repository) (default commit=80,update=15,clone=5)",
        metavar="KIND=N,...",
    ),
    OptionDef(
        "history",
        100,
        "clone-storm, mixed: revisions of the cloned repository (default 100)",
        kind=int,
    ),
    OptionDef("payload", "submission", "what a student submits (default submission)"),
    OptionDef(
        "age",
        "0",
        "repositories the server holds before the load, made as vcsbench run --age makes "
        "them: N alike, or a term's population with histories, packed as a server keeps "
        "them, term:students=S,assignments=A,commits=LO-HI[,seed=N][,content=PAYLOAD]; "
        "with a term, deadline and mixed students commit into their own (student k into "
        "the term's repository k) (default 0)",
        metavar="N|term:...",
    ),
    OptionDef(
        "precreate",
        False,
        "make every repository before the load (else a student's first session does)",
        kind=bool,
    ),
    OptionDef(
        "capacity-factor",
        2.0,
        "capacity: the highest step, while throughput rises, whose p95 stays within this "
        "factor of the lowest step p95 (default 2)",
        kind=float,
    ),
    OptionDef("port", 0, "the server's port (default: a free one)", kind=int),
    OptionDef(
        "workers",
        0,
        "Locust worker processes on this machine, under a Locust master (default 0: one "
        "process runs every user)",
        kind=int,
    ),
    OptionDef(
        "expect-workers",
        0,
        "run a Locust master that waits for N workers started elsewhere with "
        "'vcsbench load-worker HOST:PORT' (server paths only; see --listen)",
        kind=int,
        metavar="N",
    ),
    OptionDef(
        "master-bind",
        HOST,
        "with --expect-workers: the address the master listens on (default 127.0.0.1)",
        metavar="HOST",
    ),
    OptionDef(
        "master-port",
        0,
        "with --expect-workers: the master's port (default: a free one, printed)",
        kind=int,
    ),
    OptionDef(
        "listen",
        HOST,
        "the address the servers listen on and their URLs name (default 127.0.0.1; "
        "workers on other machines need one they can reach)",
        metavar="HOST",
    ),
    OptionDef(
        "live",
        "auto",
        "the running step, every 2 s: its sessions so far, failures, p50 and p95 (before "
        "they are verified): auto (default: one line rewritten on a terminal, else a line "
        "every 10 s), lines (a line each time), or none",
        metavar="auto|lines|none",
    ),
    OptionDef(
        "fail-on",
        "",
        "errors: exit 1 when any session failed or an access path could not be run "
        "(default: exit 0 whatever the sessions did; the figures say)",
    ),
    OptionDef(
        "plan",
        "",
        "a capacity plan in the summary: what N submissions in a window ask of the disk "
        "on each path (write IOPS, flushes/s, MB/s) from the figures measured per session, "
        "e.g. students=10000,window=60m",
        metavar="students=N,window=T",
    ),
)
FAIL_ON = ("", "errors")


def add_load_options(
    add: Callable[..., Any],
    *,
    defaults: dict[str, Any] | None = None,
    exclude: Container[str] = (),
) -> None:
    """Add every load option through ``add`` (an argparse ``add_argument``)."""
    for option in LOAD_OPTIONS:
        if option.name in exclude:
            continue
        default = (defaults or {}).get(option.name, option.default)
        kwargs: dict[str, Any] = {"dest": option.dest, "help": option.help.replace("%", "%%")}
        if option.kind is bool:
            kwargs["action"] = "store_true"
        else:
            kwargs.update(type=option.kind, default=default)
        if option.metavar:
            kwargs["metavar"] = option.metavar
        add(f"--{option.name}", **kwargs)
