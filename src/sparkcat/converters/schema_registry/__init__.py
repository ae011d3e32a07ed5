"""What the Schema Registry converters share: config keys, the wire format, subject names and
the per-process registry clients (Confluent's ``AbstractKafkaSchemaSerDe``)."""
