"""The assemblies: the running process of each mode, built from the same parts.

Kafka's ``ConnectStandalone`` and ``ConnectDistributed`` (its ``connect-*.sh`` mains) and the
``Connect`` object they build, which ties a herder, a worker, the stores and the REST server
together and stops them in order:

- :mod:`.connect_standalone` (:class:`ConnectStandalone`): one worker, configs in memory,
  source offsets in a file -- ``sparkcat standalone`` / ``connect-standalone``;
- :mod:`.connect_distributed` (:class:`ConnectDistributed`): one member of a group sharing
  the config, offset and status topics -- ``sparkcat distributed`` /
  ``connect-distributed`` and the embedded API (``sparkcat.Connect``);
- :mod:`.mirror_maker` (:class:`MirrorHerder` and its internal REST app): the MirrorMaker
  dedicated mode's per-flow herder -- one distributed group ``<source>-mm2`` per flow on the
  target cluster, shared by every node that runs the flow (KIP-710);
- :mod:`.process`: what every mode's process shares: logging, the PySpark environment, the
  embedded broker, the worker id, SIGINT/SIGTERM handling and the shutdown order (used by
  the MirrorMaker dedicated mode too).

These are composition roots: they import every layer (the Spark engine included), and only
the command lines, the embedded API and MirrorMaker import them.
"""
