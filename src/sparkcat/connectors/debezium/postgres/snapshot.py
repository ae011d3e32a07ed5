"""The snapshot: every captured table read in one REPEATABLE READ transaction that imported
the slot's exported snapshot, so the rows are exactly the state at the slot's consistent
point and streaming from that point misses and repeats nothing. No table is locked.

Records are ``op=r`` events; ``source.snapshot`` is ``first`` for the first record, ``last``
for the last, ``first_in_data_collection``/``last_in_data_collection`` at the other table
boundaries and ``true`` otherwise (Debezium's ``SnapshotMarkerResolver``).

A lease may end before the snapshot does. The open transaction then waits, parked in this
process, for the task's next lease (:func:`park`/:func:`resume`) as long as every record
handed out so far was acknowledged; anywhere else, or after :data:`PARK_SECONDS`, the next
lease starts the snapshot again from scratch (the offset says it never completed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import (
    Position,
    now_us,
    read_event,
    snapshot_marker,
)
from sparkcat.connectors.debezium.parking import ParkedReaders
from sparkcat.connectors.debezium.postgres import database
from sparkcat.connectors.debezium.postgres.offsets import snapshot_offset
from sparkcat.connectors.debezium.postgres.tables import CapturedTable, Tables

PARK_SECONDS = 120.0


class SnapshotReader:
    """Reads the tables of one snapshot transaction, ``max_records`` at a time."""

    def __init__(
        self,
        conn: Any,
        tables: Tables,
        captured: Sequence[CapturedTable],
        lsn: int,
        tx_id: int | None,
        partition: Mapping[str, Any],
        fetch_size: int,
    ) -> None:
        self.conn = conn
        self.tables = tables
        self.lsn = lsn
        self.tx_id = tx_id
        self.partition = partition
        self._rows = _rows(conn, captured, fetch_size)
        self._pending = next(self._rows, None)
        self._previous_table: CapturedTable | None = None
        self.emitted = 0
        self.done = self._pending is None
        self.clean = True
        """No record handed out since the last acknowledgement of all of them."""

    def read(self, max_records: int) -> list[SourceRecord]:
        records: list[SourceRecord] = []
        while self._pending is not None and len(records) < max_records:
            table, texts = self._pending
            following = next(self._rows, None)
            last = following is None
            marker = snapshot_marker(
                self.emitted == 0,
                last,
                table is not self._previous_table,
                last or following[0] is not table,  # type: ignore[index]
            )
            records.append(self._record(table, texts, marker, last))
            self._previous_table = table
            self._pending = following
            self.emitted += 1
        self.done = self._pending is None
        if records:
            self.clean = False
        return records

    def _record(
        self, table: CapturedTable, texts: Sequence[Any], marker: str, last: bool
    ) -> SourceRecord:
        ts = now_us()
        names = [c.name for c in table.shape.columns]
        source = self.tables.source(table, ts, marker, self.lsn, self.tx_id)
        offset = snapshot_offset(self.lsn, self.tx_id, ts, last)
        return read_event(table.debezium, Position(self.partition, offset, source),
                          table.row(names, texts))  # fmt: skip

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection
            pass


def _rows(
    conn: Any, captured: Sequence[CapturedTable], fetch_size: int
) -> Iterator[tuple[CapturedTable, tuple[Any, ...]]]:
    for index, table in enumerate(captured):
        columns = ", ".join(database.quote_ident(c.name) for c in table.shape.columns)
        cursor = conn.cursor(name=f"sparkcat_snapshot_{index}")
        cursor.itersize = fetch_size
        cursor.execute(f"SELECT {columns} FROM {database.qualified(table.schema, table.name)}")
        try:
            while True:
                batch = cursor.fetchmany(fetch_size)
                if not batch:
                    break
                for row in batch:
                    yield table, row
        finally:
            cursor.close()


def begin(conn: Any, exported: str | None) -> int | None:
    """Open the snapshot transaction on ``conn`` (on ``exported`` if given); its xmin."""
    # psycopg2 opens the transaction before the first statement, in these settings; SET
    # TRANSACTION SNAPSHOT must be that first statement.
    conn.set_session(isolation_level="REPEATABLE READ", readonly=True, autocommit=False)
    with conn.cursor() as cursor:
        if exported:
            cursor.execute("SET TRANSACTION SNAPSHOT %s", (exported,))
        cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
        row = cursor.fetchone()
    return None if row is None else int(row[0])


# ------------------------------------------------------------------- parked snapshots
_parked: ParkedReaders[SnapshotReader] = ParkedReaders()
discard = _parked.discard


def park(key: str, reader: SnapshotReader) -> None:
    """Keep ``reader`` for the next lease of the same task in this process."""
    _parked.park(key, reader, PARK_SECONDS)


def resume(key: str, lsn: int | None) -> SnapshotReader | None:
    """The parked reader of ``key`` if it can go on from a committed offset at ``lsn``."""
    reader = _parked.take(key)
    if reader is None:
        return None
    if reader.clean and (reader.lsn == lsn if lsn is not None else reader.emitted == 0):
        return reader
    reader.close()
    return None


__all__ = ["SnapshotReader", "begin", "discard", "park", "resume"]
