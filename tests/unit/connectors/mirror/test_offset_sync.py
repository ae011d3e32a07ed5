"""When offset syncs are written, and how the checkpoint side translates with them."""

from __future__ import annotations

import pytest

from sparkcat.api.records import TopicPartition
from sparkcat.connectors.mirror.formats import OffsetSync
from sparkcat.connectors.mirror.offset_sync import OffsetSyncStore, OffsetSyncWriter

TP = TopicPartition("t", 0)


def test_first_record_then_every_offset_lag_max() -> None:
    writer = OffsetSyncWriter(max_offset_lag=10)
    sent = []
    for offset in range(25):
        writer.maybe_queue(TP, offset, offset)
        sent += [s.upstream_offset for s in writer.take_pending()]
    assert sent == [0, 11, 22]
    writer.promote_delayed()
    assert [s.upstream_offset for s in writer.take_pending()] == [24]


def test_gap_upstream_forces_a_sync() -> None:
    writer = OffsetSyncWriter(max_offset_lag=100)
    writer.maybe_queue(TP, 0, 0)
    writer.take_pending()
    writer.maybe_queue(TP, 5, 1)  # records 1-4 were compacted or filtered away
    assert writer.take_pending() == [OffsetSync(TP, 5, 1)]


def test_translation_never_passes_an_unconsumed_record() -> None:
    store = OffsetSyncStore()
    for upstream, downstream in ((0, 100), (10, 110), (20, 120)):
        store.add(OffsetSync(TP, upstream, downstream))
    assert store.translate_downstream(TP, 10) == 110
    assert store.translate_downstream(TP, 15) == 111
    assert store.translate_downstream(TP, 99) == 121
    assert store.translate_downstream(TopicPartition("other", 0), 5) is None


def test_offsets_before_the_first_sync_cannot_be_translated() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync(TP, 50, 0))
    assert store.translate_downstream(TP, 10) == -1


def test_upstream_rewind_discards_older_syncs() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync(TP, 50, 50))
    store.add(OffsetSync(TP, 0, 60))
    assert store.translate_downstream(TP, 55) == 61


def per_record(writer: OffsetSyncWriter, pairs: list[tuple[int, int]]) -> list[OffsetSync]:
    """Kafka's way: maybeQueueOffsetSyncs then firePendingOffsetSyncs for every record."""
    sent = []
    for upstream, downstream in pairs:
        if downstream >= 0:
            writer.maybe_queue(("t", 0), upstream, downstream)
            sent += writer.take_pending()
    return sent


RUNS = {
    "contiguous": [[(u, u + 100) for u in range(0, 50)], [(u, u + 100) for u in range(50, 75)]],
    "upstream gap": [[(0, 0), (1, 1), (5, 2), (6, 3), (7, 4)]],
    "downstream truncated": [[(u, u) for u in range(30)], [(u, u - 20) for u in range(30, 60)]],
    "unknown downstream": [[(0, 0), (1, -1), (2, 1), (3, 2)]],
    "out of order": [[(0, 0), (1, 2), (2, 1), (3, 3)]],
    "single records": [[(0, 0)], [(1, 1)], [(2, 2)]],
}


@pytest.mark.parametrize("lag", [0, 1, 10, 100])
@pytest.mark.parametrize("case", sorted(RUNS))
def test_a_run_gives_the_syncs_of_its_records_one_by_one(case: str, lag: int) -> None:
    batched, one_by_one = OffsetSyncWriter(lag), OffsetSyncWriter(lag)
    synced: list[OffsetSync] = []
    expected: list[OffsetSync] = []
    for run in RUNS[case]:
        upstream, downstream = [u for u, _ in run], [d for _, d in run]
        synced += batched.sync_run(("t", 0), upstream, downstream)
        expected += per_record(one_by_one, run)
    assert synced == expected
    batched.promote_delayed()
    one_by_one.promote_delayed()
    assert batched.take_pending() == one_by_one.take_pending()  # the last record, at commit
