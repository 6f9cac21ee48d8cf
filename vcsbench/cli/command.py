"""One ``vcsbench`` command: its name, the options of its parser and its handler.

A new command is a module of this package that defines ``COMMAND`` and a line in the
registry (:data:`vcsbench.cli.COMMANDS`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Command:
    name: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    parser: dict[str, Any] = field(default_factory=dict)
    """What ``add_parser`` takes besides the name: help, description, epilog."""
