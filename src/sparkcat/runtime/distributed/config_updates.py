"""Kafka's ``DistributedHerder.ConfigUpdateListener``: the config store's callbacks, on the
store's reader thread. They only remember what the herder's tick thread must act on (restart
requests) and wake that thread; the tick reads the config snapshot itself."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sparkcat.runtime.stores.configs import RestartRequest

if TYPE_CHECKING:
    from sparkcat.runtime.distributed.herder import DistributedHerder


class ConfigUpdateListener:
    """Config-store callbacks (the store's reader thread): remember, wake the tick thread."""

    def __init__(self, herder: DistributedHerder) -> None:
        self._herder = herder

    def _wake(self) -> None:
        if self._herder.member is not None:
            self._herder.member.wakeup()

    def on_connector_config_update(self, connector: str) -> None:
        self._wake()

    def on_connector_config_remove(self, connector: str) -> None:
        self._wake()

    def on_task_config_update(self, tasks: Sequence[tuple[str, int]]) -> None:
        self._wake()

    def on_connector_target_state_change(self, connector: str) -> None:
        self._wake()

    def on_session_key_update(self, key: Any) -> None:
        pass

    def on_restart_request(self, request: RestartRequest) -> None:
        self._herder.add_restart_request(request)
        self._wake()

    def on_task_count_record(self, connector: str, task_count: int) -> None:
        self._wake()  # tasks waiting for their generation to be fenced may start now


__all__ = ["ConfigUpdateListener"]
