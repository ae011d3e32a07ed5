"""The plumbing shared by the built-in SMTs, written once.

Kafka's SMTs that work on either side of a record (``Cast$Key``/``Cast$Value``, ...) each repeat
three hooks (``operatingSchema``, ``operatingValue``, ``newRecord``). Here an SMT derives from
:class:`KeyValueTransformation` and gets nested ``Key`` and ``Value`` subclasses generated for it;
the SMT's own code reads ``self.operating_schema(record)``/``self.operating_value(record)`` and
rebuilds with ``self.new_record(record, schema, value)``.

Also here: Kafka's ``Requirements`` checks with their messages, a small bounded schema-update cache,
``replace.null.with.default`` handling, and the validators the SMTs share. Python values stand in
for Java classes in messages: ``found: dict`` where Kafka says ``found: java.util.HashMap``.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any, ClassVar, Generic, TypeVar

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.data import Field, Schema, SchemaBuilder, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.api.records import ConnectRecord, Header, SinkRecord
from sparkcat.api.transform import Transformation

REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DOC = (
    "Whether to replace fields that have a default value and that are null to the default "
    "value. When set to true, the default value is used, otherwise null is used."
)


def define_replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """Add Kafka's ``replace.null.with.default`` key (BOOLEAN, default true) to ``config_def``."""
    return config_def.define(
        REPLACE_NULL_WITH_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation=REPLACE_NULL_WITH_DEFAULT_DOC,
    )


# -- Requirements (Kafka's transforms.util.Requirements) ---------------------------------------


def type_name(value: object) -> str:
    """The class of ``value`` as SMT error messages show it (``null`` for ``None``)."""
    if value is None:
        return "null"
    cls = type(value)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], "
            f"found: {type_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> dict[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {type_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: ConnectRecord, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataError(f"Only SinkRecord supported for [{purpose}], found: {type_name(record)}")
    return record


# -- schemas and struct values ------------------------------------------------------------------

FieldGetter = Callable[[Struct, Field], Any]


def field_getter(replace_null_with_default: bool) -> FieldGetter:
    """How an SMT reads a struct field: with the field's default for ``None`` (Kafka's
    ``replace.null.with.default=true``) or the stored value as is.

    The unbound ``Struct`` methods themselves: no extra Python frame per field on the hot path.
    """
    return Struct.get if replace_null_with_default else Struct.get_without_default


def copy_schema_basics(source: Schema, builder: SchemaBuilder) -> SchemaBuilder:
    """Copy name, version, doc and parameters of ``source`` onto ``builder`` (Kafka's
    ``SchemaUtil.copySchemaBasics``); optionality and default are left to the caller."""
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters:
        builder.parameters(dict(source.parameters))
    return builder


K = TypeVar("K")
V = TypeVar("V")

_NOTHING = object()


class SchemaUpdateCache(Generic[K, V]):
    """A bounded map from an input schema to whatever an SMT derived from it.

    Kafka uses a 16-entry LRU cache. Records of one batch almost always share one schema
    object, so the last hit is checked by identity first: no hashing of a deep schema per record.
    Beyond ``max_size`` entries the oldest is evicted (insertion order; hits are not reordered,
    which is enough for a cache whose working set is one or two schemas).

    ``last_key``/``last_value`` are the last entry used, for callers that check
    ``key is cache.last_key`` inline and so skip even the method call on the hot path.
    """

    __slots__ = ("_entries", "_max_size", "last_key", "last_value")

    def __init__(self, max_size: int = 16) -> None:
        self._max_size = max_size
        self._entries: dict[K, V] = {}
        self.last_key: object = _NOTHING
        self.last_value: Any = None

    def get(self, key: K) -> V | None:
        if key is self.last_key:
            return self.last_value  # type: ignore[no-any-return]
        value = self._entries.get(key)
        if value is not None:
            self.last_key, self.last_value = key, value
        return value

    def put(self, key: K, value: V) -> None:
        if key not in self._entries and len(self._entries) >= self._max_size:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = value
        self.last_key, self.last_value = key, value

    def get_or_build(self, key: K, build: Callable[[K], V]) -> V:
        """The cached value for ``key``, building and caching it on a miss."""
        if key is self.last_key:
            return self.last_value  # type: ignore[no-any-return]
        value = self._entries.get(key)
        if value is None:
            value = build(key)
            self.put(key, value)
        else:
            self.last_key, self.last_value = key, value
        return value

    def clear(self) -> None:
        self._entries.clear()
        self.last_key, self.last_value = _NOTHING, None

    def __len__(self) -> int:
        return len(self._entries)


# -- validators shared by SMTs (Kafka's transforms.util) ----------------------------------------


class NonEmptyListValidator:
    """Rejects a missing or empty LIST value with Kafka's ``Empty list``."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        if not value:
            raise ConfigError(name, _render(value), "Empty list")

    def __str__(self) -> str:
        return "non-empty list"


class RegexValidator:
    """Rejects a value that is not a valid (Java-style) regular expression."""

    __slots__ = ()

    def __call__(self, name: str, value: Any) -> None:
        from sparkcat.transforms._java_regex import compile_java_regex

        try:
            compile_java_regex(value)
        except (re.error, TypeError) as e:
            raise ConfigError(name, _render(value), f"Invalid regex: {e}") from e

    def __str__(self) -> str:
        return "valid regex"


def _render(value: Any) -> str:
    """A config value as Java's ``toString`` renders it in Kafka's messages."""
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    return str(value)


java_list = _render


# -- the base classes ---------------------------------------------------------------------------


class SimpleTransformation(Transformation[Any]):
    """A transformation whose ``config()`` is its class's ``CONFIG_DEF`` and whose ``close()``
    releases nothing; subclasses implement ``configure`` and ``apply``."""

    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def close(self) -> None:
        return None

    def _parse(self, configs: Mapping[str, Any]) -> dict[str, Any]:
        return self.CONFIG_DEF.parse(configs)


# The hooks below read the records' slots, not their properties: they run once per record per
# SMT, and in Python 3.11 a property read costs about seven slot reads. Records are always
# sparkcat.api.records classes (ConnectRecord declares these slots), as for runtime.pipeline.
def _key_new_record(
    record: Any, schema: Schema | None, value: Any, headers: list[Header] | Any = None
) -> Any:
    return record.new_record(
        record._topic,
        record._kafka_partition,
        schema,
        value,
        record._value_schema,
        record._value,
        record._timestamp,
        headers,
    )


def _value_new_record(
    record: Any, schema: Schema | None, value: Any, headers: list[Header] | Any = None
) -> Any:
    return record.new_record(
        record._topic,
        record._kafka_partition,
        record._key_schema,
        record._key,
        schema,
        value,
        record._timestamp,
        headers,
    )


# C-level slot readers: no Python frame at all per record.
_key_schema = attrgetter("_key_schema")
_key_value = attrgetter("_key")
_value_schema = attrgetter("_value_schema")
_value_value = attrgetter("_value")


def _filler(namespace: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def fill(ns: dict[str, Any]) -> None:
        ns.update(namespace)

    return fill


class KeyValueTransformation(SimpleTransformation):
    """Base of an SMT with ``$Key`` and ``$Value`` variants.

    Every direct subclass ``X`` gets ``X.Key`` and ``X.Value`` (qualified names ``X.Key``,
    ``X.Value``; Kafka's ``X$Key``, ``X$Value``), which bind :meth:`operating_schema`,
    :meth:`operating_value` and :meth:`new_record` to the record's key or value. ``X`` itself,
    like Kafka's abstract class, cannot be applied.
    """

    Key: ClassVar[type[KeyValueTransformation]]
    Value: ClassVar[type[KeyValueTransformation]]
    #: True in the ``Key`` variant.
    is_key: ClassVar[bool] = False

    # Replaced by static functions in the generated variants.
    def operating_schema(self, record: Any) -> Schema | None:
        """The schema of the side this variant works on."""
        raise TypeError("this transformation is abstract: use its Key or Value variant")

    def operating_value(self, record: Any) -> Any:
        """The key or value this variant works on."""
        raise TypeError("this transformation is abstract: use its Key or Value variant")

    def new_record(
        self, record: Any, schema: Schema | None, value: Any, headers: Any = None
    ) -> Any:
        """``record`` with this side replaced; ``headers=None`` keeps the record's headers."""
        raise TypeError("this transformation is abstract: use its Key or Value variant")

    def __init_subclass__(cls, variant: str | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if variant is not None:
            return
        for name, is_key in (("Key", True), ("Value", False)):
            namespace = {
                "__module__": cls.__module__,
                "__qualname__": f"{cls.__qualname__}.{name}",
                "__doc__": f"{cls.__name__} applied to the record {name.lower()}.",
                "is_key": is_key,
                "operating_schema": staticmethod(_key_schema if is_key else _value_schema),
                "operating_value": staticmethod(_key_value if is_key else _value_value),
                "new_record": staticmethod(_key_new_record if is_key else _value_new_record),
            }
            sub = types.new_class(name, (cls,), {"variant": name}, _filler(namespace))
            setattr(cls, name, sub)


__all__ = [
    "REPLACE_NULL_WITH_DEFAULT_CONFIG",
    "KeyValueTransformation",
    "NonEmptyListValidator",
    "RegexValidator",
    "SchemaUpdateCache",
    "SimpleTransformation",
    "copy_schema_basics",
    "define_replace_null_with_default",
    "field_getter",
    "java_list",
    "require_map",
    "require_map_or_null",
    "require_schema",
    "require_sink_record",
    "require_struct",
    "require_struct_or_null",
    "type_name",
]
