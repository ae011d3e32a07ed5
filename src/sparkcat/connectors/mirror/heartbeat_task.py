"""MirrorHeartbeatTask: one ``Heartbeat`` record per interval to partition 0 of
``heartbeats`` (source partition ``{"sourceClusterAlias", "targetClusterAlias"}``, offset
``{"offset": 0}``, as in Kafka). A lease emits its first heartbeat at once: task instances
live for one lease, which is shorter than a long interval would be."""

from __future__ import annotations

import threading
import time

from sparkcat.api.data import BYTES_SCHEMA
from sparkcat.api.records import SourceRecord
from sparkcat.api.source import SourceTask
from sparkcat.connectors.mirror.config import (
    EMIT_HEARTBEATS_ENABLED,
    EMIT_HEARTBEATS_INTERVAL_SECONDS,
    HEARTBEAT_CONFIG_DEF,
    VERSION,
    MirrorConfig,
)
from sparkcat.connectors.mirror.formats import Heartbeat

_MAX_WAIT_S = 1.0


class MirrorHeartbeatTask(SourceTask):
    """Emits heartbeats; see the module docs."""

    def __init__(self) -> None:
        self._stopped = threading.Event()
        self._source = self._target = self._topic = ""
        self._interval_s = 1.0
        self._next_due = 0.0

    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        config = MirrorConfig(HEARTBEAT_CONFIG_DEF, props)
        self._source, self._target = config.source_alias, config.target_alias
        self._topic = config.policy.heartbeats_topic()
        self._interval_s = config.interval_s(
            EMIT_HEARTBEATS_ENABLED, EMIT_HEARTBEATS_INTERVAL_SECONDS
        )
        self._next_due = time.monotonic()

    def poll(self) -> list[SourceRecord] | None:
        if self._interval_s < 0:
            self._stopped.wait(_MAX_WAIT_S)
            return None
        wait = self._next_due - time.monotonic()
        if wait > 0:
            # poll() must return within about a second, whatever the interval.
            self._stopped.wait(min(wait, _MAX_WAIT_S))
            if self._stopped.is_set() or time.monotonic() < self._next_due:
                return None
        self._next_due = max(self._next_due + self._interval_s, time.monotonic())
        timestamp = int(time.time() * 1000)
        heartbeat = Heartbeat(self._source, self._target, timestamp)
        record = SourceRecord(
            heartbeat.connect_partition(), {"offset": 0}, self._topic, 0,
            BYTES_SCHEMA, heartbeat.record_key(), BYTES_SCHEMA, heartbeat.record_value(),
            timestamp,
        )  # fmt: skip
        return [record]

    def stop(self) -> None:
        self._stopped.set()


__all__ = ["MirrorHeartbeatTask"]
