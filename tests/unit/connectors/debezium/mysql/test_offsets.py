from __future__ import annotations

import pytest

from sparkcat.connectors.debezium.mysql.offsets import (
    BinlogOffset,
    MariaDbGtidSet,
    MySqlGtidSet,
    OffsetTracker,
    source_partition,
)


def test_offsets_have_debeziums_keys_and_leave_zeros_out() -> None:
    offset = BinlogOffset("mysql-bin.000003", 154, 2, 1, "0-1-7", 223344, 1_700_000_000)
    assert offset.to_dict() == {
        "server_id": 223344, "gtids": "0-1-7", "file": "mysql-bin.000003",
        "pos": 154, "event": 2, "row": 1, "ts_sec": 1_700_000_000}  # fmt: skip
    assert BinlogOffset("f.1", 4).to_dict() == {"file": "f.1", "pos": 4}
    assert BinlogOffset.load(offset.to_dict()) == offset
    assert source_partition("dbserver1") == {"server": "dbserver1"}


def test_loading_an_offset_without_file_fails_as_debezium_does() -> None:
    with pytest.raises(ValueError, match="Source offset 'file' parameter is missing"):
        BinlogOffset.load({"pos": 4})
    loaded = BinlogOffset.load({"file": "f.2", "pos": "10", "gtids": "0-1-2,\n1-1-3"})
    assert (loaded.pos, loaded.gtids) == (10, "0-1-2,1-1-3")


def test_a_transaction_pins_the_restart_point_until_it_commits() -> None:
    tracker = OffsetTracker(BinlogOffset("b.1", 4, gtids="0-1-1"), MariaDbGtidSet("0-1-1"))
    tracker.event(100, 40, 1, 7)  # a GTID event opening a transaction
    tracker.gtid_started("0-1-2")
    tracker.begin(None)
    tracker.event_done()
    tracker.event(140, 60, 1, 7)  # the table map
    tracker.event_done()
    tracker.event(200, 80, 1, 7)  # a rows event of three rows
    seen = []
    for index in range(3):
        tracker.row_emitted(index, 3)
        seen.append(tracker.offset().to_dict())
    tracker.rows_done()
    tracker.event_done()
    assert [(o["pos"], o.get("event"), o.get("row"), o["gtids"]) for o in seen] == [
        (100, 2, 1, "0-1-1"), (100, 2, 2, "0-1-1"), (100, 2, 3, "0-1-1")]  # fmt: skip
    tracker.event(280, 31, 1, 8)  # the XID event
    tracker.commit()
    tracker.event_done()
    after = tracker.offset().to_dict()
    assert (after["pos"], after.get("event"), after.get("row"), after["gtids"]) == (
        311, 1, None, "0-1-2")  # fmt: skip
    tracker.event(311, 50, 1, 9)  # outside a transaction each event moves the point past it
    assert tracker.offset().to_dict()["pos"] == 361 and "event" not in tracker.offset().to_dict()
    tracker.rotate("b.2", 4)
    assert (tracker.offset().file, tracker.offset().pos) == ("b.2", 4)


def test_gtid_sets() -> None:
    mariadb = MariaDbGtidSet("0-1-5,1-2-9")
    mariadb.add("0-1-6")
    assert str(mariadb) == "0-1-6,1-2-9"
    mysql = MySqlGtidSet("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    mysql.add("3e11fa47-71ca-11e1-9e33-c80aa9429562:6")
    assert str(mysql) == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-6"
