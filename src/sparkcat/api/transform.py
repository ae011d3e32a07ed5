"""Single message transformations (SMTs) and the predicates that gate them.

Counterparts of Kafka's ``org.apache.kafka.connect.transforms.Transformation`` and
``transforms.predicates.Predicate``. Instances are created and configured on the executor that
runs a task (one per alias per task), used from one thread, never pickled. ``configs`` are the
plugin's own keys (``transforms.<alias>.`` / ``predicates.<alias>.`` prefix stripped).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sparkcat.api.records import ConnectRecord

if TYPE_CHECKING:
    from collections.abc import Mapping

    from sparkcat.api.config import ConfigDef

R = TypeVar("R", bound=ConnectRecord)


class Transformation(ABC, Generic[R]):
    """Changes or drops one record at a time; ``R`` is the record class it handles.

    Source connectors: applied to each polled record before the converters. Sink connectors:
    applied after the converters, before ``put``. ``apply`` must not mutate its argument:
    derive the result with :meth:`~sparkcat.api.records.ConnectRecord.new_record`.
    """

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once after instantiation; raise :class:`~sparkcat.api.errors.ConfigError`
        for bad configs."""

    @abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record, or ``None`` to drop it."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The transformation's config keys."""

    def close(self) -> None:
        """Release resources; called when the task's lease ends. Default: nothing."""


class Predicate(ABC, Generic[R]):
    """A condition on a record that decides whether a transformation applies
    (``transforms.<alias>.predicate`` and ``.negate``)."""

    @abstractmethod
    def configure(self, configs: Mapping[str, Any]) -> None:
        """Called once after instantiation."""

    @abstractmethod
    def test(self, record: R) -> bool:
        """Whether ``record`` matches."""

    @abstractmethod
    def config(self) -> ConfigDef:
        """The predicate's config keys."""

    def close(self) -> None:
        """Release resources; called when the task's lease ends. Default: nothing."""


__all__ = ["Predicate", "Transformation"]
