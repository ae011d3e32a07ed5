"""Connect schema types: :class:`Type`, :class:`Field` and :class:`Schema` (Kafka's ConnectSchema).

Private module; import the public names from :mod:`sparkcat.api.data`.
"""

from __future__ import annotations

import datetime
import decimal
import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, NoReturn, TypeAlias

from sparkcat.api.errors import DataError

DECIMAL_LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
TIME_LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"

# Schema has an attribute named ``type``; annotations inside it use this alias.
_PyClass: TypeAlias = type


class Type(enum.Enum):
    """The type of a Connect schema; ``value`` is Kafka's lowercase name, ``str()`` the constant."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        """True for every type except ARRAY, MAP and STRUCT."""
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)

    def __str__(self) -> str:
        # Kafka prints the enum constant (INT32) in its messages.
        return self.name


# The Python classes a value of each type may have (isinstance). STRUCT is checked by the Struct
# module, which owns the Struct class.
_PY_TYPES: dict[Type, tuple[type, ...]] = {
    Type.INT8: (int,),
    Type.INT16: (int,),
    Type.INT32: (int,),
    Type.INT64: (int,),
    Type.FLOAT32: (float, int),
    Type.FLOAT64: (float, int),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.ARRAY: (list,),
    Type.MAP: (dict,),
    Type.STRUCT: (),
}
# Logical types are recognised by schema name alone, as in Kafka.
_LOGICAL_PY_TYPES: dict[str, tuple[type, ...]] = {
    DECIMAL_LOGICAL_NAME: (decimal.Decimal,),
    DATE_LOGICAL_NAME: (datetime.date,),
    TIME_LOGICAL_NAME: (datetime.time,),
    TIMESTAMP_LOGICAL_NAME: (datetime.datetime,),
}
# Subclasses that isinstance() would let through but that are a different kind of value.
_REJECTED: dict[Type, tuple[type, ...]] = {t: (bool,) for t in _PY_TYPES if t.value[0] in "if"}
_LOGICAL_REJECTED: dict[str, tuple[type, ...]] = {DATE_LOGICAL_NAME: (datetime.datetime,)}
_RANGES: dict[Type, tuple[int, int]] = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_NESTED = (Type.ARRAY, Type.MAP, Type.STRUCT)


def deep_hash(value: Any) -> int:
    """Hash a Connect value, including the unhashable ones (``list``, ``dict``, ``bytearray``)."""
    if isinstance(value, list):
        return hash(tuple(deep_hash(v) for v in value))
    if isinstance(value, dict):
        return hash(frozenset((deep_hash(k), deep_hash(v)) for k, v in value.items()))
    if isinstance(value, bytearray | memoryview):
        return hash(bytes(value))
    return hash(value)


class Field:
    """A named, indexed member of a STRUCT schema. Immutable."""

    __slots__ = ("index", "name", "schema")

    name: str
    index: int
    schema: Schema

    def __init__(self, name: str, index: int, schema: Schema) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "schema", schema)

    def __setattr__(self, key: str, value: Any) -> NoReturn:
        raise AttributeError(f"Field is immutable: cannot set {key}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Field, (self.name, self.index, self.schema))

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Field):
            return NotImplemented
        return self.index == other.index and self.name == other.name and self.schema == other.schema

    def __hash__(self) -> int:
        return hash((self.name, self.index, self.schema))

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema!r}}}"


class Schema:
    """An immutable, hashable Connect schema (Kafka's ``ConnectSchema``).

    Two schemas are equal when type, optionality, default value, name, version, doc,
    parameters, fields and key/value schemas are equal. Build schemas with
    :class:`~sparkcat.api.data.SchemaBuilder`; the constructor does not validate the default.
    ``fields``/``field()`` raise :class:`DataError` on a non-STRUCT schema, ``key_schema`` on a
    non-MAP schema and ``value_schema`` on a schema that is neither ARRAY nor MAP.
    """

    __slots__ = (
        "_accepted",
        "_fast",
        "_fields",
        "_fields_by_name",
        "_hash",
        "_hi",
        "_key_schema",
        "_lo",
        "_nested",
        "_ranged",
        "_rejected",
        "_value_schema",
        "default_value",
        "doc",
        "name",
        "optional",
        "parameters",
        "type",
        "version",
    )

    type: Type
    optional: bool
    default_value: Any
    name: str | None
    version: int | None
    doc: str | None
    parameters: Mapping[str, str] | None
    _fields: tuple[Field, ...] | None
    _fields_by_name: dict[str, Field]
    _key_schema: Schema | None
    _value_schema: Schema | None
    _hash: int | None
    # Validation plan, precomputed once so that Struct.put stays cheap:
    _accepted: tuple[_PyClass, ...]  # isinstance() check
    _rejected: tuple[_PyClass, ...]  # subclasses excluded from _accepted (bool for numbers)
    _fast: frozenset[_PyClass]  # exact classes that need no further check at all
    _ranged: bool
    _lo: int
    _hi: int
    _nested: bool

    INT8_SCHEMA: ClassVar[Schema]
    INT16_SCHEMA: ClassVar[Schema]
    INT32_SCHEMA: ClassVar[Schema]
    INT64_SCHEMA: ClassVar[Schema]
    FLOAT32_SCHEMA: ClassVar[Schema]
    FLOAT64_SCHEMA: ClassVar[Schema]
    BOOLEAN_SCHEMA: ClassVar[Schema]
    STRING_SCHEMA: ClassVar[Schema]
    BYTES_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT8_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT16_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_INT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT32_SCHEMA: ClassVar[Schema]
    OPTIONAL_FLOAT64_SCHEMA: ClassVar[Schema]
    OPTIONAL_BOOLEAN_SCHEMA: ClassVar[Schema]
    OPTIONAL_STRING_SCHEMA: ClassVar[Schema]
    OPTIONAL_BYTES_SCHEMA: ClassVar[Schema]

    def __init__(
        self,
        type: Type,
        optional: bool = False,
        default_value: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Iterable[Field] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        put = object.__setattr__
        put(self, "type", type)
        put(self, "optional", optional)
        put(self, "default_value", default_value)
        put(self, "name", name)
        put(self, "version", version)
        put(self, "doc", doc)
        put(self, "parameters", None if parameters is None else MappingProxyType(dict(parameters)))
        if type is Type.STRUCT:
            field_tuple = tuple(fields) if fields is not None else ()
            put(self, "_fields", field_tuple)
            put(self, "_fields_by_name", {f.name: f for f in field_tuple})
        else:
            put(self, "_fields", None)
            put(self, "_fields_by_name", {})
        put(self, "_key_schema", key_schema)
        put(self, "_value_schema", value_schema)
        put(self, "_hash", None)
        logical = _LOGICAL_PY_TYPES.get(name) if name is not None else None
        accepted = logical if logical is not None else _PY_TYPES[type]
        if logical is not None and name is not None:
            rejected = _LOGICAL_REJECTED.get(name, ())
        else:
            rejected = _REJECTED.get(type, ())
        bounds = _RANGES.get(type) if logical is None else None
        nested = type in _NESTED and logical is None
        put(self, "_accepted", accepted)
        put(self, "_rejected", rejected)
        put(self, "_ranged", bounds is not None)
        put(self, "_lo", bounds[0] if bounds else 0)
        put(self, "_hi", bounds[1] if bounds else -1)
        put(self, "_nested", nested)
        fast = frozenset() if bounds or nested else frozenset(accepted)
        put(self, "_fast", fast)

    def __setattr__(self, key: str, value: Any) -> NoReturn:
        raise AttributeError(f"Schema is immutable: cannot set {key}")

    def __delattr__(self, key: str) -> NoReturn:
        raise AttributeError(f"Schema is immutable: cannot delete {key}")

    def __reduce__(self) -> tuple[Any, ...]:
        # The cached hash must not travel: str hashes differ between processes.
        params = None if self.parameters is None else dict(self.parameters)
        args = (
            self.type,
            self.optional,
            self.default_value,
            self.name,
            self.version,
            self.doc,
            params,
            self._fields,
            self._key_schema,
            self._value_schema,
        )
        return (Schema, args)

    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields of a STRUCT schema, in order."""
        if self._fields is None:
            raise DataError("Cannot list fields on non-struct type")
        return self._fields

    def field(self, name: str) -> Field | None:
        """The field called ``name`` of a STRUCT schema, or ``None``."""
        if self._fields is None:
            raise DataError("Cannot look up fields on non-struct type")
        return self._fields_by_name.get(name)

    @property
    def key_schema(self) -> Schema | None:
        """The key schema of a MAP schema."""
        if self.type is not Type.MAP:
            raise DataError("Cannot look up key schema on non-map type")
        return self._key_schema

    @property
    def value_schema(self) -> Schema | None:
        """The value schema of a MAP schema, or the element schema of an ARRAY schema."""
        if self.type is not Type.MAP and self.type is not Type.ARRAY:
            raise DataError("Cannot look up value schema on non-array and non-map type")
        return self._value_schema

    @staticmethod
    def validate_value(schema: Schema, value: Any, field_name: str | None = None) -> None:
        """Raise :class:`DataError` unless ``value`` is valid for ``schema`` (deeply).

        ``field_name`` names the field in the message (``for field: "name"``).
        """
        # Imported here: the Struct module needs Schema, and validation needs Struct.
        from sparkcat.api._struct import validate_value

        validate_value(schema, value, field_name)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        if self._hash is not None and other._hash is not None and self._hash != other._hash:
            return False
        return (
            self.type is other.type
            and self.optional == other.optional
            and self.version == other.version
            and self.name == other.name
            and self.doc == other.doc
            and self._fields == other._fields
            and self._key_schema == other._key_schema
            and self._value_schema == other._value_schema
            and self.parameters == other.parameters
            and _values_equal(self.default_value, other.default_value)
        )

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            params = None if self.parameters is None else frozenset(self.parameters.items())
            h = hash(
                (
                    self.type,
                    self.optional,
                    deep_hash(self.default_value),
                    self._fields,
                    self._key_schema,
                    self._value_schema,
                    self.name,
                    self.version,
                    self.doc,
                    params,
                )
            )
            object.__setattr__(self, "_hash", h)
        return h

    def __repr__(self) -> str:
        if self.name is not None:
            return f"Schema{{{self.name}:{self.type}}}"
        return f"Schema{{{self.type}}}"


def _values_equal(a: Any, b: Any) -> bool:
    # Defaults of different Python classes that compare equal (True == 1) are different values.
    if a is b:
        return True
    return type(a) is type(b) and bool(a == b)


def _constant(type_: Type, optional: bool) -> Schema:
    return Schema(type_, optional)


INT8_SCHEMA = _constant(Type.INT8, False)
INT16_SCHEMA = _constant(Type.INT16, False)
INT32_SCHEMA = _constant(Type.INT32, False)
INT64_SCHEMA = _constant(Type.INT64, False)
FLOAT32_SCHEMA = _constant(Type.FLOAT32, False)
FLOAT64_SCHEMA = _constant(Type.FLOAT64, False)
BOOLEAN_SCHEMA = _constant(Type.BOOLEAN, False)
STRING_SCHEMA = _constant(Type.STRING, False)
BYTES_SCHEMA = _constant(Type.BYTES, False)
OPTIONAL_INT8_SCHEMA = _constant(Type.INT8, True)
OPTIONAL_INT16_SCHEMA = _constant(Type.INT16, True)
OPTIONAL_INT32_SCHEMA = _constant(Type.INT32, True)
OPTIONAL_INT64_SCHEMA = _constant(Type.INT64, True)
OPTIONAL_FLOAT32_SCHEMA = _constant(Type.FLOAT32, True)
OPTIONAL_FLOAT64_SCHEMA = _constant(Type.FLOAT64, True)
OPTIONAL_BOOLEAN_SCHEMA = _constant(Type.BOOLEAN, True)
OPTIONAL_STRING_SCHEMA = _constant(Type.STRING, True)
OPTIONAL_BYTES_SCHEMA = _constant(Type.BYTES, True)

CONSTANT_SCHEMAS: dict[str, Schema] = {
    "INT8_SCHEMA": INT8_SCHEMA,
    "INT16_SCHEMA": INT16_SCHEMA,
    "INT32_SCHEMA": INT32_SCHEMA,
    "INT64_SCHEMA": INT64_SCHEMA,
    "FLOAT32_SCHEMA": FLOAT32_SCHEMA,
    "FLOAT64_SCHEMA": FLOAT64_SCHEMA,
    "BOOLEAN_SCHEMA": BOOLEAN_SCHEMA,
    "STRING_SCHEMA": STRING_SCHEMA,
    "BYTES_SCHEMA": BYTES_SCHEMA,
    "OPTIONAL_INT8_SCHEMA": OPTIONAL_INT8_SCHEMA,
    "OPTIONAL_INT16_SCHEMA": OPTIONAL_INT16_SCHEMA,
    "OPTIONAL_INT32_SCHEMA": OPTIONAL_INT32_SCHEMA,
    "OPTIONAL_INT64_SCHEMA": OPTIONAL_INT64_SCHEMA,
    "OPTIONAL_FLOAT32_SCHEMA": OPTIONAL_FLOAT32_SCHEMA,
    "OPTIONAL_FLOAT64_SCHEMA": OPTIONAL_FLOAT64_SCHEMA,
    "OPTIONAL_BOOLEAN_SCHEMA": OPTIONAL_BOOLEAN_SCHEMA,
    "OPTIONAL_STRING_SCHEMA": OPTIONAL_STRING_SCHEMA,
    "OPTIONAL_BYTES_SCHEMA": OPTIONAL_BYTES_SCHEMA,
}
for _attr, _schema in CONSTANT_SCHEMAS.items():
    setattr(Schema, _attr, _schema)
del _attr, _schema
