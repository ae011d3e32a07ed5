"""Plugin discovery and the registry of built-in plugins (Kafka's ``isolation`` package)."""
