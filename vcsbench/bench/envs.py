"""Another release of a backend's library: an environment of its own, built on demand.

A variant ``git-pygit2[version=1.15.1]`` runs its measured process in a virtual
environment made from this same interpreter, holding that release of the library and,
behind it, this vcsbench with everything it imports: the harness, probes and
verification are the same code for every version; only the library differs.

Environments are content-addressed and reused: the directory's name is a digest of the
requirement, the interpreter and the vcsbench installation it leans on, below
``$XDG_CACHE_HOME/vcsbench/envs`` (``~/.cache/vcsbench/envs``). One is built in a
temporary directory beside the others and renamed into place when the library imports at
the version asked, so a half-built environment is never used, and two runs building the
same one at once both end with one whole environment.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from vcsbench.backends.versions import ENV_BARE as BARE
from vcsbench.backends.versions import RANGE, check_version
from vcsbench.errors import VcsbenchError
from vcsbench.sandbox.removal import remove_tree

if TYPE_CHECKING:
    from vcsbench.backends import Variant

READY = ".vcsbench-env"
"""Written last into a built environment: what it holds, as one line per field."""


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vcsbench" / "envs"


def _home_site() -> str:
    """The site-packages vcsbench runs from (its virtual environment's)."""
    return sysconfig.get_paths()["purelib"]


@dataclass(frozen=True)
class Environment:
    """A built environment: its requirement, where it is, and what building it took."""

    requirement: str
    path: Path
    built_s: float | None
    """Seconds it took to build now; None: it was there (cached)."""

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def describe(self) -> dict[str, object]:
        return {
            "requirement": self.requirement,
            "path": str(self.path),
            "built_s": self.built_s,
            "how": "a virtual environment of this interpreter with --system-site-packages, "
            "the requirement installed by pip (wheels only), and vcsbench's own "
            "site-packages behind it; cached by a digest of the three",
        }


LAYOUT = f"pth: vcsbench's installation unless {BARE}"
"""What an environment's layout is, in its cache key: an environment of another layout is
built again rather than used."""


def environment(library: str, version: str, where: Path | None = None) -> Environment:
    """The environment holding ``library==version``, built now if it is not cached; a
    release that does not exist or does not install is one line naming the releases
    there are."""
    check_version(library, version)
    requirement = f"{library}=={version}"
    root = where or cache_root()
    home = _home_site()
    key = hashlib.sha256(
        "\n".join([requirement, sys.version, sys.base_prefix, home, LAYOUT]).encode()
    ).hexdigest()[:20]
    path = root / f"{library}-{version}-{key}"
    if (path / READY).is_file():
        return Environment(requirement, path, None)
    started = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".building-{path.name}-", dir=root))
    try:
        _build(building, library, version, home)
        try:
            os.rename(building, path)
        except OSError:
            if not (path / READY).is_file():  # not another run's whole environment
                raise
    finally:
        if building.exists():
            remove_tree(building)
    return Environment(requirement, path, time.perf_counter() - started)


def _build(target: Path, library: str, version: str, home: str) -> None:
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    made = subprocess.run(
        [str(base), "-m", "venv", "--system-site-packages", "--without-pip", str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if made.returncode != 0:
        last = (made.stderr.strip().splitlines() or ["no output"])[-1]
        raise VcsbenchError(f"{base} -m venv could not make an environment: {last}")
    python = target / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", str(python), "--disable-pip-version-check"]
    done = subprocess.run(
        [*pip, "install", "--quiet", "--only-binary", ":all:", f"{library}=={version}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise VcsbenchError(_pip_refusal(library, version, done.stderr))
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # vcsbench's own installation right behind the environment's packages (its .pth
    # files processed, so an editable vcsbench imports); the system's come after both.
    # A tool the environment installed (Mercurial's hg) runs with BARE set: without
    # vcsbench's installation, its start is the library's alone (20 ms less here).
    (Path(purelib) / "_vcsbench_env.pth").write_text(
        f"import os, site; os.environ.get({BARE!r}) or site.addsitedir({home!r})\n"
    )
    found = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m, sys, vcsbench; "
            f"print(m.version({library!r})); print(sys.modules['vcsbench'].__file__)",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    lines = found.stdout.split()
    if found.returncode != 0 or not lines or lines[0] != version:
        why = (found.stderr.strip().splitlines() or lines or ["no answer"])[-1]
        raise VcsbenchError(
            f"{library}=={version} installed but the environment does not import it at "
            f"that version ({why})"
        )
    (target / READY).write_text(f"requirement {library}=={version}\nhome {home}\n")


def _listed(stderr: str) -> list[str] | None:
    """The releases pip names when it cannot install the one asked ("from versions: ..."),
    oldest first; None where it names none."""
    found = re.search(r"\(from versions: ([^)]*)\)", stderr)
    if found is None:
        return None
    return [v.strip() for v in found.group(1).split(",") if v.strip()]


def _pip_refusal(library: str, version: str, stderr: str) -> str:
    """pip's answer as one line: the releases there are, when it names them."""
    versions = _listed(stderr)
    if versions is not None:
        shown = ", ".join(versions[-8:]) if versions else "none"
        return (
            f"{library} {version} is not a release pip can install here (wheels only); the "
            f"newest it can: {shown}"
        )
    last = (stderr.strip().splitlines() or ["no output"])[-1]
    return f"pip could not install {library}=={version}: {last}"


_RELEASES: dict[str, list[str]] = {}


def releases(library: str) -> list[str]:
    """The releases of ``library`` pip can install here as wheels for this interpreter,
    oldest first (pip's own list: it names them when asked for one that is not)."""
    if library not in _RELEASES:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
             "--disable-pip-version-check", "--only-binary", ":all:", f"{library}==0.0.0.0"],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        listed = _listed(done.stderr)
        if listed is None:
            last = (done.stderr.strip().splitlines() or ["no answer"])[-1]
            raise VcsbenchError(f"pip could not list the releases of {library}: {last}")
        _RELEASES[library] = listed
    return _RELEASES[library]


def release_key(release: str) -> tuple[int, ...] | None:
    """A plain release's numbers (``1.18.2`` -> (1, 18, 2)); None for a pre-release or
    anything else."""
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)+", release):
        return None
    return tuple(int(x) for x in release.split("."))


def between(library: str, good: str, bad: str) -> list[str]:
    """Every release of ``library`` pip can install here from ``good`` to ``bad``, oldest
    first (pre-releases left out); one line for a release it cannot install."""
    listed = releases(library)
    for name, given in (("--good", good), ("--bad", bad)):
        if given not in listed:
            raise VcsbenchError(
                f"{name} {given}: not a release of {library} pip can install here; the "
                f"latest it can: {', '.join(listed[-8:])}"
            )
    low, high = release_key(good), release_key(bad)
    if low is None or high is None or not low < high:
        raise VcsbenchError(f"--good {good} --bad {bad}: the good release is the older one")
    found = [(k, r) for r in listed if (k := release_key(r)) is not None and low <= k <= high]
    return [r for _, r in sorted(found)]


def expand_range(library: str, text: str) -> list[str]:
    """``1.14..1.21``: the last patch release of each minor from 1.14 to 1.21 that pip
    can install here (pre-releases left out); a release number: itself."""
    found = RANGE.match(text)
    if found is None:
        return [text]
    low = (int(found.group(1)), int(found.group(2)))
    high = (int(found.group(3)), int(found.group(4)))
    last: dict[tuple[int, int], tuple[tuple[int, ...], str]] = {}
    for release in releases(library):
        parts = release_key(release)
        if parts is None:
            continue
        minor = (parts[0], parts[1])
        if low <= minor <= high and (minor not in last or parts > last[minor][0]):
            last[minor] = (parts, release)
    if not last:
        raise VcsbenchError(
            f"no release of {library} from {text.replace('..', ' to ')} that pip can install "
            f"here; it can: {', '.join(releases(library)[-8:])}"
        )
    return [last[minor][1] for minor in sorted(last)]


_BUILT: dict[tuple[str, str], Environment] = {}


def environment_of(variant: Variant) -> Environment | None:
    """The environment a ``version=`` variant's measured process runs in (built now if
    it is not cached; once per process); None for this interpreter's library."""
    library = variant.cls.pypi
    if variant.version is None or library is None:
        return None
    key = (library, variant.version)
    if key not in _BUILT:
        _BUILT[key] = environment(library, variant.version)
    return _BUILT[key]


__all__ = [
    "RANGE",
    "Environment",
    "between",
    "cache_root",
    "environment",
    "environment_of",
    "expand_range",
    "releases",
]
