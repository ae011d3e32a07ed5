"""Kafka Connect's metrics: measured per lease on executors (:mod:`.counters`), added up
with windowed rates in the worker (:mod:`.registry`, :mod:`.stats`), served as Prometheus
text (:mod:`.prometheus`). Group and metric names are Kafka's (:mod:`.names`)."""
