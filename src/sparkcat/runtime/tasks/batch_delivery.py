"""The delivery reports of polled :class:`~sparkcat.api.batch.SourceRecordBatch`\\ es, for
``SourceTask.commit_batch`` (re-exported by :mod:`~sparkcat.runtime.tasks.columnar`, whose
columnar source path produces the batches)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import repeat
from operator import methodcaller
from typing import Any

from sparkcat.api.batch import RecordMetadataBatch, SourceRecordBatch
from sparkcat.api.records import SourceRecord

__all__ = ["BatchDelivery"]

_OFFSET = methodcaller("offset")


class BatchDelivery:
    """The delivery reports of one polled batch, for ``SourceTask.commit_batch``.

    The lease creates one per batch when the task overrides ``commit_batch``; the batch's
    records are produced with :meth:`callbacks` (or :meth:`record_callback` on the
    per-record path), and once :attr:`complete`, :meth:`metadata` gives where each record
    landed. Two ways to pair reports with records:

    * *ordered*: one bound method for every record, reports appended as they come. Used when
      every record names its partition and the producer keeps a partition's records in
      order (``max.in.flight.requests.per.connection=1`` or idempotence): then the k-th
      report of a partition is the k-th record sent to it, at no per-record Python cost
      beyond the report itself;
    * *exact*: a ``partial`` per record carrying its index (~1 us more a record).

    ``on_error(record, err)`` handles a failed send: ``True`` when error tolerance skipped
    it (its offset is then ``-1``), ``False`` when the task fails (the batch then never
    completes, so it is never committed).
    """

    __slots__ = ("_by_index", "_on_error", "_reports", "arrived", "batch", "ordered", "size")

    def __init__(
        self,
        batch: SourceRecordBatch,
        on_error: Callable[[Any, Any], bool],
        ordered: bool,
    ) -> None:
        self.batch = batch
        self.size = len(batch)
        self.ordered = ordered
        self.arrived = 0
        self._on_error = on_error
        self._reports: list[Any] = []
        self._by_index: list[Any] | None = None

    @property
    def complete(self) -> bool:
        return self.arrived == self.size

    def callbacks(self) -> Iterable[Callable[[Any, Any], None]]:
        """One delivery callback per record of the batch, in order (the columnar path)."""
        batch = self.batch
        # Ordered pairing needs one topic: reports of different topics' partitions come in
        # no particular order relative to each other.
        one_partition = batch.kafka_partitions is not None or batch.kafka_partition is not None
        if self.ordered and batch.topics is None and one_partition:
            return repeat(self._report, self.size)
        self._by_index = [None] * self.size
        return map(partial, repeat(self._report_at), range(self.size))

    def record_callback(
        self, records: list[SourceRecord]
    ) -> Callable[[SourceRecord], Callable[[Any, Any], None]]:
        """The per-record path's ``record_callback`` for the batch's ``records``."""
        self._by_index = [None] * self.size
        index = {id(record): i for i, record in enumerate(records)}
        report_at = self._report_at
        return lambda record: partial(report_at, index[id(record)])

    def _report(self, err: Any, msg: Any) -> None:
        if err is not None and not self._on_error(None, err):
            return
        self._reports.append(msg)
        self.arrived += 1

    def _report_at(self, index: int, err: Any, msg: Any) -> None:
        if err is not None and not self._on_error(self.batch[index], err):
            return
        assert self._by_index is not None
        # (None, None) is a record dropped by a transformation or skipped by tolerance.
        self._by_index[index] = msg if err is None else None
        self.arrived += 1

    def metadata(self) -> RecordMetadataBatch:
        """Where each record landed (call once :attr:`complete`)."""
        if self._by_index is not None:
            return _exact_metadata(self.batch.topic_column(), self._by_index)
        batch = self.batch
        reports = self._reports
        if batch.kafka_partitions is not None:
            partitions = list(batch.kafka_partitions)
        else:  # ordered mode: the batch names its one partition
            partitions = [-1 if batch.kafka_partition is None else batch.kafka_partition]
            partitions *= self.size
        first = partitions[0]
        if batch.kafka_partitions is None or partitions.count(first) == self.size:
            offsets = list(map(_OFFSET, reports))
        else:
            # The k-th report of a partition is the k-th record sent to it.
            queues: dict[int, list[int]] = {}
            for report in reports:
                queues.setdefault(report.partition(), []).append(report.offset())
            per_partition = {p: iter(q) for p, q in queues.items()}
            offsets = [next(per_partition[p]) for p in partitions]
        if min(offsets, default=0) < 0:  # a failed send that tolerance skipped
            offsets = [o if o >= 0 else -1 for o in offsets]
        return RecordMetadataBatch(list(batch.topic_column()), partitions, offsets)


def _exact_metadata(batch_topics: Sequence[str], reports: list[Any]) -> RecordMetadataBatch:
    topics, partitions, offsets = [], [], []
    for topic, report in zip(batch_topics, reports, strict=True):
        if report is None:
            topics.append(topic)
            partitions.append(-1)
            offsets.append(-1)
        else:
            offset = report.offset()
            topics.append(report.topic())
            partitions.append(report.partition())
            offsets.append(offset if offset >= 0 else -1)
    return RecordMetadataBatch(topics, partitions, offsets)
