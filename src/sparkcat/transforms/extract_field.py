"""ExtractField: replace the key/value with one of its fields (Kafka's ``ExtractField``), with
KIP-821 nested paths when ``field.syntax.version=V2``."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any

from sparkcat.api.config import CaseInsensitiveValidString, ConfigDef, ConfigType, Importance
from sparkcat.api.data import Field, Schema, Struct
from sparkcat.api.errors import ConfigError, DataError
from sparkcat.transforms._base import (
    REPLACE_NULL_WITH_DEFAULT_CONFIG,
    KeyValueTransformation,
    define_replace_null_with_default,
    require_map_or_null,
    require_struct_or_null,
)

FIELD_CONFIG = "field"
FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
FIELD_SYNTAX_VERSION_DOC = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths "
    "are limited to access the elements at the root level of the struct or map. If set to `V2`, "
    "the syntax will support accessing nested elements. To access nested elements, dotted "
    "notation is used. If dots are already included in the field name, then backtick pairs can "
    "be used to wrap field names containing dots. E.g. to access the subfield `baz` from a "
    'field named "foo.bar" in a struct/map the following format can be used to access its '
    'elements: "`foo.bar`.baz".'
)
OVERVIEW_DOC = (
    "Extract the specified field from a Struct when schema present, or a Map in the case of "
    "schemaless data. Any null values are passed through unmodified.<p/>Use the concrete "
    "transformation type designed for the record key "
    "(<code>org.apache.kafka.connect.transforms.ExtractField$Key</code>) or value "
    "(<code>org.apache.kafka.connect.transforms.ExtractField$Value</code>)."
)
_PURPOSE = "field extraction"
_NESTED = "nested field access"


class FieldSyntaxVersion(Enum):
    """How field paths are read: ``V1`` one top-level name, ``V2`` dotted nested paths."""

    V1 = "V1"
    V2 = "V2"


CONFIG_DEF = ConfigDef().define(
    FIELD_CONFIG,
    ConfigType.STRING,
    importance=Importance.MEDIUM,
    documentation="Field name to extract.",
)
define_replace_null_with_default(CONFIG_DEF)
CONFIG_DEF.define(
    FIELD_SYNTAX_VERSION_CONFIG,
    ConfigType.STRING,
    FieldSyntaxVersion.V1.value,
    validator=CaseInsensitiveValidString.in_("V1", "V2"),
    importance=Importance.HIGH,
    documentation=FIELD_SYNTAX_VERSION_DOC,
)


def _incomplete_backtick(path: str, at: int) -> ConfigError:
    return ConfigError(
        f"Incomplete backtick pair in path: [{path}], consider adding a backslash before "
        f"backtick at position {at} to escape it"
    )


def _steps_v2(path: str) -> list[str]:
    steps: list[str] = []
    i = 0
    while 0 <= i < len(path):
        if path[i] != "`":
            dot = path.find(".", i)
            steps.append(path[i:dot] if dot >= 0 else path[i:])
            i = dot + 1 if dot >= 0 else -1
            continue
        opened, i = i, i + 1
        start, name = i, []
        while True:
            i = path.find("`", i)
            if i == -1:
                raise _incomplete_backtick(path, opened)
            escaped = path[i - 1] == "\\"
            if i >= len(path) - 1:
                if escaped:
                    raise _incomplete_backtick(path, opened)
                name.append(path[start:i])
                steps.append("".join(name))
                i += 1
                break
            if path[i + 1] != ".":
                i += 1
                continue
            if escaped:
                name.append(path[start : i - 1] + "`")
                i += 1
                start = i
                continue
            name.append(path[start:i])
            steps.append("".join(name))
            i += 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


class SingleFieldPath:
    """A path of one or more field names into a Struct or Map (Kafka's ``SingleFieldPath``)."""

    __slots__ = ("steps", "version")

    def __init__(self, path: str, version: FieldSyntaxVersion) -> None:
        self.version = version
        self.steps: tuple[str, ...] = (
            (path,) if version is FieldSyntaxVersion.V1 else tuple(_steps_v2(path))
        )

    def field_from(self, schema: Schema | None) -> Field | None:
        """The field at this path in ``schema``, or ``None``."""
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            field = current.field(step)
            if field is None:
                return None
            current = field.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        """The value at this path, or ``None`` when a step is missing or ``None``."""
        if struct is None:
            return None
        current: Struct | None = struct
        for step in self.steps[:-1]:
            assert current is not None
            if current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), _NESTED)
            if current is None:
                return None
        assert current is not None
        last = self.steps[-1]
        if current.schema.field(last) is None:
            return None
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, mapping: Mapping[str, Any] | None) -> Any:
        """The value at this path in nested dicts, or ``None``."""
        current = mapping
        for step in self.steps[:-1]:
            if current is None:
                return None
            current = require_map_or_null(current.get(step), _NESTED)
        return None if current is None else current.get(self.steps[-1])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleFieldPath) and self.steps == other.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"SingleFieldPath{{version={self.version.value}, path={'.'.join(self.steps)}}}"


class ExtractField(KeyValueTransformation):
    """Replaces the key/value with the field at ``field``; a ``None`` key/value stays ``None``
    (with the field's schema when there is one)."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._original_path: str = parsed[FIELD_CONFIG]
        version = FieldSyntaxVersion(parsed[FIELD_SYNTAX_VERSION_CONFIG].upper())
        self._path = SingleFieldPath(self._original_path, version)
        self._with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def apply(self, record: Any) -> Any:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            mapping = require_map_or_null(value, _PURPOSE)
            return self.new_record(record, None, self._path.value_from_map(mapping))
        struct = require_struct_or_null(value, _PURPOSE)
        field = self._path.field_from(schema)
        if field is None:
            raise DataError(f"Unknown field: {self._original_path}")
        return self.new_record(
            record, field.schema, self._path.value_from_struct(struct, self._with_default)
        )


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "ExtractField", "FieldSyntaxVersion", "SingleFieldPath"]
