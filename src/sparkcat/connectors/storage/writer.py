"""TopicPartitionWriter: the open files of one Kafka partition and when they rotate.

Rotation follows Confluent's ``TopicPartitionWriter``: all open files of the partition (one
per encoded partition) are written together when ``flush.size`` records were written since
the last rotation (checked after a record), when a record's timestamp is ``rotate.interval.ms``
or more past the first one's, or its encoded partition differs from the previous record's
(time-based partitioners only; checked before the record), when a record's value schema
differs from its file's (before), and when the wall clock passes the next multiple of
``rotate.schedule.interval.ms``. Except for the last, each rotation point depends only on
the records from the start of the files, so a re-run from the same offset writes the same
objects with the same content.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from sparkcat.api import Schema
from sparkcat.api.errors import DataError
from sparkcat.api.records import SinkRecord
from sparkcat.connectors.storage.formats import Format
from sparkcat.connectors.storage.naming import Naming
from sparkcat.connectors.storage.partitioners import Partitioner, PartitionError, now_ms
from sparkcat.connectors.storage.store import Store

log = logging.getLogger(__name__)

Report = Callable[[SinkRecord, BaseException], object]


@dataclass(slots=True)
class _OpenFile:
    topic: str
    start: int
    schema: Schema | None
    records: list[SinkRecord] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class WriterSettings:
    flush_size: int
    rotate_interval_ms: int
    rotate_schedule_interval_ms: int
    rotate_on_partition_change: bool
    ignore_null_values: bool


class TopicPartitionWriter:
    """Buffers the records of one partition into files and uploads each file whole."""

    def __init__(
        self,
        partition: int,
        settings: WriterSettings,
        parts: tuple[Partitioner, Format, Naming, Store],
        report: Report | None,
        now_ms: int,
    ) -> None:
        self.partition = partition
        self.settings = settings
        self.partitioner, self.format, self.naming, self.store = parts
        self.report = report
        self.extractor = self.partitioner.timestamp_extractor
        self.files: dict[str, _OpenFile] = {}
        self.record_count = 0
        self.base_timestamp: int | None = None
        self.current_encoded: str | None = None
        self.next_scheduled = self._next_schedule(now_ms)
        self.uploaded: list[str] = []  # object keys written, in order

    @property
    def pending_start(self) -> int | None:
        """The first offset not yet in an uploaded file, or ``None`` when nothing is open."""
        return min((f.start for f in self.files.values()), default=None)

    def write(self, record: SinkRecord, now_ms: int) -> None:
        if record.value is None:
            self._null_value(record)
            return
        try:
            timestamp = self.extractor.extract(record, now_ms) if self.extractor else None
            encoded = self.partitioner.encode_partition(record, now_ms)
            self.format.check(record)
        except (PartitionError, DataError) as exc:
            self._errant(record, exc)
            return
        if self._rotate_on_time(encoded, timestamp, now_ms):
            self.commit_files("time")
        open_file = self.files.get(encoded)
        if open_file is not None and open_file.schema != record.value_schema:
            self.commit_files("schema change")
            open_file = None
        if open_file is None:
            open_file = _OpenFile(record.topic, record.kafka_offset, record.value_schema)
            self.files[encoded] = open_file
        if self.base_timestamp is None:
            self.base_timestamp = timestamp
        open_file.records.append(record)
        self.current_encoded = encoded
        self.record_count += 1
        if self.record_count >= self.settings.flush_size:
            self.commit_files("flush.size")

    def _rotate_on_time(self, encoded: str, timestamp: int | None, now_ms: int) -> bool:
        if self.record_count <= 0:
            return False
        s = self.settings
        if s.rotate_interval_ms > 0 and self.extractor is not None:
            if s.rotate_on_partition_change and encoded != self.current_encoded:
                return True
            if (
                timestamp is not None
                and self.base_timestamp is not None
                and timestamp - self.base_timestamp >= s.rotate_interval_ms
            ):
                return True
        return self.scheduled_rotation_due(now_ms)

    def scheduled_rotation_due(self, now_ms: int) -> bool:
        return self.settings.rotate_schedule_interval_ms > 0 and now_ms >= self.next_scheduled

    def maybe_rotate_on_schedule(self, now_ms: int) -> None:
        """Rotate when the wall clock passed the scheduled rotation (from ``put([])`` too)."""
        if self.record_count > 0 and self.scheduled_rotation_due(now_ms):
            self.commit_files("schedule")

    def _next_schedule(self, now_ms: int) -> int:
        interval = self.settings.rotate_schedule_interval_ms
        if interval <= 0:
            return 0
        return now_ms - now_ms % interval + interval

    def commit_files(self, reason: str) -> None:
        """Upload every open file whole (its object name from its first offset)."""
        for encoded, open_file in self.files.items():
            path = self.partitioner.partitioned_path(open_file.topic, encoded)
            key = self.naming.file_key(path, open_file.topic, self.partition, open_file.start)
            self.store.put(key, self.format.encode(open_file.records))
            self.uploaded.append(key)
            log.debug("Uploaded %s (%d records, %s)", key, len(open_file.records), reason)
        self.files.clear()
        self.record_count = 0
        self.base_timestamp = None
        if self.settings.rotate_schedule_interval_ms > 0:
            self.next_scheduled = self._next_schedule(now_ms())

    def discard(self) -> None:
        """Drop what is buffered: those offsets are not committed, the next lease re-reads
        them and writes the same files."""
        self.files.clear()
        self.record_count = 0

    def _null_value(self, record: SinkRecord) -> None:
        if self.settings.ignore_null_values:
            log.debug("Ignoring the null value of %s", _where(record))
            return
        self._errant(
            record,
            DataError(
                f"Record {_where(record)} has a null value and behavior.on.null.values=fail "
                "(set behavior.on.null.values=ignore to skip tombstones)"
            ),
        )

    def _errant(self, record: SinkRecord, exc: Exception) -> None:
        if self.report is None:
            raise exc
        log.warning("Sending record %s to the error handler: %s", _where(record), exc)
        self.report(record, exc)


def _where(record: SinkRecord) -> str:
    return f"{record.topic}-{record.kafka_partition}@{record.kafka_offset}"


__all__ = ["TopicPartitionWriter", "WriterSettings"]
