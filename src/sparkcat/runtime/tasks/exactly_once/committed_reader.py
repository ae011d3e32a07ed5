"""Read a topic as ``read_committed`` should, on any broker: a test and operations helper.

The embedded broker (tansu) returns the records of aborted transactions to ``read_committed``
consumers and never fills ``aborted_transactions`` in fetch responses (a gap of tansu 0.6),
so no client library can tell committed records from
aborted ones there. The log itself still says: every transactional record batch carries its
producer id, and each transaction ends with a *control batch* (commit or abort marker) of the
same producer. This module fetches raw record batches with kafka-python's protocol classes
(librdkafka hides control batches and producer ids) and resolves every transactional record by
the first marker of its producer after it::

    view = read_topic("127.0.0.1:9092", "orders")      # every partition, to its end
    view.records                 # committed + non-transactional records, per partition in order
    view.aborted                 # records of aborted transactions (what tansu still shows)
    view.open                    # transactional records with no marker yet (not visible)

Records of a transaction still open at the high watermark are left out, as Kafka's
last-stable-offset rule does. Reads go to the partition leader from offset 0 to the high
watermark of the fetch response (ListOffsets is wrong on tansu).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka.admin import AdminClient

with warnings.catch_warnings():
    # kafka-python 3.0 reads its protocol schemas with a deprecated importlib.resources API.
    warnings.filterwarnings("ignore", "(read|open)_text is deprecated", DeprecationWarning)
    from kafka.net.compat import KafkaNetClient
    from kafka.protocol.consumer import FetchRequest
    from kafka.record.memory_records import MemoryRecords

__all__ = ["CommittedRecord", "TopicView", "read_topic"]

_MAX_FETCH_BYTES = 8 * 1024 * 1024
# kafka-python refuses frames above 1 MB by default; a broker may exceed max_bytes a little.
_MAX_FRAME_BYTES = 4 * _MAX_FETCH_BYTES
_READ_UNCOMMITTED = 0  # everything, markers included: transactions are resolved here
_NO_PRODUCER = -1
_MAX_WAIT_MS = 100


@dataclass(frozen=True, slots=True)
class CommittedRecord:
    """One data record as the log holds it."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    producer_id: int
    transactional: bool


@dataclass(slots=True)
class TopicView:
    """A topic read to its end, transactions resolved (see the module docs)."""

    topic: str
    records: list[CommittedRecord] = field(default_factory=list)
    aborted: list[CommittedRecord] = field(default_factory=list)
    open: list[CommittedRecord] = field(default_factory=list)
    commit_markers: int = 0
    abort_markers: int = 0

    def values(self, partition: int | None = None) -> list[bytes | None]:
        """Committed values in log order (of one partition, or of all, partition by partition)."""
        return [r.value for r in self.records if partition is None or r.partition == partition]


def read_topic(
    bootstrap_servers: str,
    topic: str,
    partitions: Iterable[int] | None = None,
    timeout_s: float = 30.0,
) -> TopicView:
    """Read ``topic`` (or only ``partitions``) from offset 0 to its end; see the module docs."""
    leaders = _leaders(bootstrap_servers, topic, timeout_s)
    wanted = sorted(leaders) if partitions is None else sorted(partitions)
    view = TopicView(topic)
    client = KafkaNetClient(
        bootstrap_servers=bootstrap_servers.split(","),
        client_id="sparkcat-committed-reader",
        receive_message_max_bytes=_MAX_FRAME_BYTES,
    )
    try:
        client._manager.bootstrap(int(timeout_s * 1000))
        for partition in wanted:
            batches = _fetch_all(client, leaders[partition], topic, partition, timeout_s)
            _resolve(view, partition, batches)
    finally:
        client.close()
    return view


def _leaders(servers: str, topic: str, timeout_s: float) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": servers})
    metadata = admin.list_topics(topic, timeout=timeout_s).topics.get(topic)
    if metadata is None or metadata.error is not None or not metadata.partitions:
        raise LookupError(
            f"Topic {topic} not found: {None if metadata is None else metadata.error}"
        )
    return {p: info.leader for p, info in metadata.partitions.items()}


def _fetch_all(client: Any, node: int, topic: str, partition: int, timeout_s: float) -> list[Any]:
    """Every record batch of the partition, from offset 0 to the high watermark."""
    deadline = time.monotonic() + timeout_s
    batches: list[Any] = []
    offset = 0
    while True:
        # tansu answers min_bytes=0 with no partitions at all: ask for 1 byte, wait briefly.
        request = FetchRequest(
            max_wait_ms=_MAX_WAIT_MS,
            min_bytes=1,
            max_bytes=_MAX_FETCH_BYTES,
            isolation_level=_READ_UNCOMMITTED,
            session_id=0,
            session_epoch=-1,
            topics=[
                FetchRequest.FetchTopic(
                    topic=topic,
                    partitions=[
                        FetchRequest.FetchTopic.FetchPartition(
                            partition=partition,
                            current_leader_epoch=-1,
                            fetch_offset=offset,
                            last_fetched_epoch=-1,
                            log_start_offset=-1,
                            partition_max_bytes=_MAX_FETCH_BYTES,
                        )
                    ],
                )
            ],
            forgotten_topics_data=[],
            rack_id="",
            max_version=11,
        )
        remaining_ms = int(max(deadline - time.monotonic(), 0.1) * 1000)
        response = client.send_and_receive(node, request, timeout_ms=remaining_ms)
        if not response.responses or not response.responses[0].partitions:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"No fetch answer for {topic}-{partition}")
            continue
        data = response.responses[0].partitions[0]
        if data.error_code:
            raise RuntimeError(f"Fetch of {topic}-{partition} failed: error {data.error_code}")
        high_watermark = data.high_watermark
        records = MemoryRecords(bytes(data.records or b""))
        progressed = False
        while True:
            batch = records.next_batch()
            if batch is None:
                break
            if batch.next_offset <= offset:
                continue  # the broker may return a batch that starts before the fetch offset
            batches.append(batch)
            offset = batch.next_offset
            progressed = True
        if offset >= high_watermark:
            return batches
        if not progressed and time.monotonic() >= deadline:
            raise TimeoutError(f"Reading {topic}-{partition} stalled at offset {offset}")


def _resolve(view: TopicView, partition: int, batches: Sequence[Any]) -> None:
    """Sort the records of ``batches`` into committed, aborted and open."""
    # The outcome of a producer's records is its next marker: walk backwards remembering the
    # latest marker seen per producer.
    outcome: dict[int, bool] = {}  # producer id -> committed?
    resolved: list[tuple[CommittedRecord, bool | None]] = []
    for batch in reversed(batches):
        producer = batch.producer_id if batch.magic >= 2 else _NO_PRODUCER
        if batch.magic >= 2 and batch.is_control_batch:
            for marker in batch:
                outcome[producer] = bool(marker.commit)
                if marker.commit:
                    view.commit_markers += 1
                else:
                    view.abort_markers += 1
            continue
        transactional = batch.magic >= 2 and bool(batch.is_transactional)
        state = outcome.get(producer) if transactional else True
        for record in reversed(list(batch)):
            headers = tuple((k, v) for k, v in (record.headers or ()))
            item = CommittedRecord(
                partition, record.offset, record.key, record.value, headers, producer,
                transactional,
            )  # fmt: skip
            resolved.append((item, state))
    for item, state in reversed(resolved):
        if state is True:
            view.records.append(item)
        elif state is False:
            view.aborted.append(item)
        else:
            view.open.append(item)
