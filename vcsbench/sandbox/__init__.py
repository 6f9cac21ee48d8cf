"""Sandboxes: the filesystems benchmarks run in. Knows the OS, nothing about VCS."""

from vcsbench.sandbox.sandbox import (
    KINDS,
    SIGNALS,
    TORN_DOWN,
    FsSpec,
    Interrupted,
    Sandbox,
    SandboxInfo,
    default_signal_handlers,
    install_signal_handlers,
    open_sandbox,
    parse_fs_list,
    parse_fs_spec,
    require_root,
)
from vcsbench.sandbox.state import clean_stale, report_problems, state_dir

__all__ = [
    "KINDS",
    "SIGNALS",
    "TORN_DOWN",
    "FsSpec",
    "Interrupted",
    "Sandbox",
    "SandboxInfo",
    "clean_stale",
    "default_signal_handlers",
    "install_signal_handlers",
    "open_sandbox",
    "parse_fs_list",
    "parse_fs_spec",
    "report_problems",
    "require_root",
    "state_dir",
]
