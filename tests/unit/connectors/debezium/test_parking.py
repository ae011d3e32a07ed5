"""Parked snapshot readers: taken by the next lease, closed when replaced or expired."""

from __future__ import annotations

import time

from sparkcat.connectors.debezium.parking import ParkedReaders


class Reader:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_the_next_lease_takes_the_parked_reader_once() -> None:
    parked: ParkedReaders[Reader] = ParkedReaders()
    reader = Reader()
    parked.park("c-0", reader, 60)
    assert parked.take("c-1") is None
    assert parked.take("c-0") is reader and not reader.closed
    assert parked.take("c-0") is None


def test_parking_another_reader_closes_the_first_and_discard_closes_it() -> None:
    parked: ParkedReaders[Reader] = ParkedReaders()
    first, second = Reader(), Reader()
    parked.park("c-0", first, 60)
    parked.park("c-0", second, 60)
    assert first.closed and not second.closed
    parked.discard("c-0")
    assert second.closed and parked.take("c-0") is None


def test_a_reader_nobody_takes_is_closed_when_it_expires() -> None:
    parked: ParkedReaders[Reader] = ParkedReaders()
    reader = Reader()
    parked.park("c-0", reader, 0.05)
    deadline = time.monotonic() + 5
    while not reader.closed and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reader.closed and parked.take("c-0") is None
