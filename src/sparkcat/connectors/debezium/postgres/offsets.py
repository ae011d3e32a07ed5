"""Offsets in Debezium's shape (``PostgresOffsetContext``).

Partition ``{"server": <topic.prefix>}``. Offset keys: ``lsn`` (the event's LSN), ``lsn_proc``
(the last completely processed LSN), ``lsn_commit`` (the end of the last transaction that was
completely processed), ``txId``, ``ts_usec`` (commit time, epoch microseconds), and
``lsn_events_processed`` when several events share one LSN. While a snapshot runs:
``snapshot: true``, ``last_snapshot_record`` and ``snapshot_completed``.

On restart the stream resumes at ``lsn_commit`` (PostgreSQL replays whole transactions from
there) and the events of transaction ``txId`` up to ``lsn`` are skipped, having been sent.
The slot's ``confirmed_flush_lsn`` is moved to ``lsn_commit`` of an offset the framework has
committed, never further.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LSN = "lsn"
LSN_PROC = "lsn_proc"
LSN_COMMIT = "lsn_commit"
TX_ID = "txId"
TS_USEC = "ts_usec"
LSN_EVENTS_PROCESSED = "lsn_events_processed"
SNAPSHOT = "snapshot"
LAST_SNAPSHOT_RECORD = "last_snapshot_record"
SNAPSHOT_COMPLETED = "snapshot_completed"


def partition(server: str) -> dict[str, str]:
    return {"server": server}


@dataclass(frozen=True)
class StoredOffset:
    """A committed offset, read back."""

    lsn: int | None
    lsn_commit: int | None
    tx_id: int | None
    events_at_lsn: int
    in_snapshot: bool

    @classmethod
    def of(cls, offset: Mapping[str, Any] | None) -> StoredOffset | None:
        if not offset:
            return None
        snapshot = offset.get(SNAPSHOT)
        completed = bool(offset.get(LAST_SNAPSHOT_RECORD)) or bool(offset.get(SNAPSHOT_COMPLETED))
        in_snapshot = snapshot not in (None, False, "false", "FALSE") and not completed
        return cls(
            _int(offset.get(LSN)),
            _int(offset.get(LSN_COMMIT)),
            _int(offset.get(TX_ID)),
            _int(offset.get(LSN_EVENTS_PROCESSED)) or 1,
            in_snapshot,
        )

    @property
    def resume_lsn(self) -> int:
        """Where the stream restarts: the last completed transaction's end."""
        return self.lsn_commit or self.lsn or 0


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def snapshot_offset(lsn: int, tx_id: int | None, ts_usec: int, last: bool) -> dict[str, Any]:
    offset: dict[str, Any] = {TS_USEC: ts_usec, LSN: lsn, SNAPSHOT: True}
    if tx_id is not None:
        offset[TX_ID] = tx_id
    offset[LAST_SNAPSHOT_RECORD] = last
    offset[SNAPSHOT_COMPLETED] = last
    return offset


@dataclass
class StreamPosition:
    """The position of the stream reader, turned into an offset per event."""

    lsn: int = 0
    lsn_proc: int | None = None
    lsn_commit: int | None = None
    tx_id: int | None = None
    ts_usec: int | None = None
    events_at_lsn: int = 0

    def event(self, lsn: int) -> None:
        self.events_at_lsn = self.events_at_lsn + 1 if lsn == self.lsn else 1
        self.lsn = lsn
        self.lsn_proc = lsn

    def committed(self, end_lsn: int) -> None:
        self.lsn = end_lsn
        self.lsn_proc = end_lsn
        self.lsn_commit = end_lsn
        self.events_at_lsn = 0

    def offset(self) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if self.ts_usec is not None:
            result[TS_USEC] = self.ts_usec
        if self.tx_id is not None:
            result[TX_ID] = self.tx_id
        result[LSN] = self.lsn
        if self.lsn_proc is not None:
            result[LSN_PROC] = self.lsn_proc
        if self.lsn_commit is not None:
            result[LSN_COMMIT] = self.lsn_commit
        if self.events_at_lsn > 1:
            result[LSN_EVENTS_PROCESSED] = self.events_at_lsn
        return result


__all__ = ["StoredOffset", "StreamPosition", "partition", "snapshot_offset"]
