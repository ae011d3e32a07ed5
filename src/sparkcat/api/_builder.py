"""Fluent construction of schemas (Kafka's ``SchemaBuilder``) and :class:`SchemaAndValue`.

Private module; import the public names from :mod:`sparkcat.api.data`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

from sparkcat.api import _schema
from sparkcat.api._schema import Field, Schema, Type
from sparkcat.api._struct import Struct, validate_value
from sparkcat.api.errors import DataError, SchemaBuilderError

_UNSET: Any = object()


class SchemaBuilder:
    """Builds a :class:`Schema` step by step; :meth:`build` returns the immutable schema.

    Each metadata setter may be called once (calling it again with the same value is allowed);
    otherwise :class:`SchemaBuilderError` says ``Invalid SchemaBuilder call: <x> has already
    been set.``. A default value is validated when set (a STRUCT default again at
    :meth:`build`, against the final fields); an invalid one raises ``SchemaBuilderError``.
    A STRUCT default is a :class:`Struct` whose schema has the builder's fields (build it from
    ``builder.build()`` before calling :meth:`default_value`).
    """

    __slots__ = (
        "_default",
        "_doc",
        "_fields",
        "_key_schema",
        "_name",
        "_optional",
        "_parameters",
        "_type",
        "_value_schema",
        "_version",
    )

    INT8_SCHEMA: ClassVar[Schema] = _schema.INT8_SCHEMA
    INT16_SCHEMA: ClassVar[Schema] = _schema.INT16_SCHEMA
    INT32_SCHEMA: ClassVar[Schema] = _schema.INT32_SCHEMA
    INT64_SCHEMA: ClassVar[Schema] = _schema.INT64_SCHEMA
    FLOAT32_SCHEMA: ClassVar[Schema] = _schema.FLOAT32_SCHEMA
    FLOAT64_SCHEMA: ClassVar[Schema] = _schema.FLOAT64_SCHEMA
    BOOLEAN_SCHEMA: ClassVar[Schema] = _schema.BOOLEAN_SCHEMA
    STRING_SCHEMA: ClassVar[Schema] = _schema.STRING_SCHEMA
    BYTES_SCHEMA: ClassVar[Schema] = _schema.BYTES_SCHEMA
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_INT8_SCHEMA
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_INT16_SCHEMA
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_INT32_SCHEMA
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_INT64_SCHEMA
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_FLOAT32_SCHEMA
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_FLOAT64_SCHEMA
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_BOOLEAN_SCHEMA
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_STRING_SCHEMA
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema] = _schema.OPTIONAL_BYTES_SCHEMA

    def __init__(self, type: Type) -> None:
        if type is None:
            raise SchemaBuilderError("type cannot be null")
        self._type = type
        self._optional: bool | None = None
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is Type.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- factories -----------------------------------------------------------------------
    @staticmethod
    def type(type: Type) -> SchemaBuilder:
        return SchemaBuilder(type)

    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def boolean() -> SchemaBuilder:
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema) -> SchemaBuilder:
        if value_schema is None:
            raise SchemaBuilderError("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.ARRAY)
        builder._value_schema = value_schema
        return builder

    @staticmethod
    def map(key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        if key_schema is None:
            raise SchemaBuilderError("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderError("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.MAP)
        builder._key_schema = key_schema
        builder._value_schema = value_schema
        return builder

    # -- fluent setters ------------------------------------------------------------------
    def optional(self) -> SchemaBuilder:
        _check_can_set("optional", self._optional, True)
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        _check_can_set("optional", self._optional, False)
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        _check_can_set("default", self._default, value)
        self._check_default(self._build(None), value)
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        _check_can_set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        _check_can_set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        _check_can_set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, name: str, value: str) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[name] = value
        return self

    def parameters(self, parameters: Mapping[str, str]) -> SchemaBuilder:
        # An empty mapping adds nothing, so a schema never has empty (rather than no) parameters.
        if not parameters:
            return self
        if self._parameters is None:
            self._parameters = {}
        self._parameters.update(parameters)
        return self

    def field(self, name: str, schema: Schema) -> SchemaBuilder:
        if self._fields is None:
            raise SchemaBuilderError(f"Cannot create fields on type {self._type}")
        if not name:
            raise SchemaBuilderError("fieldName cannot be null.")
        if schema is None:
            raise SchemaBuilderError(f"fieldSchema for field {name} cannot be null.")
        if name in self._fields:
            raise SchemaBuilderError(
                f"Cannot create field because of field name duplication {name}"
            )
        self._fields[name] = Field(name, len(self._fields), schema)
        return self

    # -- result --------------------------------------------------------------------------
    def build(self) -> Schema:
        """The immutable schema described so far."""
        if self._type is Type.STRUCT and self._default is not None:
            self._check_default(self._build(None), self._default)
        return self._build(self._default)

    def schema(self) -> Schema:
        """Same as :meth:`build` (Kafka's ``SchemaBuilder.schema()``)."""
        return self.build()

    def _build(self, default: Any) -> Schema:
        return Schema(
            self._type,
            bool(self._optional),
            default,
            self._name,
            self._version,
            self._doc,
            self._parameters,
            None if self._fields is None else self._fields.values(),
            self._key_schema,
            self._value_schema,
        )

    @staticmethod
    def _check_default(schema: Schema, value: Any) -> None:
        try:
            if schema.type is Type.STRUCT and isinstance(value, Struct):
                # The default cannot carry the very schema it is the default of: compare all
                # but default and optionality.
                other = value.schema
                if (other.fields, other.name, other.version, other.doc, other.parameters) != (
                    schema.fields,
                    schema.name,
                    schema.version,
                    schema.doc,
                    schema.parameters,
                ):
                    raise DataError("Struct schemas do not match.")
                value.validate()
            else:
                validate_value(schema, value)
        except DataError as e:
            raise SchemaBuilderError(f"Invalid default value: {e}") from e

    def __repr__(self) -> str:
        return f"SchemaBuilder{{{self._type}}}"


def _check_can_set(what: str, current: Any, value: Any) -> None:
    if current is not None and current != value:
        raise SchemaBuilderError(f"Invalid SchemaBuilder call: {what} has already been set.")


class _SchemaAndValueFields(NamedTuple):
    schema: Schema | None
    value: Any


class SchemaAndValue(_SchemaAndValueFields):
    """A value with its schema (either may be ``None``); ``SchemaAndValue.NULL`` has neither."""

    __slots__ = ()

    NULL: ClassVar[SchemaAndValue]

    def __repr__(self) -> str:
        return f"SchemaAndValue{{schema={self.schema!r}, value={self.value!r}}}"


SchemaAndValue.NULL = SchemaAndValue(None, None)
