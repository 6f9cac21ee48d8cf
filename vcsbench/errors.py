"""Errors that reach the user as one line, and what no line may hold (a password)."""

import re


class VcsbenchError(Exception):
    """A problem the user can fix: bad input, missing privilege, missing tool.

    The message is one line that names the bad value and what would be accepted;
    the command line prints it without a traceback and exits non-zero.
    """


class Refusal(VcsbenchError):
    """Bad input that shows only once a benchmark starts (a sandbox too small for the
    repositories asked): refused like bad input on the command line (one line, exit 2),
    not failed like a benchmark."""


_URL_PASSWORD = re.compile(r"([a-z][a-z0-9+.-]*://[^:/@\s]*):[^@\s/]*@", re.IGNORECASE)
_KEY_PASSWORD = re.compile(r"(password=)[^&\s'\"]*", re.IGNORECASE)


def without_secrets(text: str) -> str:
    """``text`` with every password masked (``postgresql://user:***@host``,
    ``?password=***``, ``sslpassword=***``): what vcsbench records or prints of a command
    line, a URL or a driver's message never holds one."""
    return _KEY_PASSWORD.sub(r"\1***", _URL_PASSWORD.sub(r"\1:***@", text))
