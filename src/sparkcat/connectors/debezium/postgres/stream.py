"""Streaming: the slot's changes over the replication protocol, decoded from ``pgoutput``
(protocol 1, ``publication_names``) into change events.

PostgreSQL refuses a second consumer of a slot ("replication slot ... is active for PID
..."): :func:`open_stream` waits for the slot to be free, then tries ``slot.max.retries``
times ``slot.retry.delay.ms`` apart before it fails the task, so two instances of the task
never read one slot at once.
"""

from __future__ import annotations

import logging
import select
import struct
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import psycopg2
import psycopg2.extras

from sparkcat.api.errors import ConnectError
from sparkcat.api.records import SourceRecord
from sparkcat.connectors.debezium.envelope import (
    OP_CREATE,
    OP_DELETE,
    OP_UPDATE,
    EventSettings,
    Position,
    change_events,
    truncate_event,
)
from sparkcat.connectors.debezium.incremental import IncrementalSnapshot
from sparkcat.connectors.debezium.postgres import database, pgoutput
from sparkcat.connectors.debezium.postgres.changes import ChangeColumns, ChangePlan
from sparkcat.connectors.debezium.postgres.config import ConnectionSettings
from sparkcat.connectors.debezium.postgres.offsets import StoredOffset, StreamPosition
from sparkcat.connectors.debezium.postgres.tables import CapturedTable, Tables

log = logging.getLogger(__name__)

_OBJECT_IN_USE = "55006"
_CHANGE_TAGS = frozenset(b"IUD")
_TAG_BEGIN, _TAG_COMMIT = 0x42, 0x43
_RELATION_ID = struct.Struct(">I").unpack_from
_BEGIN = struct.Struct(">QqI").unpack_from  # final LSN, commit time, xid
_COMMIT_END_LSN = struct.Struct(">Q").unpack_from  # at byte 10, after flags and commit LSN


@dataclass(frozen=True)
class SlotSettings:
    slot: str
    publication: str
    max_retries: int
    retry_delay_s: float
    status_interval_s: float


def open_stream(
    connection: ConnectionSettings, admin: Any, slot: SlotSettings, start_lsn: int
) -> Any:
    """The cursor of a replication connection streaming ``slot`` from ``start_lsn`` (0: where
    it stands). Read it with this cursor: psycopg2 keeps the stream's status interval per
    cursor, and a read through another cursor of the connection cost 50x as much (measured:
    43 µs a message against 1 µs, about a third of the task's time)."""
    last_error: Exception | None = None
    for attempt in range(slot.max_retries):
        # A previous lease of this task may still be leaving the slot: give it a moment.
        database.wait_until_inactive(
            admin, slot.slot, connection.dbname, min(2.0, max(0.1, slot.retry_delay_s))
        )
        conn = database.connect(connection, replication=True)
        cursor = conn.cursor()
        try:
            cursor.start_replication(
                slot_name=slot.slot,
                decode=False,
                start_lsn=start_lsn,
                options={"proto_version": "1", "publication_names": slot.publication},
                status_interval=slot.status_interval_s,
            )
            return cursor
        except psycopg2.Error as exc:
            conn.close()
            if getattr(exc, "pgcode", None) != _OBJECT_IN_USE:
                raise ConnectError(f"Could not stream slot '{slot.slot}': {exc}") from exc
            last_error = exc
            log.info("Slot %s is in use (attempt %d of %d): %s", slot.slot, attempt + 1,
                     slot.max_retries, str(exc).strip())  # fmt: skip
            if attempt + 1 < slot.max_retries:
                time.sleep(slot.retry_delay_s)
    raise ConnectError(
        f"Unable to obtain valid replication slot '{slot.slot}': it is in use by another "
        f"consumer after {slot.max_retries} attempts ({str(last_error).strip()}). Another "
        "connector (or a stale task) is streaming from it; stop it or use another slot.name"
    )


class StreamReader:
    """Turns the messages of one replication cursor (:func:`open_stream`) into records."""

    def __init__(
        self,
        cursor: Any,
        tables: Tables,
        captured: Any,
        events: EventSettings,
        partition: Mapping[str, Any],
        position: StreamPosition,
        skip_until: StoredOffset | None,
        incremental: IncrementalSnapshot | None = None,
    ) -> None:
        self.conn = cursor.connection
        self.cursor = cursor
        self.tables = tables
        self.captured = captured
        self.events = events
        self.partition = partition
        self.position = position
        self._skip = skip_until
        self.incremental = incremental
        self._relations: dict[int, pgoutput.Relation] = {}
        # Per relation, decided when its Relation message arrives rather than per change:
        # whether the filters capture it, and its column names.
        self._captured: dict[int, bool] = {}
        self._names: dict[int, list[str]] = {}
        # The one-pass decoders of captured relations (see changes.py).
        self._plans: dict[int, ChangePlan] = {}
        self._xid: int | None = None
        """The xid of the transaction being read (``None`` between transactions)."""

    def flush(self, lsn: int) -> None:
        """Confirm ``lsn`` to the slot (``confirmed_flush_lsn``)."""
        self.cursor.send_feedback(flush_lsn=lsn, force=True)

    def read(self, max_records: int, wait_s: float) -> ChangeColumns:
        """Up to ``max_records`` records, waiting up to ``wait_s`` for a first one."""
        records = ChangeColumns()
        deadline = time.monotonic() + wait_s
        read_message = self.cursor.read_message
        plans, position, incremental = self._plans, self.position, self.incremental
        while len(records) < max_records:
            message = read_message()
            if message is None:
                if records:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                select.select([self.conn], [], [], min(remaining, 0.2))
                continue
            payload = message.payload
            tag = payload[0]
            # Changes, begins and commits (all but a few messages) skip the general decoder.
            if tag in _CHANGE_TAGS:
                plan = plans.get(_RELATION_ID(payload, 1)[0])
                if (
                    plan is not None
                    and self._skip is None
                    and incremental is None
                    and plan.change(payload, message.data_start, position, records)
                ):
                    continue
            elif tag == _TAG_BEGIN:
                _, commit_us, xid = _BEGIN(payload, 1)
                self._xid = position.tx_id = xid
                position.ts_usec = commit_us + pgoutput.PG_EPOCH_US
                continue
            elif tag == _TAG_COMMIT:
                self._commit(_COMMIT_END_LSN(payload, 10)[0])
                continue
            records.extend(self._handle(message.data_start, bytes(payload)))
        return records

    def _commit(self, end_lsn: int) -> None:
        self.position.committed(end_lsn)
        skip = self._skip
        if skip is not None and self._xid == skip.tx_id:
            self._skip = None
        self._xid = None

    def _handle(self, lsn: int, payload: bytes) -> list[SourceRecord]:
        message = pgoutput.decode(payload)
        if isinstance(message, pgoutput.Begin):
            self._xid = self.position.tx_id = message.xid
            self.position.ts_usec = message.commit_time_us
        elif isinstance(message, pgoutput.Commit):
            self._commit(message.end_lsn)
        elif isinstance(message, pgoutput.Relation):
            self._relation(message)
        elif isinstance(message, pgoutput.Insert | pgoutput.Update | pgoutput.Delete):
            return self._change(lsn, message)
        elif isinstance(message, pgoutput.Truncate):
            return self._truncate(lsn, message)
        return []

    def _relation(self, message: pgoutput.Relation) -> None:
        relation_id = message.relation_id
        known = self._relations.get(relation_id)
        self._relations[relation_id] = message
        self._names[relation_id] = [c.name for c in message.columns]
        self._plans.pop(relation_id, None)
        captured = self._captured[relation_id] = bool(
            self.captured(message.namespace, message.name)
        )
        if captured:
            table = self.tables.get(message.namespace, message.name,
                                    refresh=known is not None and known != message)  # fmt: skip
            self._plans[relation_id] = ChangePlan(table, message, self.events, self.partition)

    def _skipped(self, lsn: int) -> bool:
        skip = self._skip
        if skip is None or self._xid is None or self._xid != skip.tx_id:
            return False
        if skip.lsn is None:
            return False
        if lsn < skip.lsn:
            return True
        return lsn == skip.lsn and self.position.events_at_lsn <= skip.events_at_lsn

    def _table(self, relation_id: int) -> tuple[pgoutput.Relation, CapturedTable | None]:
        relation = self._relations[relation_id]
        if not self._captured[relation_id]:
            return relation, None
        return relation, self.tables.get(relation.namespace, relation.name)

    def _position(self, table: CapturedTable) -> Position:
        p = self.position
        sequence = f'["{p.lsn_commit}","{p.lsn}"]' if p.lsn_commit is not None else None
        source = self.tables.source(table, p.ts_usec or 0, "false", p.lsn, p.tx_id, sequence)
        return Position(self.partition, self.offset(), source)

    def offset(self) -> dict[str, Any]:
        """The offset of the current position (with the incremental snapshot's progress)."""
        offset = self.position.offset()
        if self.incremental is not None:
            offset.update(self.incremental.offset())
        return offset

    def _change(
        self, lsn: int, message: pgoutput.Insert | pgoutput.Update | pgoutput.Delete
    ) -> list[SourceRecord]:
        self.position.event(lsn)
        if self._skipped(lsn):
            return []
        relation, table = self._table(message.relation_id)
        signals: list[SourceRecord] = []
        incremental = self.incremental
        if (
            incremental is not None
            and isinstance(message, pgoutput.Insert)
            and incremental.is_signal(relation.namespace, relation.name)
        ):
            signals = incremental.on_signal(message.new, self.partition, self.offset())
        if table is None:
            return signals
        names = self._names[message.relation_id]
        if incremental is not None:
            for values in _tuples(message):
                incremental.on_change(table, _key(table, names, values))
        if isinstance(message, pgoutput.Insert):
            op, before, after = OP_CREATE, None, table.row(names, message.new)
        elif isinstance(message, pgoutput.Update):
            before = None if message.old is None else table.row(names, message.old)
            op, after = OP_UPDATE, table.row(names, message.new)
        else:
            op, before, after = OP_DELETE, table.row(names, message.old), None
        position = self._position(table)
        return change_events(table.debezium, self.events, position, op, before, after) + signals

    def _truncate(self, lsn: int, message: pgoutput.Truncate) -> list[SourceRecord]:
        self.position.event(lsn)
        if self._skipped(lsn):
            return []
        records: list[SourceRecord] = []
        for relation_id in message.relation_ids:
            _, table = self._table(relation_id)
            if table is not None:
                records += truncate_event(table.debezium, self.events, self._position(table))
        return records

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # closing a broken connection
            pass


def _tuples(message: pgoutput.Insert | pgoutput.Update | pgoutput.Delete) -> list[Any]:
    if isinstance(message, pgoutput.Delete):
        return [message.old]
    if isinstance(message, pgoutput.Update) and message.old is not None:
        return [message.old, message.new]
    return [message.new]


def _key(table: CapturedTable, names: list[str], values: Any) -> tuple[Any, ...]:
    by_name = dict(zip(names, values, strict=True))
    return tuple(by_name.get(c) for c in table.debezium.key_columns)


__all__ = ["SlotSettings", "StreamReader", "open_stream"]
