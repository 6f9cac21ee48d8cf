"""``cmd``: a command of the user's, timed in each round's repository (``vcsbench time``).

``cmd[run=git gc -q]``: each round's repository is made untimed with the payload as its
first revision, by the backend under test; ``prepare=`` runs after that, untimed; then
``run=`` is timed, in the repository (its working directory), with
``$VCSBENCH_REPO``, ``$VCSBENCH_SCRATCH``, ``$VCSBENCH_VCS`` and ``$VCSBENCH_BACKEND`` set
and a ``bin=`` variant's directory first on ``$PATH``. A command with nothing a shell
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
import subprocess
from collections.abc import Mapping
from typing import ClassVar

from vcsbench.backends import Backend
from vcsbench.backends.files import Files
from vcsbench.errors import VcsbenchError
from vcsbench.workload.operation import COMMIT_MESSAGE, Operation, RoundPaths
from vcsbench.workload.payloads import Payload

_CODES = (("%", "%25"), (",", "%2C"), ("[", "%5B"), ("]", "%5D"))
SHELL_CHARS = frozenset("|&;<>()$`*?{}~\n\\")
"""What only a shell reads: a command with one of them runs through ``/bin/sh -c``."""
MAX_COMMAND = 4096
MAX_STDERR = 64 << 10
"""A failed command's stderr kept to say why it failed."""
VCSES = ("git", "svn", "hg")


def encode(command: str) -> str:
    """``command`` as an option value (``%``, ``,``, ``[``, ``]`` escaped)."""
    for char, code in _CODES:
        command = command.replace(char, code)
    return command


def decode(value: str) -> str:
    for char, code in reversed(_CODES):
        value = value.replace(code, char)
    return value


def spec_text(run: str, prepare: str = "", check: str = "", vcs: str = "") -> str:
    """The operation's text for these commands: ``cmd[run=...]``."""
    options = {"vcs": vcs, "run": run, "prepare": prepare, "check": check}
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
        """Run option ``key``'s command in the round's repository; "" or why it failed
        (from the first ``MAX_STDERR`` bytes of its stderr; the rest is read and dropped)."""
        command = decode(self.options[key])
        try:
            proc = subprocess.Popen(
                self._argv[key],
                cwd=paths.repo,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            return f"{key}= could not start ({exc.strerror}): {command[:80]}"
        assert proc.stderr is not None
        kept = b""
        with proc.stderr:
            while chunk := proc.stderr.read(1 << 16):
                kept += chunk[: max(0, MAX_STDERR - len(kept))]
        code = proc.wait()
        if code == 0:
            return ""
        lines = [x.strip() for x in kept.decode(errors="replace").splitlines() if x.strip()]
        # The line that says what went wrong: the first error or fatal one (git prints its
        # usage after it), else the last.
        flagged = [x for x in lines if x.lower().startswith(("error", "fatal", "svn: e"))]
        line = flagged[0] if flagged else lines[-1] if lines else ""
        return f"{key}= exited with {code}" + (f": {line[:200]}" if line else "")

    def __init__(
        self, backend: Backend, payload: Payload, options: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(backend, payload, options)
        self._argv = {
            key: argv_of(decode(self.options[key])) for key in ("run", "prepare", "check")
        }
        """Each command's process, made once: nothing of it is parsed in a timed round."""
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
