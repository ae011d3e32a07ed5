"""Kafka's ``RestClient`` (``org.apache.kafka.connect.runtime.rest.RestClient``): a worker's
requests to the other workers of its cluster (forwarded writes, task configs, fencing)."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from typing import Any

from sparkcat.runtime.rest.tls import client_context

FORWARD_TIMEOUT_S = 90.0


class RestClient:
    """Kafka's ``RestClient``: this worker's requests to the other workers of its cluster.
    ``https`` URLs use the worker's own listener TLS settings (its keystore presented, its
    truststore trusted), so two workers in one process (the embedded API) keep their own."""

    def __init__(self, worker: Any = None) -> None:
        self._tls = None if worker is None else _client_tls(worker)

    def send(
        self,
        method: str,
        url: str,
        body: bytes,
        headers: dict[str, str],
        timeout_s: float = FORWARD_TIMEOUT_S,
    ) -> tuple[int, bytes]:
        """One HTTP request: ``(status, body)``; raises ``OSError`` when the worker cannot
        be reached."""
        request = urllib.request.Request(url, data=body or None, method=method, headers=headers)
        context = self._tls if url.lower().startswith("https:") else None
        try:
            with urllib.request.urlopen(request, timeout=timeout_s, context=context) as response:
                return int(response.status), bytes(response.read())
        except urllib.error.HTTPError as exc:
            return int(exc.code), bytes(exc.read())


def _client_tls(worker: Any) -> ssl.SSLContext | None:
    """What the worker's https listener settings name, for its outgoing requests."""
    originals = {k: v for k, v in worker.originals().items() if v is not None}
    listeners = originals.get("listeners", "")
    if (
        "https:" in str(listeners).lower()
        or str(originals.get("rest.advertised.listener", "")).lower() == "https"
    ):
        return client_context(originals)
    return None


__all__ = ["FORWARD_TIMEOUT_S", "RestClient"]
