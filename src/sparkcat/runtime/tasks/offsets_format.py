"""The offsets REST format (KIP-875): parsing and checking ``{"offsets": [...]}`` bodies.

``PATCH /connectors/{name}/offsets`` and KIP-995's ``initial_offsets`` share these rules and
Kafka's messages:

* a body without entries → 400 ``Partitions / offsets need to be provided for an alter
  offsets request``;
* sink entries: ``{"partition": {"kafka_topic": str, "kafka_partition": int},
  "offset": {"kafka_offset": int} | null}`` (numeric strings are accepted), each mistake a
  400 with Kafka's text;
* source entries: partition and offset maps with ``str`` keys and primitive values. Kafka
  answers these mistakes with a 500; here they are client errors (400), like every other
  malformed body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.errors import DataError
from sparkcat.api.records import TopicPartition
from sparkcat.runtime.rest.errors import BadRequestError

NO_OFFSETS_MESSAGE = "Partitions / offsets need to be provided for an alter offsets request"

SourcePairs = list[tuple[dict[str, Any], dict[str, Any] | None]]
SinkOffsets = dict[TopicPartition, int | None]


def offset_entries(body: Any) -> list[Mapping[str, Any]]:
    """The entries of ``{"offsets": [...]}`` (or of a bare list); 400 if there are none or
    one is not an object."""
    entries = body.get("offsets") if isinstance(body, Mapping) else body
    if entries is None or (isinstance(entries, list | Mapping) and not entries):
        raise BadRequestError(NO_OFFSETS_MESSAGE)
    if not isinstance(entries, list):
        raise BadRequestError("'offsets' must be a JSON array of {partition, offset} objects")
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise BadRequestError(f"Invalid offsets entry {entry!r}: expected an object")
        unknown = set(entry) - {"partition", "offset"}
        if unknown:
            raise BadRequestError(
                f"Unrecognized field(s) {sorted(unknown)} in an offsets entry: only "
                "'partition' and 'offset' are allowed"
            )
    return entries


def source_pairs(entries: list[Mapping[str, Any]]) -> SourcePairs:
    """Source ``(partition, offset or None)`` pairs, checked as Kafka's offset store does."""
    from sparkcat.runtime.stores.offsets import validate_offset_map

    pairs: SourcePairs = []
    for entry in entries:
        partition, offset = entry.get("partition"), entry.get("offset")
        try:
            if partition is None:
                raise DataError("Partition objects cannot be null")
            validate_offset_map(partition)
            validate_offset_map(offset)
        except DataError as exc:
            raise BadRequestError(str(exc)) from exc
        pairs.append((dict(partition), None if offset is None else dict(offset)))
    return pairs


def _as_int(value: Any, message: str) -> int:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise BadRequestError(message)
    try:
        return int(value.strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise BadRequestError(message) from exc


def sink_offsets(entries: list[Mapping[str, Any]]) -> SinkOffsets:
    """Sink offsets per topic partition (``None`` = reset), with Kafka's 400 messages."""
    offsets: SinkOffsets = {}
    for entry in entries:
        partition, offset = entry.get("partition"), entry.get("offset")
        if not isinstance(partition, Mapping):
            raise BadRequestError(
                "The partition for a sink connector offset cannot be null or missing"
            )
        if "kafka_topic" not in partition or "kafka_partition" not in partition:
            raise BadRequestError(
                "The partition for a sink connector offset must contain the keys 'kafka_topic' "
                "and 'kafka_partition'"
            )
        topic = partition["kafka_topic"]
        if not isinstance(topic, str):
            raise BadRequestError("Kafka topic names must be valid strings and may not be null")
        if partition["kafka_partition"] is None:
            raise BadRequestError("Kafka partitions must be valid numbers and may not be null")
        number = _as_int(
            partition["kafka_partition"],
            "Failed to parse the following Kafka partition value in the provided offsets: "
            f"'{partition['kafka_partition']}'. Partition values for sink connectors need to be "
            "integers.",
        )
        if offset is None:
            offsets[TopicPartition(topic, number)] = None
            continue
        if not isinstance(offset, Mapping) or "kafka_offset" not in offset:
            raise BadRequestError(
                "The offset for a sink connector should either be null or contain the key "
                "'kafka_offset'"
            )
        offsets[TopicPartition(topic, number)] = _as_int(
            offset["kafka_offset"],
            "Failed to parse the following Kafka offset value in the provided offsets: "
            f"'{offset['kafka_offset']}'. Offset values for sink connectors need to be integers.",
        )
    return offsets


def modified_message(handled: bool, verb: str) -> str:
    """Kafka's success message of an offsets change; ``verb`` is ``altered`` or ``reset``."""
    if handled:
        return f"The offsets for this connector have been {verb} successfully"
    return (
        f"The Connect framework-managed offsets for this connector have been {verb} "
        "successfully. However, if this connector manages offsets externally, they will need "
        f"to be manually {verb} in the system that the connector uses."
    )


def initial_offsets_status(handled: bool) -> str:
    """KIP-995's ``offsets_status`` of a create request with ``initial_offsets``."""
    if handled:
        return "The offsets for this connector have been set successfully"
    return (
        "The framework-managed offsets for this connector have been set successfully. However, "
        "if this connector manages offsets externally, they will need to be manually set in the "
        "system that the connector uses."
    )


def sink_offsets_json(offsets: Mapping[TopicPartition, int]) -> dict[str, Any]:
    """``GET .../offsets`` of a sink connector."""
    return {
        "offsets": [
            {
                "partition": {"kafka_topic": tp.topic, "kafka_partition": tp.partition},
                "offset": {"kafka_offset": offset},
            }
            for tp, offset in sorted(offsets.items())
        ]
    }


__all__ = [
    "NO_OFFSETS_MESSAGE",
    "initial_offsets_status",
    "modified_message",
    "offset_entries",
    "sink_offsets",
    "sink_offsets_json",
    "source_pairs",
]
