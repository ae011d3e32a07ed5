"""KIP-558 topic tracking, shared by both herders: the topics each connector's tasks produced
to (source) or consumed from (sink), kept in the status store.

The engine reports the topics of every lease through :meth:`HerderTopics.on_topics`; a
topic this worker's status store does not know yet for the connector becomes a
:class:`~sparkcat.runtime.stores.statuses.TopicStatus` (the reporting task, the time it was
reported). In distributed mode that is a ``status-topic-<topic>:connector-<name>`` record of
the status topic, so every worker answers ``GET /connectors/<name>/topics`` the same and the
topics survive restarts; a record is written once per connector and topic for as long as the
store knows it (Kafka's ``WorkerTask.recordActiveTopic``). ``PUT .../topics/reset`` and the
deletion of the connector delete them (tombstones), after which the next use records the
topic again. ``topic.tracking.enable=false`` writes nothing and the endpoints answer 403.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from sparkcat.runtime.herder.core import HerderCore
from sparkcat.runtime.rest.errors import ConnectRestError
from sparkcat.runtime.stores.statuses import TopicStatus

TOPIC_TRACKING_ENABLE_CONFIG = "topic.tracking.enable"
TOPIC_TRACKING_ALLOW_RESET_CONFIG = "topic.tracking.allow.reset"


class HerderTopics(HerderCore):
    """Topic tracking of :class:`~sparkcat.runtime.herder.base.AbstractHerder`."""

    def _tracking(self) -> bool:
        return bool(self.worker_config.get_boolean(TOPIC_TRACKING_ENABLE_CONFIG))

    def _check_tracking(self, reset: bool = False) -> None:
        if not self._tracking():
            raise ConnectRestError("Topic tracking is disabled.", 403)
        if reset and not self.worker_config.get_boolean(TOPIC_TRACKING_ALLOW_RESET_CONFIG):
            raise ConnectRestError("Topic tracking reset is disabled.", 403)

    def connector_active_topics(self, name: str) -> dict[str, Any]:
        """``GET .../topics``: ``{"<name>": {"topics": [...]}}`` (empty for an unknown
        connector, as Kafka)."""
        self._check_tracking()
        return {name: {"topics": [s.topic for s in self.status.get_all_topics(name)]}}

    def reset_connector_active_topics(self, name: str) -> None:
        """``PUT .../topics/reset``: delete the connector's topic statuses, on any worker."""
        self._check_tracking(reset=True)
        self._delete_active_topics(name)

    def reset_deleted_connector_topics(self, name: str) -> None:
        """The connector was deleted and its work here has stopped: its topic statuses go
        (Kafka resets them once the revoked connector and tasks stopped, or a late lease of
        theirs would write them again)."""
        if self._tracking():
            self._delete_active_topics(name)

    def _delete_active_topics(self, name: str) -> None:
        for status in self.status.get_all_topics(name):
            self.status.delete_topic(name, status.topic)

    def on_topics(self, connector: str, task: int, topics: Iterable[str]) -> None:
        """Engine callback: the task used ``topics`` in a lease (ignored for a connector
        not running here, e.g. one just deleted, or when tracking is off)."""
        if not self._tracking():
            return
        now_ms = int(time.time() * 1000)
        # Checked and written under the state lock: once a deleted connector's work is
        # dropped from ``_live`` and its topics reset, no late lease writes them back.
        with self._state_lock:
            if connector not in self._live:
                return
            for topic in topics:
                if self.status.get_topic(connector, topic) is None:
                    self.status.put_topic(TopicStatus(topic, connector, task, now_ms))


__all__ = [
    "TOPIC_TRACKING_ALLOW_RESET_CONFIG",
    "TOPIC_TRACKING_ENABLE_CONFIG",
    "HerderTopics",
]
