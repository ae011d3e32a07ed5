"""Source connectors: copy data from an external system into Kafka.

Counterparts of Kafka's ``org.apache.kafka.connect.source`` package (``SourceConnector``,
``SourceTask``, ``SourceTaskContext``, ``ExactlyOnceSupport``,
``ConnectorTransactionBoundaries``, ``TransactionContext``), of ``storage.
OffsetStorageReader`` and of the producer's ``RecordMetadata``.

Source partitions and offsets are maps with string keys and primitive values (``str``,
``int``, ``float``, ``bool``, ``None``): the framework stores them as JSON, keyed by
``["<connector>", {partition}]`` exactly as Kafka Connect does. Python ``dict`` objects are
not hashable, so where Kafka uses a ``Map<partition, offset>`` this API uses a list of
``(partition, offset)`` pairs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

from sparkcat.api.batch import RecordMetadataBatch, SourceRecordBatch
from sparkcat.api.connector import Connector, ConnectorContext, Task
from sparkcat.api.records import SourceRecord

SourcePartition = Mapping[str, Any]
SourceOffset = Mapping[str, Any]


class ExactlyOnceSupport(Enum):
    """Whether a source connector can give exactly-once delivery with a config (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorTransactionBoundaries(Enum):
    """Whether a source connector can define its own transaction boundaries (KIP-618)."""

    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class RecordMetadata(NamedTuple):
    """Where Kafka stored a record, passed to :meth:`SourceTask.commit_record`.

    ``offset`` and ``timestamp`` are ``-1`` when unknown (as in Kafka's producer).
    """

    topic: str
    partition: int
    offset: int
    timestamp: int


class OffsetStorageReader(ABC):
    """Reads the offsets the framework stored for this connector's source partitions.

    Implemented by the runtime. On an executor, the reader answers from the offsets the
    worker placed in the lease plan (the committed offsets at the start of the lease), so a
    task reads its start offsets once, in ``start()`` or its first ``poll()``.
    """

    @abstractmethod
    def offset(self, partition: SourcePartition) -> dict[str, Any] | None:
        """The last committed offset of ``partition``, or ``None`` if there is none."""

    def offsets(
        self, partitions: Iterable[SourcePartition]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """``(partition, offset)`` pairs for those of ``partitions`` that have an offset,
        in the given order (Kafka returns a map; dicts cannot be dict keys in Python)."""
        pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for partition in partitions:
            found = self.offset(partition)
            if found is not None:
                pairs.append((dict(partition), found))
        return pairs


class TransactionContext(ABC):
    """Lets a task define transaction boundaries (``transaction.boundary=connector``).

    Calls are requests: the framework commits or aborts the transaction after the records
    polled so far (or, with ``record``, up to and including ``record``) have been sent. A
    record-level request wins over a batch-level one.
    """

    @abstractmethod
    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        """Commit after the current batch, or after ``record`` when it is given."""

    @abstractmethod
    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        """Abort after the current batch, or after ``record`` when it is given; the aborted
        records are discarded but their offsets are still committed."""


class SourceTaskContext(ABC):
    """The framework seen from a :class:`SourceTask`; implemented by the runtime and handed
    to :meth:`SourceTask.initialize` on the executor. Never pickled."""

    @abstractmethod
    def configs(self) -> dict[str, str]:
        """The task's current config."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of this connector's committed source offsets."""

    def transaction_context(self) -> TransactionContext | None:
        """Non-``None`` only with exactly-once support and ``transaction.boundary=connector``."""
        return None


class SourceConnectorContext(ConnectorContext):
    """A :class:`ConnectorContext` that also reads the connector's source offsets."""

    @abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reader of this connector's committed source offsets (worker's main process)."""


class SourceConnector(Connector):
    """A connector whose tasks read from an external system (see :class:`Connector`).

    Runs in the worker's main process; ``context`` is a :class:`SourceConnectorContext`.
    """

    context: SourceConnectorContext

    def exactly_once_support(self, config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """Whether the connector gives exactly-once delivery with ``config``; ``None`` (the
        default) means "unknown" and fails ``exactly.once.support=required``. May be called on
        an unstarted instance."""
        return None

    def can_define_transaction_boundaries(
        self, config: Mapping[str, str]
    ) -> ConnectorTransactionBoundaries:
        """Whether tasks can use :class:`TransactionContext` with ``config``; default
        ``UNSUPPORTED``. May be called on an unstarted instance."""
        return ConnectorTransactionBoundaries.UNSUPPORTED

    def alter_offsets(
        self,
        config: Mapping[str, str],
        offsets: Sequence[tuple[SourcePartition, SourceOffset | None]],
    ) -> bool:
        """Called (on an unstarted instance, while the connector is STOPPED) before the
        framework alters (``PATCH``) or resets (``DELETE``) offsets through the REST API.

        ``offsets`` pairs each partition with its new offset, ``None`` meaning reset. Raise
        :class:`~sparkcat.api.errors.ConnectError` to reject them. Return ``True`` if the
        connector handled them fully (e.g. it only uses framework-managed offsets and has
        validated them), ``False`` (the default) if offsets kept elsewhere may need manual
        changes. Must be idempotent. Raise ``NotImplementedError`` if offsets cannot be
        modified externally at all.
        """
        return False


class SourceTask(Task):
    """Reads records from an external system; one instance per task per lease.

    Called on a Spark executor, from one thread unless noted: instantiate (no arguments) →
    :meth:`initialize` → :meth:`start` → :meth:`poll` repeatedly (each returned record goes
    through transformations and converters to Kafka; :meth:`commit_record` once Kafka acked
    it, or :meth:`commit_batch` once per acked batch) → :meth:`commit` after offsets were
    stored → :meth:`stop` → :meth:`stopped`.

    ``poll`` must return within a short time even when there is no data (return ``None`` or
    ``[]`` after waiting a little, say up to a second): the framework calls it repeatedly
    until the lease ends and cannot interrupt it. :meth:`stop` may be called from another
    thread while :meth:`poll` runs, and more than once.

    **KIP-419**: :meth:`stopped` is called exactly once, as the last call on the instance,
    after every :meth:`poll`, :meth:`commit` and :meth:`commit_record` has returned: release
    resources (connections, files) there rather than in :meth:`stop`.
    """

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        """Called once before :meth:`start`; keeps ``context`` as :attr:`context`."""
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """The next records, or ``None``/``[]`` when none are available right now.

        A task may return a :class:`~sparkcat.api.batch.SourceRecordBatch` instead of a
        list (the columnar path: a topic, or a topic and schemas per record, a column of
        values, one partition/offset run per source partition); without transformations the
        framework then converts and sends whole columns, with no ``SourceRecord`` per
        record. The committed offsets are the same as for the records one by one (each
        run's last), as long as the run's offset is the one after its last record.

        Raising :class:`~sparkcat.api.errors.RetriableError` makes the framework poll again;
        any other exception fails the task.
        """

    def commit(self) -> None:
        """Every record returned by :meth:`poll` so far is in Kafka; default: nothing.

        Called at the end of each lease on the executor: after Kafka acknowledged the records
        (at-least-once), or after the task's transaction committed them with their offsets
        (exactly-once). In at-least-once mode the worker stores those offsets just *after*
        this call, on the driver, so a crash in between replays the records. A task that
        acknowledges data in its source system (a replication slot, a queue) should therefore
        acknowledge only up to the offsets its ``offset_storage_reader`` returns when it
        starts, as a restarted Kafka Connect task would see them."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """``record`` was written to Kafka at ``metadata``, or was dropped by a transformation
        or skipped by error tolerance (``metadata`` is ``None``); default: nothing.

        Called on the executor, possibly from the producer's delivery thread. Not called for
        the records of a :class:`~sparkcat.api.batch.SourceRecordBatch` when the task
        overrides :meth:`commit_batch`.
        """

    def commit_batch(self, batch: SourceRecordBatch, metadata: RecordMetadataBatch) -> None:
        """Every record of ``batch``, a :class:`~sparkcat.api.batch.SourceRecordBatch` this
        instance returned from :meth:`poll`, was written to Kafka where ``metadata`` says
        (offset ``-1``: dropped by a transformation or skipped by error tolerance); default:
        nothing.

        The batch-level twin of :meth:`commit_record`, for a task that must know where its
        records landed (MirrorMaker 2's offset syncs) without a Python call per record.
        Contract:

        - called by the framework on the task's own thread (the one calling :meth:`poll`,
          never the producer's delivery thread), between two :meth:`poll` calls or after the
          last one, and always before :meth:`commit`;
        - once per batch, in the order :meth:`poll` returned the batches, and only when every
          record of the batch was acknowledged by Kafka (with exactly-once support: written
          into the lease's transaction, as for :meth:`commit_record`). A batch whose delivery
          failed, or was not acknowledged when the lease ended, gets no call; its source
          offsets are not committed either, so its records are polled again;
        - when a task overrides it, the records of its batches get no :meth:`commit_record`
          calls (records returned in a list still do).

        It works whatever path the batch took: column by column, or record by record when
        transformations are configured. An exception it raises is logged and does not fail
        the task (Kafka's rule for ``commitRecord``).
        """

    def stopped(self) -> None:
        """The final call on this instance (KIP-419), exactly once; default: nothing."""


__all__ = [
    "ConnectorTransactionBoundaries",
    "ExactlyOnceSupport",
    "OffsetStorageReader",
    "RecordMetadata",
    "SourceConnector",
    "SourceConnectorContext",
    "SourceOffset",
    "SourcePartition",
    "SourceTask",
    "SourceTaskContext",
    "TransactionContext",
]
