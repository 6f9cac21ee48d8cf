"""The vcsbench suite for ``pytest benchmarks --benchmark-only`` (see vcsbench.bench.suite)."""

from vcsbench.bench.suite import test_vcs

__all__ = ["test_vcs"]
