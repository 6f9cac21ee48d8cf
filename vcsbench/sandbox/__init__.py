"""Sandboxes: the filesystems benchmarks run in. Knows the OS, nothing about VCS."""

from vcsbench.sandbox.sandbox import (
    KINDS,
    FsSpec,
    Sandbox,
    SandboxInfo,
    clean_stale,
    install_signal_handlers,
    open_sandbox,
    parse_fs_list,
    parse_fs_spec,
    require_root,
    state_dir,
)

__all__ = [
    "KINDS",
    "FsSpec",
    "Sandbox",
    "SandboxInfo",
    "clean_stale",
    "install_signal_handlers",
    "open_sandbox",
    "parse_fs_list",
    "parse_fs_spec",
    "require_root",
    "state_dir",
]
