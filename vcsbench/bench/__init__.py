"""The benchmark engine: a case's plan (``plan``), one run path -- every benchmark a member
of a group run in blocks (``group``) -- the round loop (``loop``) inside the benchmark
(``rounds``), where its rounds run (``placement``, ``workers``), the harness's record of
itself (``harness``), the option table and the pytest plugin for both doors. Combines
backends, sandboxes, servers, measurement and workloads; writes the result model."""
