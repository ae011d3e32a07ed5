"""The storage sink task: records -> per-partition writers -> whole objects.

Exactly-once by deterministic names. A lease (one instance of this task) writes a file only
when it rotates, as Confluent's connector does; ``pre_commit`` approves, per partition, the
offsets up to the first record still buffered in an unwritten file (all of them when no file
is open). At the end of a lease the buffered records are dropped, not written: the next lease
starts at the committed offset, which is where those files start, re-reads the same records
and rotates at the same points, so every object name has one content. After a crash, a re-run
from the last committed offset rewrites the same objects with the same bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sparkcat.api.records import SinkRecord, TopicPartition
from sparkcat.api.sink import SinkTask
from sparkcat.connectors.storage import config as c
from sparkcat.connectors.storage.formats import format_for
from sparkcat.connectors.storage.naming import Naming
from sparkcat.connectors.storage.partitioners import now_ms, partitioner_for
from sparkcat.connectors.storage.store import Store, filesystem_store, s3_store
from sparkcat.connectors.storage.writer import Report, TopicPartitionWriter, WriterSettings

log = logging.getLogger(__name__)


class _StorageSinkTask(SinkTask):
    """Shared by the S3 and filesystem tasks; they differ in config and store."""

    config_def = c.FILESYSTEM_CONFIG_DEF

    def __init__(self) -> None:
        self.writers: dict[TopicPartition, TopicPartitionWriter] = {}
        self._settings: Mapping[str, Any] = {}
        self._store: Store | None = None
        self._report: Report | None = None

    def version(self) -> str:
        return c.VERSION

    def _make_store(self, settings: Mapping[str, Any]) -> Store:
        return filesystem_store(settings)

    def start(self, props: dict[str, str]) -> None:
        self._settings = c.parse(self.config_def, props).values
        self._store = self._make_store(self._settings)
        reporter = self.context.errant_record_reporter() if hasattr(self, "context") else None
        if reporter is not None:
            # The framework awaits the report futures before it commits offsets.
            self._report = reporter.report
        self._writer_settings = WriterSettings(
            flush_size=self._settings[c.FLUSH_SIZE_CONFIG],
            rotate_interval_ms=self._settings[c.ROTATE_INTERVAL_MS_CONFIG],
            rotate_schedule_interval_ms=self._settings[c.ROTATE_SCHEDULE_INTERVAL_MS_CONFIG],
            rotate_on_partition_change=self._settings[c.ROTATE_ON_PARTITION_CHANGE_CONFIG],
            ignore_null_values=self._settings[c.BEHAVIOR_ON_NULL_VALUES_CONFIG] == "ignore",
        )
        partitioner_for(self._settings)  # config errors surface at start, not on the 1st record

    def open(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            self.writers[tp] = self._new_writer(tp)

    def _new_writer(self, tp: TopicPartition) -> TopicPartitionWriter:
        assert self._store is not None
        fmt = format_for(self._settings)
        naming = Naming(
            self._settings[c.TOPICS_DIR_CONFIG],
            self._settings[c.DIRECTORY_DELIM_CONFIG],
            self._settings[c.FILE_DELIM_CONFIG],
            self._settings[c.ZERO_PAD_WIDTH_CONFIG],
            fmt.extension,
        )
        parts = (partitioner_for(self._settings), fmt, naming, self._store)
        return TopicPartitionWriter(tp[1], self._writer_settings, parts, self._report, now_ms())

    def put(self, records: Sequence[SinkRecord]) -> None:
        now = now_ms()
        writers = self.writers
        for record in records:
            tp = TopicPartition(record.original_topic, record.original_kafka_partition or 0)
            writer = writers.get(tp)
            if writer is None:
                writer = writers[tp] = self._new_writer(tp)
            writer.write(record, now)
        if self._writer_settings.rotate_schedule_interval_ms > 0:
            for writer in writers.values():
                writer.maybe_rotate_on_schedule(now)

    def pre_commit(
        self, current_offsets: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int]:
        """Offsets up to the first record not yet in an uploaded object."""
        if self._writer_settings.rotate_schedule_interval_ms > 0:
            now = now_ms()
            for writer in self.writers.values():
                writer.maybe_rotate_on_schedule(now)
        approved = {}
        for tp, offset in current_offsets.items():
            owner = self.writers.get(tp)
            pending = owner.pending_start if owner is not None else None
            approved[tp] = offset if pending is None else min(pending, offset)
        return approved

    def close(self, partitions: Collection[TopicPartition]) -> None:
        for tp in partitions:
            closing = self.writers.pop(tp, None)
            if closing is not None:
                closing.discard()

    def stop(self) -> None:
        for writer in self.writers.values():
            writer.discard()
        self.writers.clear()


class S3SinkTask(_StorageSinkTask):
    """Confluent's ``io.confluent.connect.s3.S3SinkTask``: objects in ``s3.bucket.name``."""

    config_def = c.S3_CONFIG_DEF

    def _make_store(self, settings: Mapping[str, Any]) -> Store:
        return s3_store(settings)


class FileSystemSinkTask(_StorageSinkTask):
    """The same files under the local directory of ``store.url`` (``file://...``)."""


__all__ = ["FileSystemSinkTask", "S3SinkTask"]
