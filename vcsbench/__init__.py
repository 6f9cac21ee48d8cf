"""vcsbench: micro-benchmarks for version-control backends."""

from vcsbench.errors import VcsbenchError

__version__ = "0.2.0"

__all__ = ["VcsbenchError", "__version__"]
