"""``cmd``: a command of the user's, timed in each round's repository (``vcsbench time``).

``cmd[run=git gc -q]``: each round's repository is made untimed with the payload as its
first revision, by the backend under test; ``prepare=`` runs after that, untimed; then
``run=`` is timed, in the repository (its working directory), with
``$VCSBENCH_REPO``, ``$VCSBENCH_SCRATCH``, ``$VCSBENCH_VCS`` and ``$VCSBENCH_BACKEND`` set
and a ``bin=`` variant's directory first on ``$PATH``. Every call is contained
(:mod:`vcsbench.workload.contained`): what it starts is ended when it exits, and a call
longer than ``timeout=`` seconds (600) is ended and fails its round. A command with nothing a shell
must read (pipes, ``$``, ``;``, globs, redirection) runs as its words, without a shell;
otherwise through ``/bin/sh -c``, whose start is then in its time. Its output goes to
``/dev/null``; an exit status other than 0 fails the round (its stderr's first error
line, or else its last, says why), never a fast sample. Verified untimed: by ``check=``'s
exit status where given, else by the backend's reader finding the payload's revision
still the newest (a command that commits, rewrites or breaks the repository is caught;
give ``check=`` for one meant to change it). ``vcs=git`` (svn, hg) keeps a command to
the backends of that VCS.

The command is the user's own, from the command line; vcsbench never runs one read from a
result file (``--resume`` refuses a file that records one). Option values are written
with ``%``, ``,``, ``[`` and ``]`` as ``%25``, ``%2C``, ``%5B`` and ``%5D``
(:func:`encode`), so that any command is one option.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.files import Files
from vcsbench.errors import VcsbenchError
from vcsbench.results.commands import decode, encode
from vcsbench.workload.contained import call, command_group
from vcsbench.workload.operation import COMMIT_MESSAGE, Operation, RoundPaths
from vcsbench.workload.payloads import Payload

SHELL_CHARS = frozenset("|&;<>()$`*?{}~\n\\")
"""What only a shell reads: a command with one of them runs through ``/bin/sh -c``."""
MAX_COMMAND = 4096
DEFAULT_TIMEOUT_S = 600
"""How long one call of a command (run=, prepare=, check=) may take before it is ended
and its round is an error (``vcsbench time --timeout``)."""
MAX_TIMEOUT_S = 7 * 24 * 3600
VCSES = ("git", "svn", "hg")


def spec_text(
    run: str, prepare: str = "", check: str = "", vcs: str = "", timeout: str = ""
) -> str:
    """The operation's text for these commands: ``cmd[run=...]``."""
    options = {"vcs": vcs, "run": run, "prepare": prepare, "check": check, "timeout": timeout}
    inner = ",".join(f"{k}={encode(v)}" for k, v in options.items() if v)
    return f"cmd[{inner}]"


def argv_of(command: str) -> list[str]:
    """The process a command runs as: its words, or ``/bin/sh -c`` where a shell must
    read it."""
    if SHELL_CHARS & set(command):
        return ["/bin/sh", "-c", command]
    try:
        return shlex.split(command)
    except ValueError:  # an unclosed quote: the shell says what is wrong with it
        return ["/bin/sh", "-c", command]


class Command(Operation):
    name = "cmd"
    needs = frozenset({"create", "commit"})
    option_defaults: ClassVar[Mapping[str, str]] = {
        "run": "",
        "prepare": "",
        "check": "",
        "vcs": "",
        "timeout": str(DEFAULT_TIMEOUT_S),
    }
    summary = (
        "your command (`run=`), in a repository holding the payload, after `prepare=` "
        "(untimed); `vcsbench time` writes it"
    )
    checks = (
        "the command's exit status, then `check=`'s, or else the payload's revision still "
        "the newest, read back by the backend's verifier"
    )
    user_command = True

    @classmethod
    def check_options(cls, given: Mapping[str, str]) -> dict[str, str]:
        options = super().check_options(given)
        if not options["run"].strip():
            raise VcsbenchError(
                "operation cmd needs run=COMMAND, e.g. cmd[run=git gc -q] "
                "(or: vcsbench time 'git gc -q')"
            )
        for key in ("run", "prepare", "check"):
            if len(decode(options[key])) > MAX_COMMAND:
                raise VcsbenchError(
                    f"cmd's {key}= is {len(decode(options[key])):,} characters; "
                    f"at most {MAX_COMMAND:,} are accepted"
                )
        try:
            limit = float(options["timeout"])
        except ValueError:
            limit = -1.0
        if not 0 < limit <= MAX_TIMEOUT_S:
            raise VcsbenchError(
                f"cmd's timeout={options['timeout']!r} is not a number of seconds above 0 "
                f"and at most {MAX_TIMEOUT_S:,} (a call's time limit)"
            )
        if options["vcs"] not in ("", *VCSES):
            raise VcsbenchError(
                f"cmd's vcs={options['vcs']!r} is not a VCS; accepted: {', '.join(VCSES)}"
            )
        return options

    @classmethod
    def supports(cls, backend: type[Backend], given: Mapping[str, str]) -> bool:
        vcs = given.get("vcs", "")
        return super().supports(backend, given) and vcs in ("", backend.vcs)

    def _env(self, paths: RoundPaths) -> dict[str, str]:
        env = dict(os.environ)
        bin_dir = self.backend.options.get("bin", "")
        if bin_dir:
            env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env.update(
            VCSBENCH_REPO=str(paths.repo),
            VCSBENCH_SCRATCH=str(paths.scratch),
            VCSBENCH_VCS=self.backend.vcs,
            VCSBENCH_BACKEND=self.backend.name,
        )
        return env

    def _call(self, key: str, paths: RoundPaths, env: Mapping[str, str]) -> str:
        """Run option ``key``'s command in the round's repository, contained
        (:mod:`vcsbench.workload.contained`); "" or why it failed (from the first
        ``MAX_STDERR`` bytes of its stderr)."""
        command = decode(self.options[key])
        ended = call(self._argv[key], paths.repo, env, self.limit_s)
        if isinstance(ended, OSError):
            return f"{key}= could not start ({ended.strerror}): {command[:80]}"
        if ended.code is None:
            return (
                f"{key}= did not finish within {self.limit_s:g} s (the limit of a call, "
                "--timeout): ended, with every process it started"
            )
        if ended.code == 0:
            return ""
        lines = [x.strip() for x in ended.stderr.decode(errors="replace").splitlines() if x.strip()]
        # The line that says what went wrong: the first error or fatal one (git prints its
        # usage after it), else the last.
        flagged = [x for x in lines if x.lower().startswith(("error", "fatal", "svn: e"))]
        line = flagged[0] if flagged else lines[-1] if lines else ""
        return f"{key}= exited with {ended.code}" + (f": {line[:200]}" if line else "")

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(backend, payload, options)
        self._argv = {
            key: argv_of(decode(self.options[key])) for key in ("run", "prepare", "check")
        }
        """Each command's process, made once: nothing of it is parsed in a timed round."""
        self.limit_s = float(self.options["timeout"])
        command_group()  # made in this process, before any worker is forked
        self._round_env: dict[str, str] = {}
        """The round's environment, made in :meth:`prepare` (untimed)."""

    def prepare(self, paths: RoundPaths) -> None:
        self.backend.create_commit(paths.repo, self.payload.files, COMMIT_MESSAGE, paths.scratch)
        self._round_env = self._env(paths)  # made untimed; run() only uses it
        if self.options["prepare"]:
            failed = self._call("prepare", paths, self._round_env)
            if failed:
                raise VcsbenchError(failed)

    def run(self, paths: RoundPaths) -> None:
        failed = self._call("run", paths, self._round_env)
        if failed:
            raise VcsbenchError(failed)

    def expected(self) -> Files:
        return dict(self.payload.files)

    def verify(self, paths: RoundPaths) -> list[str]:
        if self.options["check"]:
            failed = self._call("check", paths, self._env(paths))
            return [failed] if failed else []
        return super().verify(paths)
