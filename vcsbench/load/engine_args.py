"""How the load engine's process is started, written and read in one place: as the run's
engine (a local runner, or a Locust master of ``workers`` workers at ``host:port``), or as
a Locust worker of a master at ``host:port``. Kept apart from ``engine.py``, which patches
the standard library for gevent when imported."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class EngineArgs:
    out: str = ""
    """The run's result file (the engine's records go beside it)."""
    workers: int = 0
    """A Locust master for this many workers; 0: a local runner."""
    host: str = ""
    port: int = 0
    worker: bool = False
    """A worker of the master at ``host:port``."""
    home: str = ""
    """A worker's directory for its clients' work."""

    def argv(self) -> list[str]:
        """The command that starts the engine's process with these arguments."""
        argv = [sys.executable, "-m", "vcsbench.load.engine"]
        if self.worker:
            argv += ["--worker", "--host", self.host, "--port", str(self.port)]
            return argv + (["--home", self.home] if self.home else [])
        argv += ["--run", self.out]
        if self.workers:
            argv += ["--master", str(self.workers), "--host", self.host, "--port", str(self.port)]
        return argv

    @classmethod
    def parse(cls, argv: list[str]) -> EngineArgs:
        parser = argparse.ArgumentParser(prog="vcsbench.load.engine")
        parser.add_argument("--run", dest="out", default="")
        parser.add_argument("--master", dest="workers", type=int, default=0)
        parser.add_argument("--host", default="")
        parser.add_argument("--port", type=int, default=0)
        parser.add_argument("--worker", action="store_true")
        parser.add_argument("--home", default="")
        return cls(**vars(parser.parse_args(argv)))
