"""Kafka Connect's REST API (Kafka's ``connect/runtime/rest`` package): the FastAPI app and its
routes (``/connectors``, ``/connector-plugins``, ``/admin/loggers``, the internal
``/connectors/{c}/tasks`` and ``/fence`` calls between workers, ``/metrics`` and the status
page), Kafka's entities and ``{"error_code", "message"}`` errors, the server with its
listeners, TLS and basic auth, and the client workers use to forward requests to the leader.
Handlers parse, call the herder once and render; no business rules live here."""
