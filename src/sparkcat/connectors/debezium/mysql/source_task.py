"""MySqlConnectorTask and MariaDbConnectorTask (Debezium's
``io.debezium.connector.mysql.MySqlConnectorTask``/``io.debezium.connector.mariadb.MariaDbConnectorTask``).

One instance runs one lease on an executor: ``start`` reads the committed offset and decides
whether to snapshot (``snapshot.mode``) or where in the binlog to stream from; ``poll`` returns
snapshot rows, then streamed changes; ``stopped`` closes every connection, so none outlives the
lease. A snapshot the lease's end interrupts goes on in the next lease of this process (see
:mod:`~sparkcat.connectors.debezium.mysql.snapshot`), or starts again.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from sparkcat.api.config import AbstractConfig
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import SourceTask
from sparkcat.connectors.debezium import config as common
from sparkcat.connectors.debezium.envelope import (
    OP_TRUNCATE,
    EventSettings,
    Position,
    change_events,
    truncate_event,
)
from sparkcat.connectors.debezium.filters import KeyColumns, NameFilter
from sparkcat.connectors.debezium.heartbeat import Heartbeat, heartbeat_topic
from sparkcat.connectors.debezium.incremental import IncrementalSnapshot
from sparkcat.connectors.debezium.mysql import config as my
from sparkcat.connectors.debezium.mysql import snapshot
from sparkcat.connectors.debezium.mysql.binlog_reader import BinlogReader, RowChange, SchemaChange
from sparkcat.connectors.debezium.mysql.history import MemorySchemaHistory
from sparkcat.connectors.debezium.mysql.history_topic import KafkaSchemaHistory
from sparkcat.connectors.debezium.mysql.incremental import MySqlChunks
from sparkcat.connectors.debezium.mysql.offsets import (
    SNAPSHOT_COMPLETED_KEY,
    SNAPSHOT_KEY,
    BinlogOffset,
    source_partition,
)
from sparkcat.connectors.debezium.mysql.schema_tracker import SchemaTracker, table_names
from sparkcat.connectors.debezium.mysql.server import current_position, is_mariadb
from sparkcat.connectors.debezium.mysql.tables import SchemaSettings, Tables
from sparkcat.connectors.debezium.types import TypeModes

_SNAPSHOTTING = (my.SNAPSHOT_INITIAL, my.SNAPSHOT_ALWAYS, my.SNAPSHOT_INITIAL_ONLY,
                 my.SNAPSHOT_WHEN_NEEDED)  # fmt: skip


_TRUNCATE = re.compile(
    r"^\s*TRUNCATE\s+(?:TABLE\s+)?(?:`?(?P<db>[^`.\s]+)`?\.)?`?(?P<table>[^`.\s;]+)`?",
    re.IGNORECASE,
)


def snapshot_unfinished(offset: Mapping[str, Any] | None) -> bool:
    """Whether a committed offset is one of a snapshot that never completed."""
    if not offset:
        return False
    flag = offset.get(SNAPSHOT_KEY)
    completed = offset.get(SNAPSHOT_COMPLETED_KEY) in (True, "true")
    return flag not in (None, False, "false") and not completed


def fingerprint(offset: Any) -> str:
    """How the connector writes the committed offset into ``snapshot.epoch``."""
    return json.dumps(offset, sort_keys=True) if offset else ""


class MySqlConnectorTask(SourceTask):
    """Snapshots, then streams, the captured tables of one MySQL server."""

    flavour: ClassVar[str] = "mysql"

    def __init__(self) -> None:
        self._incremental: IncrementalSnapshot | None = None
        self._stopping = threading.Event()
        self._conn: Any = None
        self._snapshot: snapshot.SnapshotReader | None = None
        self._reader: BinlogReader | None = None
        self._stream_from: BinlogOffset | None = None
        self._idle = False

    def version(self) -> str:
        return common.VERSION

    def start(self, props: dict[str, str]) -> None:
        config = AbstractConfig(my.CONFIG_DEF, props)
        self._config = config
        self._mode = my.snapshot_mode(config)
        self._settings = my.connection_settings(config)
        self._timeout_s = int(config.get(my.CONNECT_TIMEOUT_MS)) / 1000.0
        prefix = str(config.get(common.TOPIC_PREFIX))
        self._partition = source_partition(prefix)
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
        self._tables = Tables(
            self._schema_settings(config, prefix),
            NameFilter.of(config.get(my.DATABASE_INCLUDE_LIST),
                          config.get(my.DATABASE_EXCLUDE_LIST)),
            NameFilter.of(config.get(common.TABLE_INCLUDE_LIST),
                          config.get(common.TABLE_EXCLUDE_LIST)),
        )  # fmt: skip
        self._schema = SchemaTracker(self._schema_history(config, prefix), self._tables, prefix,
                                     bool(config.get(my.INCLUDE_SCHEMA_CHANGES)))  # fmt: skip
        self._park_key = f"{self.flavour}/{prefix}"
        self._origin = f"{self._settings.host}:{self._settings.port}"
        self._conn = my.connect(self._settings, self._timeout_s)
        # The server, not the class, decides the GTID flavour: MySqlConnector has read MariaDB
        # servers since long before Debezium's MariaDbConnector existed.
        self._mariadb = is_mariadb(self._conn)
        committed = self.context.offset_storage_reader().offset(self._partition)
        self._incremental = self._incremental_snapshot(config, committed)
        if self._needs_snapshot(committed, props):
            self._start_snapshot(committed)
        elif committed and self._mode == my.SNAPSHOT_INITIAL_ONLY:
            self._idle = True
        else:
            snapshot.discard(self._park_key)
            self._stream_from = self._stream_start(committed, props)
            if committed:
                self._schema.recover(committed)

    def _incremental_snapshot(
        self, config: AbstractConfig, committed: Mapping[str, Any] | None
    ) -> IncrementalSnapshot | None:
        signal = str(config.get(common.SIGNAL_DATA_COLLECTION) or "")
        if not signal:
            return None
        chunks = MySqlChunks(self._tables, lambda: my.connect(self._settings, self._timeout_s),
                             signal, self._stream_position)  # fmt: skip
        return IncrementalSnapshot.restore(
            committed, signal, int(config.get(common.INCREMENTAL_SNAPSHOT_CHUNK_SIZE)), chunks
        )

    def _stream_position(self) -> BinlogOffset:
        if self._reader is not None:
            return self._reader.tracker.offset()
        assert self._stream_from is not None
        return self._stream_from

    def _offset(self, position: BinlogOffset) -> dict[str, Any]:
        """A streamed event's offset, with the incremental snapshot's progress."""
        offset = position.to_dict()
        if self._incremental is not None:
            offset.update(self._incremental.offset())
        return offset

    @staticmethod
    def _schema_history(config: AbstractConfig, prefix: str) -> Any:
        topic = config.get(my.SCHEMA_HISTORY_TOPIC)
        servers = config.get(my.SCHEMA_HISTORY_SERVERS)
        if not topic or not servers:
            return MemorySchemaHistory()
        return KafkaSchemaHistory(str(servers), str(topic), f"{prefix}-schemahistory")

    def _schema_settings(self, config: AbstractConfig, prefix: str) -> SchemaSettings:
        modes = TypeModes(
            str(config.get(common.DECIMAL_HANDLING_MODE)).lower(),
            str(config.get(common.TIME_PRECISION_MODE)).lower(),
            str(config.get(common.BINARY_HANDLING_MODE)).lower(),
        )
        return SchemaSettings(
            prefix, str(config.get(common.TOPIC_DELIMITER)), self.flavour, modes,
            KeyColumns.parse(str(config.get(common.MESSAGE_KEY_COLUMNS) or "")),
            NameFilter.of(config.get(common.COLUMN_INCLUDE_LIST),
                          config.get(common.COLUMN_EXCLUDE_LIST)),
            str(config.get(my.BIGINT_UNSIGNED_HANDLING_MODE)).lower() == "precise",
        )  # fmt: skip

    # ---------------------------------------------------------------------- decisions
    def _needs_snapshot(self, committed: Mapping[str, Any] | None, props: dict[str, str]) -> bool:
        mode = self._mode
        if not committed:
            return mode in _SNAPSHOTTING
        if snapshot_unfinished(committed):
            return True
        if mode == my.SNAPSHOT_ALWAYS:
            # Once per connector start: until an offset is committed after it.
            return props.get(my.SNAPSHOT_EPOCH, "") == fingerprint(committed)
        if mode == my.SNAPSHOT_WHEN_NEEDED:
            return str(committed.get("file")) not in self._binlog_files()
        return False

    def _binlog_files(self) -> list[str]:
        with self._conn.cursor() as cur:
            cur.execute("SHOW BINARY LOGS")
            return [str(row[0]) for row in cur.fetchall()]

    def _stream_start(self, committed: Mapping[str, Any] | None, props: dict[str, str]) -> Any:
        if committed:
            return BinlogOffset.load(committed)
        given = props.get(my.STREAM_START, "")
        if given:
            return BinlogOffset.load(json.loads(given))
        if self._mode == my.SNAPSHOT_NEVER:
            return BinlogOffset(self._binlog_files()[0], 4)
        return current_position(self._conn)

    def _start_snapshot(self, committed: Mapping[str, Any] | None) -> None:
        resumed = snapshot.resume(self._park_key, self._origin, committed)
        if resumed is not None:
            self._snapshot = resumed
            return
        conn = my.connect(self._settings, self._timeout_s)
        try:
            position, captured = snapshot.begin(
                conn, self._tables, str(self._config.get(my.SNAPSHOT_LOCKING_MODE)).lower(),
                self._mariadb,
            )  # fmt: skip
        except BaseException:
            conn.close()
            raise
        self._schema.snapshot_taken(position.to_dict(), captured)
        fetch = int(self._config.get(common.SNAPSHOT_FETCH_SIZE))
        self._snapshot = snapshot.SnapshotReader(conn, self._tables, captured, position,
                                                 self._partition, fetch, self._origin)  # fmt: skip

    # --------------------------------------------------------------------------- poll
    def poll(self) -> list[SourceRecord] | None:
        if self._stopping.is_set():
            return None
        reader = self._snapshot
        if reader is not None:
            records = [] if reader.done else reader.read(self._max_batch)
            if reader.done:
                self._snapshot = None
                if self._mode == my.SNAPSHOT_INITIAL_ONLY:
                    self._idle = True
                else:
                    self._stream_from = reader.position
            if records:
                return records
        if self._idle:
            self._stopping.wait(self._poll_s)
            return []
        if self._reader is None:
            assert self._stream_from is not None
            self._reader = BinlogReader(
                self._settings, int(self._config.get(my.DATABASE_SERVER_ID)), self._stream_from,
                mariadb=self._mariadb,
                include_query=bool(self._config.get(my.INCLUDE_QUERY)),
            )  # fmt: skip
        if self._incremental is not None and self._incremental.wants_chunk:
            self._incremental.read_chunk()
        records = self._records(self._reader.poll(self._max_batch))
        if self._heartbeat.due():
            position = self._offset(self._reader.tracker.offset())
            records.append(self._heartbeat.record(self._partition, position))
        if not records:
            self._stopping.wait(self._poll_s)
        return records

    def _records(self, changes: list[RowChange | SchemaChange]) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        for change in changes:
            if isinstance(change, SchemaChange):
                records += self._truncate(change)
                ddl_source = functools.partial(self._ddl_source, change)
                records += self._schema.ddl(self._conn, change, self._partition, ddl_source)
                continue
            records += self._signal(change)
            if not self._tables.captured(change.database, change.table):
                continue
            row = change.after if change.after is not None else change.before
            table = self._tables.get(self._conn, change.database, change.table,
                                     frozenset(row or ()))  # fmt: skip
            if self._tables.first_seen:
                self._schema.record_first_seen(change.offset.to_dict())
            source = self._tables.source(change.table, change.database, change.ts_ms * 1000, {
                "snapshot": "false", "server_id": change.server_id, "gtid": change.gtid,
                "file": change.file, "pos": change.pos, "row": change.row,
                "thread": change.thread, "query": change.query,
            })  # fmt: skip
            if self._incremental is not None:
                for values in (change.before, change.after):
                    if values is not None:
                        key = tuple(values.get(c) for c in table.debezium.key_columns)
                        self._incremental.on_change(table, key)
            position = Position(self._partition, self._offset(change.offset), source)
            before = None if change.before is None else table.row(change.before)
            after = None if change.after is None else table.row(change.after)
            records += change_events(table.debezium, self._events, position, change.op, before,
                                     after)  # fmt: skip
        return records

    def _truncate(self, change: SchemaChange) -> list[SourceRecord]:
        """``op=t`` for ``TRUNCATE [TABLE] [db.]table`` of a captured table (skipped unless
        ``skipped.operations`` leaves ``t`` out)."""
        found = _TRUNCATE.match(change.ddl)
        if found is None or OP_TRUNCATE in self._events.skipped_operations:
            return []
        db, name = found.group("db") or change.database, found.group("table")
        if not db or not self._tables.captured(db, name):
            return []
        table = self._tables.get(self._conn, db, name)
        source = self._tables.source(name, db, change.ts_ms * 1000, {
            "snapshot": "false", "server_id": change.server_id, "file": change.file,
            "pos": change.pos, "row": 0})  # fmt: skip
        position = Position(self._partition, change.offset.to_dict(), source)
        return truncate_event(table.debezium, self._events, position)

    def _signal(self, change: RowChange) -> list[SourceRecord]:
        """A row inserted into the signal table: what the incremental snapshot makes of it."""
        incremental = self._incremental
        if incremental is None or change.op != "c" or change.after is None:
            return []
        if not incremental.is_signal(change.database, change.table):
            return []
        return incremental.on_signal(list(change.after.values()), self._partition,
                                     self._offset(change.offset))  # fmt: skip

    def _ddl_source(self, change: SchemaChange, tables: Any) -> Any:
        return self._tables.source(table_names(tables), change.database, change.ts_ms * 1000, {
            "snapshot": "false", "server_id": change.server_id, "file": change.file,
            "pos": change.pos, "row": 0})  # fmt: skip

    def commit(self) -> None:
        # Everything handed out was acknowledged: a parked snapshot may go on from here.
        if self._snapshot is not None:
            self._snapshot.clean = True

    def stop(self) -> None:
        self._stopping.set()

    def stopped(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        reader, self._snapshot = self._snapshot, None
        if reader is not None and not reader.done:
            if reader.clean:
                snapshot.park(self._park_key, reader)
            else:
                reader.close()
        if self._incremental is not None:
            self._incremental.close()
        close = getattr(self._schema.history, "close", None)
        if close is not None:
            close()
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class MariaDbConnectorTask(MySqlConnectorTask):
    """The same for MariaDB (``source.connector`` is ``mariadb``, MariaDB's GTIDs)."""

    flavour: ClassVar[str] = "mariadb"


__all__ = ["MariaDbConnectorTask", "MySqlConnectorTask", "fingerprint", "snapshot_unfinished"]
