"""Offsets in Debezium's shape, read back: where a restart resumes, whether a snapshot ran."""

from __future__ import annotations

from sparkcat.connectors.debezium.postgres.offsets import (
    StoredOffset,
    StreamPosition,
    snapshot_offset,
)


def test_stream_offsets_carry_debezium_keys() -> None:
    position = StreamPosition(lsn=100, lsn_proc=100, lsn_commit=100, tx_id=7, ts_usec=5)
    position.event(120)
    assert position.offset() == {"ts_usec": 5, "txId": 7, "lsn": 120, "lsn_proc": 120,
                                 "lsn_commit": 100}  # fmt: skip
    position.event(120)  # a second event at one LSN (a multi-row insert)
    assert position.offset()["lsn_events_processed"] == 2
    position.committed(200)
    assert (position.lsn, position.lsn_commit) == (200, 200)


def test_stored_offset_resumes_at_last_commit() -> None:
    stored = StoredOffset.of({"lsn": 120, "lsn_commit": 100, "txId": 7, "ts_usec": 5})
    assert stored is not None
    assert (stored.resume_lsn, stored.tx_id, stored.events_at_lsn) == (100, 7, 1)
    assert not stored.in_snapshot
    assert StoredOffset.of(None) is None


def test_snapshot_offsets_say_whether_it_completed() -> None:
    running = StoredOffset.of(snapshot_offset(50, 3, 9, last=False))
    done = StoredOffset.of(snapshot_offset(50, 3, 9, last=True))
    assert running is not None and running.in_snapshot
    assert done is not None and not done.in_snapshot and done.resume_lsn == 50
    assert snapshot_offset(50, 3, 9, last=True) == {
        "ts_usec": 9, "lsn": 50, "snapshot": True, "txId": 3, "last_snapshot_record": True,
        "snapshot_completed": True}  # fmt: skip
