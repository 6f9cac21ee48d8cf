"""A load engine whose sessions are known (the load engine's fake, as the known-work fakes
are for IO and the clock): it speaks the engine's protocol (:mod:`vcsbench.load.engine`),
and for each step of level L makes 10 x L deadline sessions through the real client of
the run's local path (the deadline scenario's verbs), in turn over the students, with
what each one does planted:

- session k of a step takes (k + 1) ms (its recorded latency);
- every fifth (k % 5 == 4) is refused (error ``refused``): no commit;
- in step 1, session 0 is recorded as a success but commits nothing (a lost commit),
  which the run's read-back must find and count as a ``verify`` error;
- each step's window is 2.0 s (the counters' clock), the counters otherwise empty;
- halfway through a step's sessions, a live message of the first half's (1 s of 2 s).

No Locust and no gevent: the step is a plain loop; the run's reduction, verification and
result file are what is under test.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from vcsbench.load.clients import make_client
from vcsbench.load.counters import nothing_counted
from vcsbench.load.engine_config import EngineConfig
from vcsbench.load.live import figures, percentiles
from vcsbench.load.repositories import submission
from vcsbench.load.scenario import Session
from vcsbench.load.scenarios import SCENARIOS
from vcsbench.sandbox.removal import remove_tree
from vcsbench.workload.payloads import load_payload

WINDOW_S = 2.0
FIELDS = ("step", "student", "visit", "t_intended", "t_start", "latency_s", "error", "retries")


def planned(index: int, level: float, students: int, visits: list[int]) -> list[dict[str, Any]]:
    """The sessions of step ``index``: who, which visit, how long, and what goes wrong."""
    sessions = []
    for k in range(int(10 * level)):
        student = k % students
        refused = k % 5 == 4
        if not refused:
            visits[student] += 1
        sessions.append(
            {
                "student": student,
                "visit": visits[student] if not refused else visits[student] + 1,
                "latency_s": (k + 1) / 1000,
                "error": "refused" if refused else None,
                "lost": index == 1 and k == 0,
            }
        )
    return sessions


def main() -> None:
    answers = sys.stdout
    config = EngineConfig.from_json(json.loads(sys.stdin.readline())["config"])
    home = Path(tempfile.mkdtemp(prefix="fake-engine-", dir=config.client_home))
    client = make_client(config, home / "client")
    payload = dict(load_payload(config.payload).files)
    visits = [0] * config.students
    deadline = SCENARIOS["deadline"]
    answers.write(json.dumps({"ready": {"client_pids": [], "engine": {"fake": "1"}}}) + "\n")
    answers.flush()
    for line in sys.stdin:
        request = json.loads(line)
        if "quit" in request:
            break
        index, level = int(request["step"]["index"]), float(request["step"]["level"])
        records: dict[str, list[Any]] = {key: [] for key in FIELDS}
        t0 = 100.0 * (index + 1)
        plan = planned(index, level, config.students, visits)
        for k, session in enumerate(plan):
            if k == len(plan) // 2:
                half = plan[:k]
                p50, p95 = percentiles([s["latency_s"] * 1000 for s in half])
                failed = sum(s["error"] is not None for s in half)
                message = figures(index, level, 1.0, WINDOW_S, len(half), failed, p50, p95)
                answers.write(json.dumps({"live": message}) + "\n")
                answers.flush()
            if session["error"] is None and not session["lost"]:
                files = submission(payload, session["student"], session["visit"])
                done = Session(session["student"], session["visit"], files)
                deadline.prepare_client(client, done)
                deadline.timed(client, done)
            for key, value in (
                ("step", index), ("student", session["student"]), ("visit", session["visit"]),
                ("t_intended", t0), ("t_start", t0), ("latency_s", session["latency_s"]),
                ("error", session["error"]), ("retries", 0),
            ):  # fmt: skip
                records[key].append(value)
        step = {
            "level": level, "before": nothing_counted(t0), "after": nothing_counted(t0 + WINDOW_S),
            "records": records, "details": ["planted: refused"], "writers": None,
        }  # fmt: skip
        answers.write(json.dumps({"done": step}) + "\n")
        answers.flush()
    client.close()
    remove_tree(home)
    answers.write(json.dumps({"bye": True}) + "\n")
    answers.flush()


if __name__ == "__main__":
    main()
