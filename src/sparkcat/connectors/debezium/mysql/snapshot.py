"""The snapshot: every captured table read in one ``START TRANSACTION WITH CONSISTENT
SNAPSHOT`` whose rows are exactly the state at a known binlog position, so streaming from that
position misses and repeats nothing.

Locking (``snapshot.locking.mode``), as Debezium's ``minimal``: ``FLUSH TABLES WITH READ
LOCK`` is held only while the transaction starts, the binlog position is read and the captured
tables' columns are read; then ``UNLOCK TABLES`` and the rows are read without a lock. With
``none``, or when the user lacks the ``RELOAD`` privilege the lock needs, MariaDB gives the
position of the transaction's own snapshot (``binlog_snapshot_file``/``binlog_snapshot_position``,
kept by the binlog commit order), which is as correct without any lock; MySQL has no such
status, so there ``none`` reads the position right after the transaction starts (a commit in
between may then appear twice, as in Debezium).

Records are ``op=r`` events; ``source.snapshot`` is ``first``, ``first_in_data_collection``,
``true``, ``last_in_data_collection``, ``last`` as Debezium's marker resolver sets it. Their
offsets are the snapshot's binlog position with ``snapshot: true``, except the last, whose offset
is the plain position (Debezium removes the key from the last record): a committed offset
with ``snapshot: true`` means the snapshot never completed and must start again.

A lease may end before the snapshot does: the open transaction then waits, parked in this
process, for the task's next lease (:func:`park`/:func:`resume`) as long as everything handed
out so far was acknowledged; elsewhere, or after :data:`PARK_SECONDS`, the snapshot restarts.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import (
    Position,
    now_us,
    read_event,
    snapshot_marker,
)
from sparkcat.connectors.debezium.mysql.offsets import SNAPSHOT_KEY, BinlogOffset
from sparkcat.connectors.debezium.mysql.server import current_position
from sparkcat.connectors.debezium.mysql.tables import CapturedTable, Tables
from sparkcat.connectors.debezium.parking import ParkedReaders

log = logging.getLogger(__name__)
PARK_SECONDS = 120.0
_ACCESS_DENIED = (1045, 1227)


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def begin(conn: Any, tables: Tables, locking: str, mariadb: bool) -> tuple[BinlogOffset, list[Any]]:
    """Open the snapshot transaction on ``conn``; its binlog position and captured tables."""
    with conn.cursor() as cur:
        cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        locked = False
        if locking == "minimal":
            try:
                cur.execute("FLUSH TABLES WITH READ LOCK")
                locked = True
            except Exception as exc:
                code = exc.args[0] if exc.args else None
                if code not in _ACCESS_DENIED or not mariadb:
                    raise
                log.warning("No RELOAD privilege for FLUSH TABLES WITH READ LOCK: the "
                            "snapshot uses MariaDB's binlog_snapshot position instead")  # fmt: skip
        try:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            if mariadb and not locked:
                position = _mariadb_snapshot_position(conn)
            else:
                position = current_position(conn)
            # The shapes as of the snapshot's position, whatever the history said before.
            captured = []
            for db, name in tables.list(conn):
                tables.refresh(conn, db, name)
                captured.append(tables.get(conn, db, name))
        finally:
            if locked:
                cur.execute("UNLOCK TABLES")
    return position, captured


def _mariadb_snapshot_position(conn: Any) -> BinlogOffset:
    with conn.cursor() as cur:
        cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
        found = {str(k).lower(): str(v) for k, v in cur.fetchall()}
        cur.execute(
            "SELECT BINLOG_GTID_POS(%s, %s)",
            (found["binlog_snapshot_file"], int(found["binlog_snapshot_position"])),
        )
        gtids = cur.fetchone()[0] or None  # fmt: skip
    return BinlogOffset(found["binlog_snapshot_file"], int(found["binlog_snapshot_position"]),
                        gtids=gtids)  # fmt: skip


class SnapshotReader:
    """Reads the tables of one snapshot transaction, ``max_records`` at a time."""

    def __init__(
        self,
        conn: Any,
        tables: Tables,
        captured: Sequence[CapturedTable],
        position: BinlogOffset,
        partition: Mapping[str, Any],
        fetch_size: int,
        origin: str = "",
    ) -> None:
        self.conn = conn
        self.origin = origin
        self.tables = tables
        self.position = position
        self.partition = partition
        self._rows = _rows(conn, captured, fetch_size)
        self._pending = next(self._rows, None)
        self._previous: CapturedTable | None = None
        self.emitted = 0
        self.done = self._pending is None
        self.clean = True
        """No record handed out since the last acknowledgement of all of them."""

    def read(self, max_records: int) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        while self._pending is not None and len(records) < max_records:
            table, row = self._pending
            following = next(self._rows, None)
            last = following is None
            marker = snapshot_marker(self.emitted == 0, last, table is not self._previous,
                             last or following[0] is not table)  # type: ignore[index]  # fmt: skip
            records.append(self._record(table, row, marker, last))
            self._previous = table
            self._pending = following
            self.emitted += 1
        self.done = self._pending is None
        if records:
            self.clean = False
        if self.done:
            self.close()
        return records

    def _record(
        self, table: CapturedTable, row: dict[str, Any], marker: str, last: bool
    ) -> SourceRecord:
        ts = now_us()
        position = self.position
        source = self.tables.source(table.name, table.db, ts, {
            "snapshot": marker, "server_id": 0, "file": position.file, "pos": position.pos,
            "row": 0})  # fmt: skip
        return read_event(table.debezium, Position(self.partition, self.offset(ts, last), source),
                          table.row(row))  # fmt: skip

    def offset(self, ts_us: int, completed: bool) -> dict[str, Any]:
        offset = BinlogOffset(self.position.file, self.position.pos, gtids=self.position.gtids,
                              ts_sec=ts_us // 1_000_000).to_dict()  # fmt: skip
        if not completed:
            offset[SNAPSHOT_KEY] = True
        return offset

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection
            pass


def _rows(
    conn: Any, captured: Sequence[CapturedTable], fetch_size: int
) -> Iterator[tuple[CapturedTable, dict[str, Any]]]:
    # Chunks by primary key, each a short statement in the snapshot transaction: no statement
    # stays open while the snapshot is parked between leases, where an unfinished result set
    # would hold up FLUSH TABLES WITH READ LOCK (and every writer queued behind it).
    for table in captured:
        names = [c.name for c in table.columns]
        key = list(table.primary_key)
        select = (f"SELECT {', '.join(quote(n) for n in names)} "
                  f"FROM {quote(table.db)}.{quote(table.name)}")  # fmt: skip
        order = f" ORDER BY {', '.join(quote(k) for k in key)}" if key else ""
        after: tuple[Any, ...] | None = None
        done = 0
        while True:
            with conn.cursor() as cur:
                if not key:
                    # No key: InnoDB scans its clustered index in one stable order.
                    cur.execute(f"{select} LIMIT %s OFFSET %s", (fetch_size, done))
                elif after is None:
                    cur.execute(f"{select}{order} LIMIT %s", (fetch_size,))
                else:
                    columns = ", ".join(quote(k) for k in key)
                    marks = ", ".join(["%s"] * len(key))
                    cur.execute(f"{select} WHERE ({columns}) > ({marks}){order} LIMIT %s",
                                (*after, fetch_size))  # fmt: skip
                batch = cur.fetchall()
            for values in batch:
                row = dict(zip(names, values, strict=True))
                yield table, row
            done += len(batch)
            if len(batch) < fetch_size:
                break
            after = tuple(row[k] for k in key)


# ------------------------------------------------------------------- parked snapshots
_parked: ParkedReaders[SnapshotReader] = ParkedReaders()
discard = _parked.discard


def park(key: str, reader: SnapshotReader) -> None:
    """Keep ``reader`` for the next lease of the same task in this process."""
    _parked.park(key, reader, PARK_SECONDS)


def resume(key: str, origin: str, committed: Mapping[str, Any] | None) -> SnapshotReader | None:
    """The parked reader of ``key`` if it reads ``origin`` (the server's address) and can go
    on from the ``committed`` offset. Any other parked reader of ``key`` is closed: its
    transaction would hold metadata locks on the tables it read until it expired."""
    reader = _parked.take(key)
    if reader is None:
        return None
    if reader.origin != origin:
        fits = False
    elif committed:
        fits = (committed.get("file"), committed.get("pos")) == (
            reader.position.file,
            reader.position.pos,
        )
    else:
        fits = reader.emitted == 0  # fmt: skip
    if reader.clean and fits:
        return reader
    reader.close()
    return None


__all__ = ["SnapshotReader", "begin", "discard", "park", "quote", "resume"]
