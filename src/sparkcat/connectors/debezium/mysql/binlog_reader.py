"""Reading row changes from a MySQL or MariaDB ROW binlog with ``mysql-replication``.

:class:`BinlogReader` joins the server as a replica (``server_id``), starts at a
:class:`~.offsets.BinlogOffset` (skipping the events and rows it says were delivered) and turns
rows events into :class:`RowChange` items and DDL into :class:`SchemaChange` items, each with the
Debezium offset to restart after it. Column names come from the table-map events, which carry
them when the server writes ``binlog_row_metadata=FULL``: so an ``ALTER TABLE`` between two
events is read with the columns each event was written with, not the table's current ones.

:meth:`BinlogReader.poll` reads what the server has now and returns (it does not wait for new
events); the next poll resumes where the last one stopped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sparkcat.connectors.debezium.mysql.offsets import (
    BinlogOffset,
    MariaDbGtidSet,
    MySqlGtidSet,
    OffsetTracker,
)

_DDL = re.compile(r"^\s*(CREATE|ALTER|DROP|RENAME|TRUNCATE)\b", re.IGNORECASE)
# A MariaDB GTID event with FL_STANDALONE (1) is a DDL or other statement on its own; any
# other GTID event opens a transaction (MariaDB writes no BEGIN query then).
_MARIADB_FL_STANDALONE = 0x01


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    host: str
    port: int
    user: str
    password: str

    def pymysql(self) -> dict[str, Any]:
        return {"host": self.host, "port": self.port, "user": self.user, "password": self.password}


@dataclass(frozen=True, slots=True)
class RowChange:
    """One changed row: ``op`` is ``c``, ``u`` or ``d``; ``before``/``after`` map column names
    to values as mysql-replication decodes them. ``file``/``pos``/``row``/``server_id``/
    ``gtid``/``thread``/``query`` are the ``source`` block's; ``ts_ms`` is when the server
    wrote the event; ``offset`` is where to restart after this row."""

    database: str
    table: str
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    file: str
    pos: int
    row: int
    server_id: int
    ts_ms: int
    gtid: str | None
    thread: int | None
    query: str | None
    offset: BinlogOffset


@dataclass(frozen=True, slots=True)
class SchemaChange:
    """A DDL statement as the server logged it (``database`` is its default database)."""

    database: str
    ddl: str
    file: str
    pos: int
    server_id: int
    ts_ms: int
    offset: BinlogOffset


Change = RowChange | SchemaChange


class BinlogReader:
    """A replica connection that reads ROW events from ``start`` on (see the module docstring).

    ``mariadb`` picks the GTID flavour; ``include_query`` keeps the statement that produced each
    row (MariaDB's annotate-rows events, MySQL's rows-query events, when the server writes them).
    ``tables`` (``db.table`` names) limits the rows read; DDL is always reported.
    """

    def __init__(
        self,
        connection: ConnectionSettings,
        server_id: int,
        start: BinlogOffset,
        *,
        mariadb: bool,
        include_query: bool = False,
        tables: frozenset[str] | None = None,
    ) -> None:
        self._connection = connection
        self._server_id = server_id
        self._mariadb = mariadb
        self._include_query = include_query
        self._tables = tables
        self._skip_events = start.event
        self._skip_rows = start.row
        gtid_set = (MariaDbGtidSet if mariadb else MySqlGtidSet)(start.gtids)
        if mariadb and start.gtids is None:
            gtid_set = MariaDbGtidSet(_mariadb_gtid_at(connection, start.file, start.pos))
            start = BinlogOffset(start.file, start.pos, start.event, start.row,
                                 str(gtid_set) or None, start.server_id, start.ts_sec)  # fmt: skip
        self.tracker = OffsetTracker(start, gtid_set)
        self._stream: Any = None

    def _open(self) -> Any:
        from pymysqlreplication import BinLogStreamReader
        from pymysqlreplication.event import (
            GtidEvent,
            MariadbAnnotateRowsEvent,
            MariadbGtidEvent,
            QueryEvent,
            RotateEvent,
            RowsQueryLogEvent,
            XidEvent,
        )
        from pymysqlreplication.row_event import (
            DeleteRowsEvent,
            TableMapEvent,
            UpdateRowsEvent,
            WriteRowsEvent,
        )

        tracker = self.tracker
        # Table maps are asked for only to be counted: Debezium's ``event`` offset counts them.
        # Resume at the transaction's start: the tracker re-reads what it must skip.
        return BinLogStreamReader(
            connection_settings=self._connection.pymysql(),
            server_id=self._server_id,
            resume_stream=True,
            blocking=False,
            log_file=tracker.offset().file,
            log_pos=tracker.offset().pos,
            only_events=[RotateEvent, QueryEvent, XidEvent, GtidEvent, MariadbGtidEvent,
                         MariadbAnnotateRowsEvent, RowsQueryLogEvent, WriteRowsEvent,
                         UpdateRowsEvent, DeleteRowsEvent, TableMapEvent],
            # mysql-replication's MariaDB mode ignores file/pos (it dumps from the start or a
            # GTID state); the classic file/pos dump works on MariaDB too and still brings its
            # GTID events. The price: no annotate-rows events, so no ``query`` on MariaDB yet.
            is_mariadb=False,
            enable_logging=False,
            pymysql_wrapper=_connect,
        )  # fmt: skip

    def poll(self, max_changes: int = 10_000) -> list[Change]:
        """The changes the server has written since the last poll, at most ``max_changes``
        (a rows event is never split between polls, so a few more may come back)."""
        if self._stream is None:
            self._stream = self._open()
        out: list[Change] = []
        while len(out) < max_changes:
            event = self._stream.fetchone()
            if event is None:
                # blocking=False: the stream closed at the end of the binlog; reopen next poll
                # from the tracker's position.
                self._stream.close()
                self._stream = None
                break
            out.extend(self._handle(event))
        return out

    def _handle(self, event: Any) -> Iterator[Change]:
        from pymysqlreplication.event import (
            GtidEvent,
            MariadbAnnotateRowsEvent,
            MariadbGtidEvent,
            QueryEvent,
            RotateEvent,
            RowsQueryLogEvent,
            XidEvent,
        )
        from pymysqlreplication.row_event import RowsEvent

        tracker = self.tracker
        packet = event.packet
        if isinstance(event, RotateEvent):
            tracker.rotate(event.next_binlog, event.position)
            return
        # The packet's event_size is the whole event's (the event's own lacks the header).
        tracker.event(packet.log_pos - packet.event_size, packet.event_size,
                      packet.server_id, event.timestamp)  # fmt: skip
        if isinstance(event, MariadbGtidEvent):
            tracker.gtid_started(event.gtid)
            if not event.flags & _MARIADB_FL_STANDALONE:
                self._begin(None)
        elif isinstance(event, GtidEvent):
            tracker.gtid_started(event.gtid)
        elif isinstance(event, QueryEvent):
            query = _text(event.query)
            if query.upper() == "BEGIN":
                self._begin(event.slave_proxy_id)
            elif query.upper() == "COMMIT":
                tracker.commit()
            elif _DDL.match(query):
                yield SchemaChange(_text(event.schema), query, tracker.file, tracker.event_pos,
                                   tracker.server_id, event.timestamp * 1000,
                                   tracker.offset())  # fmt: skip
        elif isinstance(event, XidEvent):
            tracker.commit()
        elif isinstance(event, MariadbAnnotateRowsEvent | RowsQueryLogEvent):
            tracker.query = _text(getattr(event, "sql_statement", None) or event.query)
        elif isinstance(event, RowsEvent) and self._skip_events == 0:
            yield from self._rows(event)
        self._event_done()

    def _begin(self, thread: int | None) -> None:
        self.tracker.begin(thread)

    def _event_done(self) -> None:
        self.tracker.event_done()
        if self._skip_events:
            self._skip_events -= 1

    def _rows(self, event: Any) -> Iterator[RowChange]:
        from pymysqlreplication.row_event import DeleteRowsEvent, WriteRowsEvent

        tracker = self.tracker
        skip, self._skip_rows = self._skip_rows, 0
        database, table = event.schema, event.table
        if self._tables is not None and f"{database}.{table}" not in self._tables:
            return
        rows = event.rows
        op = "u"
        if isinstance(event, WriteRowsEvent):
            op = "c"
        elif isinstance(event, DeleteRowsEvent):
            op = "d"
        for index in range(skip, len(rows)):
            row = rows[index]
            before = row.get("before_values", row["values"] if op == "d" else None)
            after = row.get("after_values", row["values"] if op == "c" else None)
            tracker.row_emitted(index, len(rows))
            yield RowChange(
                database, table, op, before, after, tracker.file, tracker.event_pos, index,
                tracker.server_id, event.timestamp * 1000, tracker.gtid, tracker.thread,
                tracker.query if self._include_query else None, tracker.offset(),
            )  # fmt: skip
        tracker.rows_done()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def _connect(**settings: Any) -> Any:
    """pymysql.connect for mysql-replication, which still passes the ``db`` and ``passwd``
    names pymysql deprecated."""
    import pymysql

    for old, new in (("db", "database"), ("passwd", "password")):
        if old in settings:
            settings[new] = settings.pop(old)
    return pymysql.connect(**settings)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return "" if value is None else str(value)


def _mariadb_gtid_at(connection: ConnectionSettings, file: str, pos: int) -> str | None:
    """The GTID position MariaDB reports for binlog coordinates (``BINLOG_GTID_POS``)."""
    import pymysql

    conn = pymysql.connect(**connection.pymysql())
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (file, pos))
            found = cur.fetchone()
    finally:
        conn.close()
    return found[0] if found and found[0] else None


__all__ = ["BinlogReader", "Change", "ConnectionSettings", "RowChange", "SchemaChange"]
