"""Offsets in the herder: the offsets REST API (KIP-875), ``initial_offsets`` on create
(KIP-995).

Source offsets live in the worker's offset store (``get_all``/``put_batch``/``flush``); sink
offsets in consumer group ``connect-<name>`` (or ``consumer.override.group.id``), reached
through an admin client built from the worker config (:mod:`sparkcat.kafka.admin`).

Altering (``PATCH``) or resetting (``DELETE``) needs the connector to be STOPPED. The
connector's ``alter_offsets`` is called on a fresh, unstarted instance first (it may reject
the change); its answer picks Kafka's success message. confluent-kafka has no
``deleteConsumerGroupOffsets``: resetting *some* sink partitions re-creates the (empty) group
without them -- the group has no members while the connector is stopped, so this is safe.

``initial_offsets`` (KIP-995) runs, inside ``create_connector`` and after the config was
validated: 2. validate the offsets with the PATCH rules, 3. wipe the connector's existing
offsets, 4. write the initial ones (``alter_offsets`` first), 5. the herder writes the config
-- if that fails, :meth:`HerderOffsets.initial_offsets_cleanup` wipes them again. Any
failure names its step.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from sparkcat.api.errors import ConnectError, NotFoundError
from sparkcat.runtime.herder.core import HerderCore
from sparkcat.runtime.rest.errors import BadRequestError, ConnectRestError
from sparkcat.runtime.tasks.offsets_format import (
    SinkOffsets,
    SourcePairs,
    initial_offsets_status,
    modified_message,
    offset_entries,
    sink_offsets,
    sink_offsets_json,
    source_pairs,
)

if TYPE_CHECKING:
    from sparkcat.api.connector import Connector
    from sparkcat.runtime.herder.state import ManagedConnector
    from sparkcat.runtime.herder.validation import Validation

log = logging.getLogger(__name__)

_ZOMBIE = (
    "Failed to {verb} consumer group offsets for connector {name} either because its tasks "
    "haven't stopped completely yet or the connector was resumed before the request to {verb} "
    "its offsets could be successfully completed. If the connector is in a stopped state, this "
    "operation can be safely retried. If it doesn't eventually succeed, the Connect cluster may "
    "need to be restarted to get rid of the zombie sink tasks."
)


def sink_group(name: str, config: Mapping[str, str]) -> str:
    return config.get("consumer.override.group.id") or f"connect-{name}"


def _step_error(exc: Exception, message: str) -> ConnectError:
    """``exc`` re-raised with ``message`` in front, keeping its HTTP status."""
    text = f"{message}: {exc}"
    if isinstance(exc, BadRequestError):
        return BadRequestError(text)
    if isinstance(exc, ConnectRestError):
        return ConnectRestError(text, exc.status)
    if isinstance(exc, NotFoundError):
        return NotFoundError(text)
    return ConnectError(text)


class HerderOffsets(HerderCore):
    """Offset operations of :class:`~sparkcat.runtime.herder.base.AbstractHerder`."""

    # -- GET / PATCH / DELETE /connectors/{name}/offsets -----------------------------------
    def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets": [{"partition": ..., "offset": ...}, ...]}`` (any target state)."""
        kind, config = self._offsets_subject(name)
        if kind == "source":
            try:
                with self._source_store(config) as store:
                    pairs = store.get_all(name)
            except ConnectError:
                raise
            except Exception as exc:
                raise ConnectError(
                    f"Failed to retrieve offsets for source connector {name}"
                ) from exc
            return {"offsets": [{"partition": p, "offset": o} for p, o in pairs if o is not None]}
        from sparkcat.kafka.admin import committed_offsets

        try:
            with self.admin_client(config) as admin:
                offsets = committed_offsets(admin, sink_group(name, config))
        except Exception as exc:
            raise ConnectError(
                f"Failed to retrieve consumer group offsets for sink connector {name}: {exc}"
            ) from exc
        return sink_offsets_json(offsets)

    @contextlib.contextmanager
    def _source_store(self, config: Mapping[str, str]) -> Iterator[Any]:
        """The offset store of a source connector: the worker's, or, for a connector with an
        ``offsets.storage.topic`` of its own on a distributed worker, that topic read to its
        end with the worker's as fallback (Kafka's ``ConnectorOffsetBackingStore``)."""
        from sparkcat.runtime.stores.connector_offsets import for_connector

        store = for_connector(self.offset_store, self.worker_config.originals(), config)
        try:
            yield store
        finally:
            if store is not self.offset_store:
                store.close()

    def _offsets_subject(self, name: str) -> tuple[str, dict[str, str]]:
        """``(kind, config)`` of connector ``name`` for a GET of its offsets."""
        with self._lock:
            managed = self._connectors.get(name)
            if managed is None:
                raise NotFoundError(f"Connector {name} not found")
            return managed.kind, dict(managed.config)

    def alter_connector_offsets(self, name: str, body: Any) -> str:
        """``PATCH .../offsets``: Kafka's success message, or its errors (§1.6)."""
        entries = offset_entries(body)
        with self._lock:
            managed = self._stopped(name)
            connector = managed.cls()
            if managed.kind == "source":
                handled = self._modify_source(
                    name, connector, managed.config, source_pairs(entries)
                )
            else:
                handled = self._modify_sink(name, connector, managed.config, sink_offsets(entries))
        return modified_message(handled, "altered")

    def reset_connector_offsets(self, name: str) -> str:
        """``DELETE .../offsets``: reset every offset of a STOPPED connector."""
        with self._lock:
            managed = self._stopped(name)
            connector = managed.cls()
            if managed.kind == "source":
                handled = self._modify_source(name, connector, managed.config, None)
            else:
                handled = self._modify_sink(name, connector, managed.config, None)
        return modified_message(handled, "reset")

    def _stopped(self, name: str) -> ManagedConnector:
        from sparkcat.runtime.herder.state import TargetState

        managed = self._connectors.get(name)
        if managed is None:
            raise NotFoundError(f"Connector {name} not found")
        if managed.target is not TargetState.STOPPED or managed.task_configs:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. "
                "This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return managed

    def _modify_source(
        self, name: str, connector: Connector, config: dict[str, str], pairs: SourcePairs | None
    ) -> bool:
        """Alter (``pairs``) or reset (``None``) source offsets; ``alter_offsets``'s answer."""
        from sparkcat.runtime.tasks.exactly_once.offsets_writer import write_offsets

        try:
            with self._source_store(config) as store:
                if pairs is None:
                    pairs = [(p, None) for p, _ in store.get_all(name)]
                handled = _call_alter_offsets(name, connector, config, pairs)
                write_offsets(store, self.worker_config.originals(), config, name, pairs)
        except ConnectError:
            raise
        except Exception as exc:
            raise ConnectError(f"Failed to modify offsets for source connector {name}") from exc
        return handled

    def _modify_sink(
        self, name: str, connector: Connector, config: dict[str, str], offsets: SinkOffsets | None
    ) -> bool:
        """Alter (``offsets``) or reset (``None``) the group's offsets; ``alter_offsets``'s
        answer."""
        from sparkcat.kafka.admin import committed_offsets, delete_group

        group = sink_group(name, config)
        verb = "reset" if offsets is None else "alter"
        with self.admin_client(config) as admin:
            if offsets is None:
                try:
                    offsets = dict.fromkeys(committed_offsets(admin, group))
                except Exception as exc:
                    raise ConnectError(
                        "Failed to list offsets prior to resetting offsets for sink connector "
                        f"{name}: {exc}"
                    ) from exc
            handled = _call_alter_offsets(name, connector, config, offsets)
            try:
                kept: dict[tuple[str, int], int] = {}
                if verb == "reset" or None in offsets.values():
                    if verb == "alter":
                        kept = {tp: o for tp, o in committed_offsets(admin, group).items()}
                    delete_group(admin, group)
                for tp, offset in offsets.items():
                    if offset is None:
                        kept.pop(tp, None)
                    else:
                        kept[tp] = offset
                self._commit_group(config, group, kept)
            except Exception as exc:
                text = str(exc).lower()
                if "not empty" in text or "unknown member" in text or "subscribed" in text:
                    raise ConnectError(_ZOMBIE.format(verb=verb, name=name)) from exc
                what = "sink connector " if verb == "reset" else ""
                raise ConnectError(
                    f"Failed to {verb} consumer group offsets for {what}connector {name}: {exc}"
                ) from exc
        return handled

    def _commit_group(self, config: dict[str, str], group: str, offsets: Any) -> None:
        from sparkcat.kafka.admin import alter_group_offsets

        # tansu fails the first OffsetCommit after a DeleteGroups of the same group with a
        # dropped connection ("Broker transport failure"); a new attempt succeeds.
        for attempt in range(3):
            with self.admin_client(config) as admin:
                try:
                    alter_group_offsets(admin, group, offsets)
                    return
                except ConnectError as exc:
                    if attempt == 2 or "transport failure" not in str(exc).lower():
                        raise

    def admin_client(self, config: Mapping[str, str]) -> Any:
        """A context manager yielding a confluent-kafka ``AdminClient`` for ``config``."""
        from confluent_kafka.admin import AdminClient

        from sparkcat.kafka.clients import admin_config

        @contextlib.contextmanager
        def client() -> Any:
            conf: dict[str, str | int | float | bool] = {
                **admin_config(self.worker_config.strings(), config)
            }
            yield AdminClient(conf)

        return client()

    # -- KIP-995 ------------------------------------------------------------------------------
    def write_initial_offsets(
        self,
        name: str,
        validation: Validation,
        config: dict[str, str],
        initial_offsets: Any,
    ) -> str:
        """Steps 2-4 of KIP-995 for a connector about to be created; its ``offsets_status``."""
        source = validation.kind == "source"
        prefix = f"Failed to create connector {name}"
        try:
            entries = offset_entries(initial_offsets)
            parsed: Any = source_pairs(entries) if source else sink_offsets(entries)
        except ConnectError as exc:
            raise _step_error(exc, f"{prefix}: its initial offsets are invalid") from exc
        try:
            self._wipe_offsets(name, source, config)
        except ConnectError as exc:
            raise _step_error(exc, f"{prefix}: its existing offsets could not be wiped") from exc
        connector = validation.connector_class()
        try:
            if source:
                handled = self._modify_source(name, connector, config, parsed)
            else:
                handled = self._modify_sink(name, connector, config, parsed)
        except ConnectError as exc:
            raise _step_error(
                exc, f"{prefix}: its initial offsets could not be written (its previous offsets "
                "were wiped)",
            ) from exc  # fmt: skip
        return initial_offsets_status(handled)

    @contextlib.contextmanager
    def initial_offsets_cleanup(
        self, name: str, kind: str, config: dict[str, str], offsets_status: str | None
    ) -> Iterator[None]:
        """Step 5 of KIP-995: if writing the config fails, wipe the initial offsets."""
        try:
            yield
        except Exception as exc:
            if offsets_status is None:
                raise
            self._connectors.pop(name, None)
            try:
                self._wipe_offsets(name, kind == "source", config)
            except Exception:
                log.exception("Could not wipe the initial offsets of connector %s", name)
            raise _step_error(
                exc, f"Failed to create connector {name}: its config could not be written (its "
                "initial offsets were wiped)",
            ) from exc  # fmt: skip

    def _wipe_offsets(self, name: str, source: bool, config: dict[str, str]) -> None:
        if source:
            from sparkcat.runtime.tasks.exactly_once.offsets_writer import write_offsets

            with self._source_store(config) as store:
                stored = store.get_all(name)
                if stored:
                    tombstones = [(p, None) for p, _ in stored]
                    write_offsets(store, self.worker_config.originals(), config, name, tombstones)
            return
        from sparkcat.kafka.admin import delete_group

        with self.admin_client(config) as admin:
            delete_group(admin, sink_group(name, config))


def _call_alter_offsets(
    name: str, connector: Connector, config: dict[str, str], offsets: Any
) -> bool:
    try:
        return bool(connector.alter_offsets(config, offsets))  # type: ignore[attr-defined]
    except NotImplementedError as exc:
        raise ConnectError(
            f"Failed to modify offsets for connector {name} because it doesn't support "
            "external modification of offsets"
        ) from exc


__all__ = ["HerderOffsets", "sink_group"]
