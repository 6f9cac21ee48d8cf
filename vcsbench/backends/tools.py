"""Options and tools: a variant's options parsed once, and the VCS's command-line tools
run without a shell and read back (their availability, their versions, another
release's tools from a directory)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vcsbench.errors import VcsbenchError
from vcsbench.process import child_env


@dataclass(frozen=True)
class Availability:
    ok: bool
    reason: str = ""


class ToolError(RuntimeError):
    """A VCS tool or library call failed; the message carries its stderr."""


def variant_label(name: str, options: Mapping[str, str], defaults: Mapping[str, str]) -> str:
    """``name[k=v,...]`` of the options that differ from their defaults; else ``name``."""
    changed = [f"{k}={v}" for k, v in options.items() if v != defaults[k]]
    return f"{name}[{','.join(changed)}]" if changed else name


def split_variant(text: str) -> tuple[str, dict[str, str]]:
    """``svn-fs[fs-type=fsx,compatible-version=1.8]`` -> ("svn-fs", {...})."""
    text = text.strip()
    if "[" not in text:
        return text, {}
    name, _, rest = text.partition("[")
    if not rest.endswith("]"):
        raise VcsbenchError(
            f"backend variant {text!r} does not end in ']'; write NAME[key=value,...]"
        )
    inner = rest[:-1]
    return name.strip(), parse_options([p for p in inner.split(",") if p.strip()])


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """Parse ``key=value`` strings; raise a one-line error for anything else."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise VcsbenchError(f"backend option {pair!r} is not of the form key=value")
        options[key.strip()] = value.strip()
    return options


def parse_bool(name: str, value: str) -> bool:
    lowered = value.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise VcsbenchError(f"option {name}={value!r} is not a boolean; use true or false")


def run_tool(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    """Run a tool without a shell; return stdout, raise :class:`ToolError` with stderr."""
    proc = subprocess.run(
        list(argv),
        cwd=cwd,
        env=child_env(env),
        input=stdin,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        stderr = proc.stderr.decode(errors="replace").strip()
        raise ToolError(f"{argv[0]} exited {proc.returncode}: {stderr}")
    return proc.stdout


def tool_availability(*tools: str) -> Availability:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        return Availability(False, f"{', '.join(missing)} not found on PATH")
    return Availability(True)


def tools_in(directory: str, names: Sequence[str], hint: str) -> dict[str, str]:
    """The tools a ``bin=DIR`` option names: each of ``names`` as DIR's executable (another
    release, a build of one), or with no DIR the PATH's. ``hint``: what DIR usually is."""
    if not directory:
        return {name: name for name in names}
    what = " and ".join(names)
    if not Path(directory).is_absolute():
        raise VcsbenchError(
            f"option bin={directory!r} is not an absolute directory; give the full path "
            f"of the directory that holds the {what} to run"
        )
    missing = [
        name
        for name in names
        if not ((Path(directory) / name).is_file() and os.access(Path(directory) / name, os.X_OK))
    ]
    if missing:
        raise VcsbenchError(
            f"option bin={directory!r}: no executable {', '.join(missing)} in it; give the "
            f"directory that holds the {what} to run ({hint})"
        )
    return {name: str(Path(directory) / name) for name in names}


def tool_version(argv: Sequence[str]) -> str:
    """First line of a tool's version output, or why it could not be read."""
    try:
        out = run_tool(argv)
    except (OSError, ToolError) as exc:
        return f"unavailable ({exc})"
    lines = out.decode(errors="replace").strip().splitlines()
    return lines[0] if lines else ""
