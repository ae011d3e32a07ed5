"""When offset syncs are written, and how the checkpoint side translates with them."""

from __future__ import annotations

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
