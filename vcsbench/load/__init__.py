"""Load: many clients at once against one sandbox's repositories, over the real servers.

:mod:`vcsbench.load.servers` starts and stops svnserve and git daemon on loopback;
:mod:`vcsbench.load.clients` is what one client does over each access path;
:mod:`vcsbench.load.engine` is the Locust process that runs the clients, step by step,
and keeps every request's latency; :mod:`vcsbench.load.run` sets it all up, verifies the
repositories afterwards and reduces the raw latencies to the steps' figures.
"""
