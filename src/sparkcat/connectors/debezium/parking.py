"""Snapshot readers kept between two leases of the same task, in one process.

A lease ends every ``max.batch.ms``; a snapshot of a big table spans many. Its reader (a
connection holding the snapshot's transaction, and a cursor part-way through a table) is
parked when its lease ends and taken up by the task's next lease in the same process, or
closed when nobody takes it in time (its transaction would hold the server's
resources, MySQL's metadata locks, until then). The PostgreSQL and MySQL snapshots each keep
one :class:`ParkedReaders` and decide themselves whether a parked reader fits the offset
the next lease resumes from.
"""

from __future__ import annotations

import threading
from typing import Generic, Protocol, TypeVar

__all__ = ["ParkedReaders"]


class _Closeable(Protocol):
    def close(self) -> None: ...


R = TypeVar("R", bound=_Closeable)


class ParkedReaders(Generic[R]):
    """Readers by task key, each closed ``seconds`` after it was parked unless taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parked: dict[str, tuple[R, threading.Timer]] = {}

    def park(self, key: str, reader: R, seconds: float) -> None:
        """Keep ``reader`` for the next lease of the task ``key`` for ``seconds`` (closing
        another reader parked for it)."""
        timer = threading.Timer(seconds, self._expire, (key, reader))
        timer.daemon = True
        with self._lock:
            previous = self._parked.pop(key, None)
            self._parked[key] = (reader, timer)
        if previous is not None and previous[0] is not reader:
            previous[1].cancel()
            previous[0].close()
        timer.start()

    def take(self, key: str) -> R | None:
        """The reader parked for ``key``, no longer parked (the caller keeps or closes it)."""
        with self._lock:
            entry = self._parked.pop(key, None)
        if entry is None:
            return None
        entry[1].cancel()
        return entry[0]

    def discard(self, key: str) -> None:
        """Close the reader parked for ``key``, if any."""
        reader = self.take(key)
        if reader is not None:
            reader.close()

    def _expire(self, key: str, reader: R) -> None:
        with self._lock:
            entry = self._parked.get(key)
            if entry is None or entry[0] is not reader:
                return
            del self._parked[key]
        reader.close()
