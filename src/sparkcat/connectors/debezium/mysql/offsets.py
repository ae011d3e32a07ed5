"""Binlog offsets in Debezium's shape, and the bookkeeping that produces them.

The source partition is ``{"server": <topic.prefix>}``. The offset says where to restart:
``file`` and ``pos`` (the binlog coordinates of the transaction in progress, or of the next
event between transactions), ``event`` (events of that transaction already handled, BEGIN
included), ``row`` (rows of the next rows event already handled), ``gtids`` (the GTID set
completed before that point, where the server has GTIDs), ``server_id`` and ``ts_sec`` of the
last event; ``snapshot``/``snapshot_completed`` while and after a snapshot. Keys with a zero or
missing value are left out, as Debezium's ``BinlogOffsetContext.getOffset`` does.

:class:`OffsetTracker` follows the binlog as Debezium's streaming source does: a rotate moves
the start point; outside a transaction each event moves it past itself; BEGIN (or a MariaDB
GTID event that opens a transaction) pins it to the transaction's start until the commit (XID
or COMMIT) moves it past the commit event. A change's offset is taken while its row is being
emitted, so a restart from it skips exactly the events and rows already delivered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

FILE_KEY = "file"
POS_KEY = "pos"
ROW_KEY = "row"
EVENT_KEY = "event"
GTIDS_KEY = "gtids"
SERVER_ID_KEY = "server_id"
TS_SEC_KEY = "ts_sec"
SNAPSHOT_KEY = "snapshot"
SNAPSHOT_COMPLETED_KEY = "snapshot_completed"


def source_partition(topic_prefix: str) -> dict[str, str]:
    return {"server": topic_prefix}


@dataclass(frozen=True, slots=True)
class BinlogOffset:
    """A restart point: start reading at ``file``/``pos``, skip ``event`` events, then ``row``
    rows of the next rows event."""

    file: str
    pos: int
    event: int = 0
    row: int = 0
    gtids: str | None = None
    server_id: int = 0
    ts_sec: int | None = None

    @classmethod
    def load(cls, offset: Mapping[str, Any]) -> BinlogOffset:
        """Read a stored offset; a missing ``file`` is an error, as in Debezium."""
        file = offset.get(FILE_KEY)
        if file is None:
            raise ValueError(f"Source offset '{FILE_KEY}' parameter is missing")
        gtids = offset.get(GTIDS_KEY)
        if isinstance(gtids, str):
            gtids = gtids.replace("\n", "").replace("\r", "").strip() or None
        ts = offset.get(TS_SEC_KEY)
        return cls(
            file=str(file),
            pos=int(offset.get(POS_KEY) or 0),
            event=int(offset.get(EVENT_KEY) or 0),
            row=int(offset.get(ROW_KEY) or 0),
            gtids=gtids,
            server_id=int(offset.get(SERVER_ID_KEY) or 0),
            ts_sec=None if ts is None else int(ts),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.server_id:
            out[SERVER_ID_KEY] = self.server_id
        if self.gtids is not None:
            out[GTIDS_KEY] = self.gtids
        out[FILE_KEY] = self.file
        out[POS_KEY] = self.pos
        if self.event:
            out[EVENT_KEY] = self.event
        if self.row:
            out[ROW_KEY] = self.row
        if self.ts_sec is not None:
            out[TS_SEC_KEY] = self.ts_sec
        return out


class MariaDbGtidSet:
    """MariaDB's GTID position: the last ``domain-server-seq`` of each replication domain."""

    __slots__ = ("_domains",)

    def __init__(self, text: str | None = None) -> None:
        self._domains: dict[int, str] = {}
        for gtid in (text or "").split(","):
            if gtid.strip():
                self.add(gtid.strip())

    def add(self, gtid: str) -> None:
        self._domains[int(gtid.split("-", 1)[0])] = gtid

    def __str__(self) -> str:
        return ",".join(self._domains[d] for d in sorted(self._domains))


class MySqlGtidSet:
    """MySQL's GTID set (``uuid:1-5:7,uuid2:1-3``), kept by mysql-replication's ``GtidSet``."""

    __slots__ = ("_set",)

    def __init__(self, text: str | None = None) -> None:
        from pymysqlreplication.gtid import GtidSet

        self._set = GtidSet(text or None)

    def add(self, gtid: str) -> None:
        from pymysqlreplication.gtid import Gtid

        self._set.merge_gtid(Gtid(gtid))

    def __str__(self) -> str:
        return str(self._set).replace("\n", "")


class OffsetTracker:
    """Debezium's ``BinlogOffsetContext`` bookkeeping over a stream of binlog events."""

    def __init__(self, start: BinlogOffset, gtid_set: MariaDbGtidSet | MySqlGtidSet | None) -> None:
        self.file = start.file
        self.event_pos = start.pos  # where the current event starts (source.pos)
        self.row = 0  # the row of the current event (source.row)
        self.server_id = start.server_id
        self.ts_sec = start.ts_sec
        self.gtid: str | None = None  # the current transaction's GTID (source.gtid)
        self.thread: int | None = None
        self.query: str | None = None
        self._gtid_set = gtid_set
        self._restart_gtids = start.gtids if gtid_set is not None else None
        self._restart_file = start.file
        self._restart_pos = start.pos
        self._events = 0
        self._rows = 0
        self._event_length = 0
        self.in_transaction = False

    # -- events ----------------------------------------------------------------------------
    def rotate(self, file: str, pos: int) -> None:
        self.file = self._restart_file = file
        self.event_pos = self._restart_pos = pos
        self.row = self._events = self._rows = 0

    def event(self, start: int, length: int, server_id: int, ts_sec: int) -> None:
        self.server_id = server_id
        self.ts_sec = ts_sec
        if start <= 0:
            return
        self.event_pos = start
        self._event_length = length
        if not self.in_transaction:
            self._restart_pos = start + length
            self._events = self._rows = 0

    def gtid_started(self, gtid: str) -> None:
        self.gtid = gtid
        if self._gtid_set is not None:
            self._gtid_set.add(gtid)

    def begin(self, thread: int | None) -> None:
        self._events = self._rows = 0
        self._restart_file = self.file
        self._restart_pos = self.event_pos
        self.in_transaction = True
        self.thread = thread

    def commit(self) -> None:
        if self._gtid_set is not None:
            self._restart_gtids = str(self._gtid_set) or None
        self._restart_file = self.file
        self._restart_pos = self.event_pos + self._event_length
        self._events = self._rows = 0
        self.in_transaction = False
        self.query = None
        self.thread = None

    def row_emitted(self, index: int, count: int) -> None:
        self.row = index
        self._rows = index + 1 if index < count - 1 else count

    def rows_done(self) -> None:
        self._rows = 0

    def event_done(self) -> None:
        self._events += 1

    # -- the offset ------------------------------------------------------------------------
    def offset(self) -> BinlogOffset:
        return BinlogOffset(
            self._restart_file, self._restart_pos, self._events, self._rows,
            self._restart_gtids, self.server_id, self.ts_sec,
        )  # fmt: skip


__all__ = [
    "BinlogOffset",
    "MariaDbGtidSet",
    "MySqlGtidSet",
    "OffsetTracker",
    "source_partition",
]
