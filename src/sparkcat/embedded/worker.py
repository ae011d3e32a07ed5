"""The worker config of an embedded member (:func:`worker_properties`).

The member itself is the distributed assembly,
:class:`~sparkcat.assembly.connect_distributed.ConnectDistributed`, as ``sparkcat
distributed`` runs it. Its REST endpoint always runs: followers forward leader-only writes
to the leader over it, as in Kafka. Without ``rest=True`` or a ``listeners`` key it listens
on a free loopback port only (enough for the processes of one machine); give ``listeners``
(and ``rest.advertised.host.name``) for a group spread over machines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
INTERNAL_LISTENER = "http://127.0.0.1:0"
REST_LISTENER = "http://:8083"


def worker_properties(app_id: str, config: Mapping[str, Any], rest: bool) -> dict[str, str]:
    """The worker config of member ``app_id``: ``config`` over the embedded defaults (group
    ``app_id``, topics ``<app_id>-configs|-offsets|-status``, JsonConverter as in the
    shipped worker files, the listener described in the module docs)."""
    props = {
        "group.id": app_id,
        "config.storage.topic": f"{app_id}-configs",
        "offset.storage.topic": f"{app_id}-offsets",
        "status.storage.topic": f"{app_id}-status",
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
    }
    given = string_map(config)
    if "listeners" not in given:
        props["listeners"] = REST_LISTENER if rest else INTERNAL_LISTENER
        if not rest:
            props["rest.advertised.host.name"] = "127.0.0.1"
    props.update(given)
    return props


def string_map(config: Mapping[str, Any]) -> dict[str, str]:
    """A config given in Python values as Kafka's strings (``True`` -> ``"true"``)."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}


__all__ = [
    "INTERNAL_LISTENER",
    "JSON_CONVERTER",
    "REST_LISTENER",
    "string_map",
    "worker_properties",
]
