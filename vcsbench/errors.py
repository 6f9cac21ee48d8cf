"""Errors that reach the user as one line."""


class VcsbenchError(Exception):
    """A problem the user can fix: bad input, missing privilege, missing tool.

    The message is one line that names the bad value and what would be accepted;
    the command line prints it without a traceback and exits non-zero.
    """


class Refusal(VcsbenchError):
    """Bad input that shows only once a benchmark starts (a sandbox too small for the
    repositories asked): refused like bad input on the command line (one line, exit 2),
    not failed like a benchmark."""
