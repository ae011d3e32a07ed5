"""Debezium-compatible change data capture: the shared core of the CDC source connectors.

Topic names, key/value/envelope schemas, the ``source`` block, column type mapping, filters
and heartbeats are written here once, as Debezium's ``debezium-core`` does, so that each
database's connector (``postgres/``) only reads its change stream and snapshot.
"""
