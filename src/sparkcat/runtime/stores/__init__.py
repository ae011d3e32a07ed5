"""Kafka Connect's backing stores (Kafka's ``connect/runtime/storage`` package): connector
configs, source offsets and statuses, each in memory (standalone; offsets also in a file)
and in a compacted Kafka topic read back by a ``KafkaBasedLog`` (distributed). Both kinds
of a store pass the same contract tests (the offset and status stores read from one view);
``connector_offsets`` pairs a connector's own offsets topic with the worker's (KIP-618)."""
