"""The real servers vcsbench starts on 127.0.0.1 for a run, and how clients reach them.

:mod:`~vcsbench.servers.server` is one server process (its cgroup, its start and stop);
:mod:`~vcsbench.servers.daemons`, :mod:`~vcsbench.servers.apache` and
:mod:`~vcsbench.servers.ssh` make each kind; :mod:`~vcsbench.servers.tls` and the ssh
keys are the credentials made for the run; :mod:`~vcsbench.servers.distance` puts a
round-trip time and a bandwidth between clients and a server (toxiproxy);
:mod:`~vcsbench.servers.transports` names every way a client reaches a server (one
object each) and runs a server with what its clients need to trust it (a
:class:`~vcsbench.servers.transports.Service`). Both engines use it: ``vcsbench load``
for its server access paths, the benchmarks for a variant's ``remote=``.
"""
