"""The benchmark engine: payloads, operations, the round loop, the floor, the option table,
the pytest plugin and the suite. Combines backends, sandboxes and measurement; writes the
result model."""
