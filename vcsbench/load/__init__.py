"""Load: many clients at once against one sandbox's repositories, over the real servers.

:mod:`vcsbench.load.plan` parses a run's options once (access paths, scenario, sandbox);
:mod:`vcsbench.load.paths` and :mod:`vcsbench.load.scenarios` are those as objects;
:mod:`vcsbench.load.clients` is what one client does over each access path (a local
client's process: :mod:`vcsbench.load.client_process`); :mod:`vcsbench.load.engine` is the Locust
process that runs the clients step by step and keeps every request's latency, driven one
step at a time by :mod:`vcsbench.load.driver`; :mod:`vcsbench.load.run` is the loop over
steps that sets it all up, verifies the repositories and keeps each step's figures.
"""
