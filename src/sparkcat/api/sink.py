"""Sink connectors: copy data from Kafka into an external system.

Counterparts of Kafka's ``org.apache.kafka.connect.sink`` package (``SinkConnector``,
``SinkTask``, ``SinkTaskContext``, ``ErrantRecordReporter``). Offsets here are Kafka
offsets per :class:`~sparkcat.api.records.TopicPartition`: the offset of the *next* record
to consume (last delivered + 1), committed to consumer group ``connect-<name>``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import Future
from typing import overload

from sparkcat.api.connector import Connector, ConnectorContext, Task
from sparkcat.api.records import SinkRecord, TopicPartition

TOPICS_CONFIG = "topics"
"""The sink connector config key listing the topics to consume (comma-separated)."""

TOPICS_REGEX_CONFIG = "topics.regex"
"""The sink connector config key with a regex of topics to consume."""


class ErrantRecordReporter(ABC):
    """Reports a record the sink task could not process (to the dead letter queue and/or the
    error log, as ``errors.*`` configure). Implemented by the runtime; thread-safe."""

    @abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report ``record`` as failed with ``error``. The returned future completes once the
        report is durable; the framework waits for all pending reports before committing
        offsets, so a task need not wait itself. Raises when ``errors.tolerance=none``."""


class SinkTaskContext(ABC):
    """The framework seen from a :class:`SinkTask`; implemented by the runtime and handed to
    :meth:`SinkTask.initialize` on the executor. Never pickled."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's current config."""

    @overload
    def offset(self, partition: TopicPartition, offset: int) -> None: ...

    @overload
    def offset(self, partition: Mapping[TopicPartition, int]) -> None: ...

    def offset(
        self, partition: TopicPartition | Mapping[TopicPartition, int], offset: int | None = None
    ) -> None:
        """Rewind or advance consumption: the next records of each partition start at the
        given offset (``offset(tp, n)`` or ``offset({tp: n, ...})``). Typical in
        :meth:`SinkTask.open` for a sink that stores its offsets in the destination."""
        if isinstance(partition, TopicPartition):
            if offset is None:
                raise TypeError("offset(tp, offset) needs an offset")
            self._reset_offsets({partition: offset})
        else:
            self._reset_offsets(dict(partition))

    @abstractmethod
    def _reset_offsets(self, offsets: dict[TopicPartition, int]) -> None:
        """The runtime's side of :meth:`offset`."""

    @abstractmethod
    def timeout(self, timeout_ms: int) -> None:
        """How long to wait before redelivering a batch after ``put`` raised
        :class:`~sparkcat.api.errors.RetriableError`."""

    @abstractmethod
    def assignment(self) -> set[TopicPartition]:
        """The partitions currently assigned to the task."""

    @abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop delivering records of ``partitions`` until :meth:`resume`."""

    @abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Deliver records of ``partitions`` again after :meth:`pause`."""

    @abstractmethod
    def request_commit(self) -> None:
        """Ask for an offset commit (``flush``/``pre_commit``) as soon as possible."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for bad records, or ``None`` when no DLQ or error log is configured."""
        return None


class SinkConnectorContext(ConnectorContext):
    """The :class:`ConnectorContext` of a sink connector (nothing extra, as in Kafka)."""


class SinkConnector(Connector):
    """A connector whose tasks write Kafka records to an external system (see
    :class:`Connector`). The framework handles ``topics``/``topics.regex`` and hands every
    task the topics in its config."""

    context: SinkConnectorContext

    def alter_offsets(
        self, config: Mapping[str, str], offsets: Mapping[TopicPartition, int | None]
    ) -> bool:
        """Called (on an unstarted instance, while the connector is STOPPED) before the
        framework alters or resets the consumer-group offsets through the REST API.

        ``None`` means reset that partition. Return ``True`` if nothing else needs changing,
        ``False`` (the default) if the connector also keeps offsets elsewhere. Raise
        :class:`~sparkcat.api.errors.ConnectError` to reject, ``NotImplementedError`` if
        offsets cannot be modified externally. Must be idempotent.
        """
        return False


class SinkTask(Task):
    """Writes records to an external system; one instance per task per lease.

    Called on a Spark executor, from one thread: instantiate (no arguments) →
    :meth:`initialize` → :meth:`start` → :meth:`open` (the partitions of this lease) →
    :meth:`put` per chunk of records (possibly empty) → :meth:`pre_commit` (by default
    :meth:`flush`) → :meth:`close` → :meth:`stop`. The offsets returned by
    :meth:`pre_commit` are committed by the worker after the lease.
    """

    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        """Called once before :meth:`start`; keeps ``context`` as :attr:`context`."""
        self.context = context

    def open(self, partitions: Collection[TopicPartition]) -> None:
        """The task now owns ``partitions``: create writers, or call
        ``context.offset(...)`` to start elsewhere. Default: nothing."""

    @abstractmethod
    def put(self, records: Sequence[SinkRecord]) -> None:
        """Write (or buffer) ``records``. They may be written asynchronously as long as
        :meth:`flush` makes them durable. Raise
        :class:`~sparkcat.api.errors.RetriableError` to get the same batch again later.

        ``records`` is a read-only sequence (Kafka: a ``Collection``): a list, or — on the
        columnar path, when no transformation is configured — a
        :class:`~sparkcat.api.batch.SinkRecordBatch`, which builds each ``SinkRecord`` only
        when indexed or iterated. A batch-aware task reads its columns instead
        (``records.values()``, ``.keys()``, ``.offsets()``, ``.to_arrow()``, ...) after an
        ``isinstance(records, SinkRecordBatch)`` check."""

    def flush(self, current_offsets: Mapping[TopicPartition, int]) -> None:
        """Make everything given to :meth:`put` durable. ``current_offsets`` maps each
        partition to the offset after the last record delivered. Default: nothing."""

    def pre_commit(
        self, current_offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        """The offsets that are safe to commit; by default :meth:`flush` then all of
        ``current_offsets``. Return fewer (or lower) offsets when writes are asynchronous;
        an empty dict skips the commit."""
        self.flush(current_offsets)
        return dict(current_offsets)

    def close(self, partitions: Collection[TopicPartition]) -> None:
        """The task no longer owns ``partitions``: release their writers. Default: nothing."""


__all__ = [
    "TOPICS_CONFIG",
    "TOPICS_REGEX_CONFIG",
    "ErrantRecordReporter",
    "SinkConnector",
    "SinkConnectorContext",
    "SinkTask",
    "SinkTaskContext",
]
