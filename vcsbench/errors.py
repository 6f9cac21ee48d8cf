"""Errors that reach the user as one line."""


class VcsbenchError(Exception):
    """A problem the user can fix: bad input, missing privilege, missing tool.

    The message is one line that names the bad value and what would be accepted;
    the command line prints it without a traceback and exits non-zero.
    """
