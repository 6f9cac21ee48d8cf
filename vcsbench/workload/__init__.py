"""What both engines run: payloads (what is committed), operations (what is timed), and
seeds (a repository built once and copied into each round)."""

# A history (history:SOURCE) is a payload kind its module registers: loaded with the package.
from vcsbench.workload import history as _history  # noqa: F401
