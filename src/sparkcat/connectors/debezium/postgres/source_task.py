"""PostgresConnectorTask (Debezium's ``io.debezium.connector.postgresql.PostgresConnectorTask``).

One instance runs one lease on an executor: ``start`` reads the committed offset, aligns the
publication, decides whether to snapshot (``snapshot.mode``), and confirms the committed
offset's LSN to the slot; ``poll`` returns snapshot rows, then streamed changes; ``stopped``
closes the replication connection, so no connection outlives the lease. A snapshot that the
lease's end interrupts goes on in the next lease of this process (see
:mod:`~sparkcat.connectors.debezium.postgres.snapshot`), or restarts from scratch.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from sparkcat.api.batch import SourceRecordBatch
from sparkcat.api.config import AbstractConfig
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import SourceTask
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium.envelope import EventSettings
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.heartbeat import Heartbeat, heartbeat_topic
from sparkcat.connectors.debezium.incremental import IncrementalSnapshot
from sparkcat.connectors.debezium.postgres import config as pg
from sparkcat.connectors.debezium.postgres import database, snapshot
from sparkcat.connectors.debezium.postgres.incremental import PostgresChunks
from sparkcat.connectors.debezium.postgres.offsets import StoredOffset, StreamPosition, partition
from sparkcat.connectors.debezium.postgres.pgoutput import parse_lsn
from sparkcat.connectors.debezium.postgres.stream import SlotSettings, StreamReader, open_stream
from sparkcat.connectors.debezium.postgres.tables import SchemaSettings, Tables
from sparkcat.connectors.debezium.types import TypeModes

log = logging.getLogger(__name__)

_SNAPSHOTTING_MODES = (pg.SNAPSHOT_INITIAL, pg.SNAPSHOT_ALWAYS, pg.SNAPSHOT_INITIAL_ONLY,
                       pg.SNAPSHOT_WHEN_NEEDED)  # fmt: skip


class PostgresConnectorTask(SourceTask):
    """Snapshots, then streams, the captured tables of one database."""

    def __init__(self) -> None:
        self._stopping = threading.Event()
        self._conn: Any = None
        self._snapshot: snapshot.SnapshotReader | None = None
        self._stream: StreamReader | None = None
        self._stream_start: tuple[int, StoredOffset | None, int | None] | None = None
        self._idle = False
        self._incremental: IncrementalSnapshot | None = None

    def version(self) -> str:
        return common.VERSION

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(pg.CONFIG_DEF, props)
        self._config = config
        self._mode = str(config.get(common.SNAPSHOT_MODE)).lower()
        self._connection = pg.ConnectionSettings.of(config)
        self._slot = SlotSettings(
            str(config.get(pg.SLOT_NAME)),
            str(config.get(pg.PUBLICATION_NAME)),
            int(config.get(pg.SLOT_MAX_RETRIES)),
            int(config.get(pg.SLOT_RETRY_DELAY_MS)) / 1000.0,
            int(config.get(pg.STATUS_UPDATE_INTERVAL_MS)) / 1000.0,
        )
        prefix = str(config.get(common.TOPIC_PREFIX))
        self._partition = partition(prefix)
        self._max_batch = int(config.get(common.MAX_BATCH_SIZE))
        self._poll_s = int(config.get(common.POLL_INTERVAL_MS)) / 1000.0
        self._events = EventSettings(
            bool(config.get(common.TOMBSTONES_ON_DELETE)), common.skipped_operations(config)
        )
        self._heartbeat = Heartbeat(
            heartbeat_topic(str(config.get(common.TOPIC_HEARTBEAT_PREFIX)), prefix,
                            str(config.get(common.TOPIC_DELIMITER))),
            prefix, int(config.get(common.HEARTBEAT_INTERVAL_MS)),
        )  # fmt: skip
        self._filters = database.TableFilters(
            NameFilter.of(config.get(pg.SCHEMA_INCLUDE_LIST), config.get(pg.SCHEMA_EXCLUDE_LIST)),
            NameFilter.of(config.get(common.TABLE_INCLUDE_LIST),
                          config.get(common.TABLE_EXCLUDE_LIST)),
        )  # fmt: skip
        self._park_key = (
            f"{self._connection.host}:{self._connection.port}/{self._connection.dbname}"
            f"/{self._slot.slot}/{prefix}"
        )
        self._conn = database.connect(self._connection)
        self._tables = Tables(self._conn, self._schema_settings(config, prefix))
        captured = database.captured_tables(self._conn, self._filters)
        published = list(captured)
        signal = str(config.get(common.SIGNAL_DATA_COLLECTION) or "")
        if signal and "." in signal:
            # Watermarks and signals travel through the stream: the signal table is published.
            schema, _, table = signal.partition(".")
            if (schema, table) not in published:
                published.append((schema, table))
        database.ensure_publication(
            self._conn, self._slot.publication,
            str(config.get(pg.PUBLICATION_AUTOCREATE_MODE)).lower(), published,
        )  # fmt: skip
        committed = self.context.offset_storage_reader().offset(self._partition)
        stored = StoredOffset.of(committed)
        self._incremental = self._incremental_snapshot(config, committed)
        if self._needs_snapshot(stored, committed, props):
            self._start_snapshot(stored, captured)
        elif stored is not None and self._mode == pg.SNAPSHOT_INITIAL_ONLY:
            self._idle = True
        else:
            snapshot.discard(self._park_key)
            self._plan_stream(stored)
            # The slot exists from the task's start on: nothing committed after it is missed.
            self._ensure_slot()

    def _incremental_snapshot(
        self, config: AbstractConfig, committed: Any
    ) -> IncrementalSnapshot | None:
        signal = str(config.get(common.SIGNAL_DATA_COLLECTION) or "")
        if not signal:
            return None
        chunks = PostgresChunks(
            self._tables, lambda: database.connect(self._connection, raw_text=True), signal
        )
        return IncrementalSnapshot.restore(
            committed, signal, int(config.get(common.INCREMENTAL_SNAPSHOT_CHUNK_SIZE)), chunks
        )

    def _schema_settings(self, config: AbstractConfig, prefix: str) -> SchemaSettings:
        modes = TypeModes(
            str(config.get(common.DECIMAL_HANDLING_MODE)).lower(),
            str(config.get(common.TIME_PRECISION_MODE)).lower(),
            str(config.get(common.BINARY_HANDLING_MODE)).lower(),
        )
        return SchemaSettings(
            prefix,
            str(config.get(common.TOPIC_DELIMITER)),
            self._connection.dbname,
            modes,
            KeyColumns.parse(str(config.get(common.MESSAGE_KEY_COLUMNS) or "")),
            NameFilter.of(
                config.get(common.COLUMN_INCLUDE_LIST), config.get(common.COLUMN_EXCLUDE_LIST)
            ),
            int(config.get(pg.MONEY_FRACTION_DIGITS)),
        )

    # ---------------------------------------------------------------------- decisions
    def _needs_snapshot(
        self, stored: StoredOffset | None, committed: Any, props: dict[str, str]
    ) -> bool:
        mode = self._mode
        if stored is None:
            return mode in _SNAPSHOTTING_MODES
        if stored.in_snapshot:
            return True
        if mode == pg.SNAPSHOT_ALWAYS:
            # Once per connector start: until an offset is committed after it.
            return props.get(pg.SNAPSHOT_EPOCH, "") == _fingerprint(committed)
        if mode == pg.SNAPSHOT_WHEN_NEEDED:
            state = database.slot_state(self._conn, self._slot.slot, self._connection.dbname)
            flushed = state.confirmed_flush_lsn if state else None
            return state is None or (flushed is not None and flushed > stored.resume_lsn)
        return False

    def _start_snapshot(self, stored: StoredOffset | None, captured: list[Any]) -> None:
        resumed = snapshot.resume(self._park_key, stored.lsn if stored else None)
        if resumed is not None:
            log.info("Resuming the snapshot of slot %s in this process", self._slot.slot)
            self._snapshot = resumed
            return
        fresh = stored is None or stored.in_snapshot
        state = database.wait_until_inactive(
            self._conn, self._slot.slot, self._connection.dbname, 5.0
        )
        snapshot_conn = database.connect(self._connection, raw_text=True)
        if state is not None and not fresh:
            # snapshot.mode=always/when_needed with a slot that has history: a plain
            # snapshot, then the slot from where it stands (changes may repeat).
            tx_id = snapshot.begin(snapshot_conn, None)
            (lsn_text,) = database.query(self._conn, "SELECT pg_current_wal_lsn()::text")[0]
            lsn = parse_lsn(lsn_text)
        else:
            if state is not None:
                log.info("Dropping slot %s: its snapshot never completed", self._slot.slot)
                database.drop_slot(self._conn, self._slot.slot)
            replication = database.connect(self._connection, replication=True)
            try:
                with replication.cursor() as cursor:
                    cursor.execute(
                        f"CREATE_REPLICATION_SLOT {database.quote_ident(self._slot.slot)} "
                        "LOGICAL pgoutput EXPORT_SNAPSHOT"
                    )
                    _, point, exported, _ = cursor.fetchone()
                tx_id = snapshot.begin(snapshot_conn, exported)
            finally:
                replication.close()
            lsn = parse_lsn(point)
        tables = [self._tables.get(s, t) for s, t in captured]
        fetch = int(self._config.get(common.SNAPSHOT_FETCH_SIZE))
        self._snapshot = snapshot.SnapshotReader(
            snapshot_conn, self._tables, tables, lsn, tx_id, self._partition, fetch
        )

    def _plan_stream(self, stored: StoredOffset | None, after_snapshot: int | None = None) -> None:
        """Where streaming starts: ``(start LSN, offset to skip to, LSN to confirm)``."""
        if after_snapshot is not None:
            self._stream_start = (after_snapshot, None, None)
        elif stored is not None:
            skip = stored if stored.lsn_commit is not None else None
            self._stream_start = (stored.resume_lsn, skip, stored.resume_lsn)
        else:
            self._stream_start = (0, None, None)

    def _ensure_slot(self) -> database.SlotState | None:
        """The slot's state, after creating it if it is missing."""
        state = database.slot_state(self._conn, self._slot.slot, self._connection.dbname)
        if state is None:
            replication = database.connect(self._connection, replication=True)
            try:
                replication.cursor().create_replication_slot(
                    self._slot.slot, output_plugin="pgoutput"
                )
            finally:
                replication.close()
            state = database.slot_state(self._conn, self._slot.slot, self._connection.dbname)
        return state

    def _open_stream(self) -> StreamReader:
        assert self._stream_start is not None
        start, skip, confirm = self._stream_start
        state = self._ensure_slot()
        cursor = open_stream(self._connection, self._conn, self._slot, start)
        begin = start or (state.confirmed_flush_lsn if state else None) or 0
        reader = StreamReader(
            cursor, self._tables, self._filters.captured, self._events, self._partition,
            StreamPosition(lsn=begin, lsn_proc=begin, lsn_commit=begin), skip,
            self._incremental,
        )  # fmt: skip
        if confirm:
            reader.flush(confirm)
        return reader

    # --------------------------------------------------------------------------- poll
    def poll(self) -> list[SourceRecord] | SourceRecordBatch | None:
        """Snapshot rows as a list; streamed changes (and a due heartbeat) as one
        :class:`~sparkcat.api.batch.SourceRecordBatch` with a topic, schemas and offset per
        change, so the framework converts them without a record object per change."""
        if self._stopping.is_set():
            return None
        reader = self._snapshot
        if reader is not None:
            records = [] if reader.done else reader.read(self._max_batch)
            if reader.done:
                self._finish_snapshot(reader)
            if records:
                return records
        if self._idle:
            self._stopping.wait(self._poll_s)
            return []
        if self._stream is None:
            self._stream = self._open_stream()
        if self._incremental is not None and self._incremental.wants_chunk:
            self._incremental.read_chunk()
        columns = self._stream.read(self._max_batch, self._poll_s)
        if self._heartbeat.due():
            position = self._stream.offset()
            columns.append(self._heartbeat.record(self._partition, position))
        return columns.batch()

    def _finish_snapshot(self, reader: snapshot.SnapshotReader) -> None:
        reader.close()
        self._snapshot = None
        if self._mode == pg.SNAPSHOT_INITIAL_ONLY:
            self._idle = True
        else:
            self._plan_stream(None, after_snapshot=reader.lsn)

    def commit(self) -> None:
        # Everything handed out was acknowledged: a parked snapshot may go on from here.
        if self._snapshot is not None:
            self._snapshot.clean = True

    def stop(self) -> None:
        self._stopping.set()

    def stopped(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._incremental is not None:
            self._incremental.close()
        reader, self._snapshot = self._snapshot, None
        if reader is not None and not reader.done:
            if reader.clean:
                snapshot.park(self._park_key, reader)
            else:
                reader.close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _fingerprint(offset: Any) -> str:
    return json.dumps(offset, sort_keys=True) if offset else ""


def fingerprint(offset: Any) -> str:
    """How the connector writes the committed offset into ``snapshot.epoch``."""
    return _fingerprint(offset)


__all__ = ["PostgresConnectorTask", "fingerprint"]
