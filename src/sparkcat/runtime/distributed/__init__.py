"""Distributed mode: Kafka Connect's cluster protocol, in Kafka's package shape.

A cluster is several workers with one ``group.id``. They form a Kafka group of protocol type
``connect``; the broker picks a leader, the leader assigns connectors and tasks, and every
worker shares state through the config, offset and status topics.

Modules (each documents its public API in its docstring):

``config``
    :class:`DistributedConfig` — Kafka's ``DistributedConfig`` keys, defaults and messages.
``protocol``
    Kafka's ``ConnectProtocol`` (v0, eager) and ``IncrementalCooperativeConnectProtocol``
    (v1 compatible, v2 sessioned) encodings of member metadata and assignments, byte-exact.
``assignor``
    Kafka's ``IncrementalCooperativeAssignor`` and ``EagerAssignor`` over plain data.
``membership``
    :class:`WorkerGroupMember` — the worker's membership of the group (kafka-python's
    ``BaseCoordinator``; kafka-python is used for nothing else).
``signing``
    Session keys and ``InternalRequestSignature`` for worker-to-worker REST requests.

Importing this package imports none of them (kafka-python loads only with ``membership``).
"""
