"""A command as an operation names it (``cmd[run=git gc -q,vcs=git]``): its text escaped
as an option value, and shown as the command again where results name it."""

from __future__ import annotations

CODES = (("%", "%25"), (",", "%2C"), ("[", "%5B"), ("]", "%5D"))
"""What an option value cannot hold, and how it is written there."""


def encode(command: str) -> str:
    """``command`` as an option value (``%``, ``,``, ``[``, ``]`` escaped)."""
    for char, code in CODES:
        command = command.replace(char, code)
    return command


def decode(value: str) -> str:
    for char, code in reversed(CODES):
        value = value.replace(code, char)
    return value


def command_of(op: str) -> str | None:
    """The command a ``cmd[run=...]`` operation times, or None for any other operation."""
    if not op.startswith("cmd[") or not op.endswith("]"):
        return None
    for pair in op[4:-1].split(","):  # a command's own commas are escaped
        key, _, value = pair.partition("=")
        if key.strip() == "run":
            return decode(value.strip())
    return None


def op_shown(op: str) -> str:
    """An operation as a person reads it: a command as itself, quoted; else its name."""
    command = command_of(op)
    return op if command is None else f"'{command}'"
