"""What the Schema Registry converters share: their base class (set-up and schema caches),
config keys, the wire format, subject names and the per-process registry clients (Confluent's
``AbstractKafkaSchemaSerDe``)."""
