"""The contexts handed to ``Connector.initialize`` (Kafka's ``HerderConnectorContext``):
what a running connector may ask of its herder, as two callbacks rather than a reference to
the herder, and, for a source connector, its offsets through the worker's offset store."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sparkcat.api.errors import ConnectError
from sparkcat.api.sink import SinkConnectorContext
from sparkcat.api.source import OffsetStorageReader, SourceConnectorContext
from sparkcat.runtime.herder.state import ManagedConnector


class _ContextBase:
    """What a connector may ask of its herder, as two callbacks (no reference to the herder)."""

    def __init__(
        self,
        name: str,
        reconfigure: Callable[[str], None],
        fail: Callable[[str, BaseException], None],
        offset_store: Any,
    ) -> None:
        self._name = name
        self._reconfigure = reconfigure
        self._fail = fail
        self._offset_store = offset_store
        self._closed = False

    def close(self) -> None:
        self._closed = True

    def request_task_reconfiguration(self) -> None:
        if self._closed:
            raise ConnectError(
                f"The connector {self._name} was shut down; it cannot request a task "
                "reconfiguration"
            )
        self._reconfigure(self._name)

    def raise_error(self, exc: BaseException) -> None:
        if not self._closed:
            self._fail(self._name, exc)


class _StoreOffsetReader(OffsetStorageReader):
    def __init__(self, store: Any, connector: str) -> None:
        self._store = store
        self._connector = connector

    def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._store.get(self._connector, partition)
        return found


class HerderSourceConnectorContext(_ContextBase, SourceConnectorContext):
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _StoreOffsetReader(self._offset_store, self._name)


class HerderSinkConnectorContext(_ContextBase, SinkConnectorContext):
    pass


def make_context(
    managed: ManagedConnector,
    reconfigure: Callable[[str], None],
    fail: Callable[[str, BaseException], None],
    offset_store: Any,
) -> _ContextBase:
    """The context for ``managed``'s ``Connector.initialize``."""
    cls = HerderSourceConnectorContext if managed.kind == "source" else HerderSinkConnectorContext
    return cls(managed.name, reconfigure, fail, offset_store)


__all__ = ["HerderSinkConnectorContext", "HerderSourceConnectorContext", "make_context"]
