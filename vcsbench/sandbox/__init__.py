"""Sandboxes: the filesystems benchmarks run in. Knows the OS, nothing about VCS."""

from vcsbench.sandbox.cleanup import clean_stale, report_problems
from vcsbench.sandbox.sandbox import Sandbox, SandboxInfo, open_sandbox
from vcsbench.sandbox.spec import (
    KINDS,
    FsSpec,
    parse_fs_list,
    parse_fs_spec,
    require_root,
)
from vcsbench.sandbox.state import state_dir

__all__ = [
    "KINDS",
    "FsSpec",
    "Sandbox",
    "SandboxInfo",
    "clean_stale",
    "open_sandbox",
    "parse_fs_list",
    "parse_fs_spec",
    "report_problems",
    "require_root",
    "state_dir",
]
