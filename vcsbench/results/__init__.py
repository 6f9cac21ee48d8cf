"""Results: the model every benchmark is stored as, the metric registry, and the reader.

Knows nothing about how numbers were taken; report and compare read only this.
"""

from vcsbench.results.environment import BackendInfo, FilesystemInfo, Machine, PayloadInfo
from vcsbench.results.io import parse, read, read_many
from vcsbench.results.metrics import METRICS, MetricDef, metric
from vcsbench.results.migrate import SCHEMA_VERSION
from vcsbench.results.model import Benchmark, Run
from vcsbench.results.rounds import Metric, RoundError, Rounds
from vcsbench.results.schema import SchemaError

__all__ = [
    "METRICS",
    "SCHEMA_VERSION",
    "BackendInfo",
    "Benchmark",
    "FilesystemInfo",
    "Machine",
    "Metric",
    "MetricDef",
    "PayloadInfo",
    "RoundError",
    "Rounds",
    "Run",
    "SchemaError",
    "metric",
    "parse",
    "read",
    "read_many",
]
