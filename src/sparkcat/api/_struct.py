"""Connect :class:`Struct` values and schema/value validation (Kafka's ``Struct`` and
``ConnectSchema.validateValue``).

Private module; import the public names from :mod:`sparkcat.api.data`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NoReturn

from sparkcat.api._schema import Field, Schema, Type, deep_hash
from sparkcat.api.errors import DataError


def validate_value(schema: Schema, value: Any, field_name: str | None = None) -> None:
    """Raise :class:`DataError` unless ``value`` is valid for ``schema``, recursively."""
    _check(schema, value, "value" if field_name is None else f'field: "{field_name}"')


def _check(schema: Schema, value: Any, location: str) -> None:
    if value is None:
        if not schema.optional:
            raise DataError(
                f"Invalid value: null used for required {location}, schema type: {schema.type}"
            )
        return
    if value.__class__ in schema._fast:
        return
    if schema.type is Type.STRUCT and schema._accepted == ():
        if not isinstance(value, Struct):
            _invalid_class(schema, value, location)
        if value.schema is not schema and value.schema != schema:
            raise DataError("Struct schemas do not match.")
        value.validate()
        return
    if not isinstance(value, schema._accepted) or isinstance(value, schema._rejected):
        _invalid_class(schema, value, location)
    number: Any = value  # an int when the schema is ranged
    if schema._ranged and not schema._lo <= number <= schema._hi:
        named = f' "{schema.name}"' if schema.name is not None else ""
        raise DataError(
            f"Invalid value for schema{named} with type {schema.type}: {value} is out of range "
            f"[{schema._lo}, {schema._hi}] for {location}"
        )
    if schema._nested:
        _check_nested(schema, value, location)


def _check_nested(schema: Schema, value: Any, location: str) -> None:
    if schema.type is Type.ARRAY:
        entry_location = f"element of array {location}"
        element_schema = _require_schema(schema._value_schema, entry_location)
        for entry in value:
            _check(element_schema, entry, entry_location)
    elif schema.type is Type.MAP:
        key_location = f"key of map {location}"
        value_location = f"value of map {location}"
        key_schema = _require_schema(schema._key_schema, key_location)
        value_schema = _require_schema(schema._value_schema, value_location)
        for k, v in value.items():
            _check(key_schema, k, key_location)
            _check(value_schema, v, value_location)


def _require_schema(schema: Schema | None, location: str) -> Schema:
    if schema is None:
        raise DataError(f"No schema defined for {location}")
    return schema


def _invalid_class(schema: Schema, value: Any, location: str) -> NoReturn:
    named = f' "{schema.name}"' if schema.name is not None else ""
    raise DataError(
        f"Invalid value for schema{named} with type {schema.type}: {value.__class__} for {location}"
    )


_new_object = object.__new__
_READ_ONLY = frozenset(("schema", "values"))


class Struct:
    """A value of a STRUCT schema: one slot per field, validated on :meth:`put`.

    Mutable like Kafka's ``Struct``; equal (and hashed) by schema and values. ``get`` returns
    the field's default when the field is unset (``None``); the typed getters
    (``get_int32`` ...) check the field's type and, as in Kafka, return the stored value.

    For code that handles many records (converters, SMTs) there are whole-struct operations
    beyond Kafka's API: :meth:`from_values` (validated), :meth:`from_valid_values` (trusted by
    contract, no per-field checks) and :attr:`values` (all stored values in field order).
    """

    # Public, read-only slots: a slot read is several times cheaper than a property in
    # Python 3.11, and converters and SMTs read both once per record. __setattr__ keeps them
    # read-only; the class sets them through the slot descriptors.
    __slots__ = ("schema", "values")

    #: The STRUCT schema of this value.
    schema: Schema
    #: The stored values in field order (``None`` for unset fields, defaults not applied, as
    #: :meth:`get_without_default` returns them). A live view: read it, never mutate it.
    values: list[Any]

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataError(f"Not a struct schema: {schema!r}")
        _set_schema(self, schema)
        _set_values(self, [None] * len(schema.fields))

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _READ_ONLY:
            raise AttributeError(f"Struct attribute '{name}' is read-only")
        object.__setattr__(self, name, value)  # a subclass's own attributes

    def __delattr__(self, name: str) -> None:
        if name in _READ_ONLY:
            raise AttributeError(f"Struct attribute '{name}' is read-only")
        object.__delattr__(self, name)

    @classmethod
    def from_values(cls, schema: Schema, values: Iterable[Any]) -> Struct:
        """A Struct of ``schema`` holding ``values`` (one per field, in field order), each checked
        as :meth:`put` checks it, in field order, with :meth:`put`'s messages.

        :class:`DataError` when ``schema`` is not a STRUCT schema, when a value is invalid for its
        field, or when the number of values differs from the number of fields.
        """
        struct = cls(schema)
        given = list(values)
        fields = schema.fields
        if len(given) != len(fields):
            raise DataError(
                f"Struct schema has {len(fields)} fields but {len(given)} values were given"
            )
        for field, value in zip(fields, given, strict=True):
            if value is not None or not field.schema.optional:
                _check(field.schema, value, f'field: "{field.name}"')
        _set_values(struct, given)
        return struct

    @classmethod
    def from_valid_values(cls, schema: Schema, values: list[Any]) -> Struct:
        """A Struct of ``schema`` holding ``values``, without any check: trusted by contract.

        The caller guarantees what :meth:`from_values` would check, namely that ``schema`` is a
        STRUCT schema and that ``values`` has one entry per field, in field order, each ``None``
        or a value :meth:`put` accepts for that field (typically values read from a Struct whose
        field has the same schema). The Struct takes ``values`` over without copying: the caller
        must not keep using the list. Breaking the contract gives a Struct that fails later (in
        :meth:`validate`, a converter or a sink), not here. This is the per-record constructor
        for converters and SMTs: a fraction of the cost of ``Struct(schema)`` plus one
        :meth:`put` per field.
        """
        struct: Struct = _new_object(cls)
        _set_schema(struct, schema)
        _set_values(struct, values)
        return struct

    def _lookup(self, key: str | Field) -> Field:
        if isinstance(key, Field):
            return key
        field = self.schema._fields_by_name.get(key)
        if field is None:
            raise DataError(f"{key} is not a valid field name")
        return field

    def put(self, key: str | Field, value: Any) -> Struct:
        """Set a field (by name or :class:`Field`) after validating ``value``; returns self."""
        if isinstance(key, Field):
            field = key
        else:
            found = self.schema._fields_by_name.get(key)
            if found is None:
                raise DataError(f"{key} is not a valid field name")
            field = found
        schema = field.schema
        # Inline fast path for the common valid primitive; anything else gets the full check.
        if value is None:
            if not schema.optional:
                _check(schema, value, f'field: "{field.name}"')
        elif value.__class__ not in schema._fast and not (
            value.__class__ is int and schema._lo <= value <= schema._hi
        ):
            _check(schema, value, f'field: "{field.name}"')
        self.values[field.index] = value
        return self

    def get(self, key: str | Field) -> Any:
        """The field's value, or its schema default when the value is unset."""
        field = self._lookup(key)
        value = self.values[field.index]
        if value is None:
            return field.schema.default_value
        return value

    def get_without_default(self, key: str | Field) -> Any:
        """The field's value as stored (``None`` when unset)."""
        return self.values[self._lookup(key).index]

    def _get_checked(self, name: str, type_: Type) -> Any:
        field = self._lookup(name)
        if field.schema.type is not type_:
            raise DataError(f"Field '{name}' is not of type {type_}")
        return self.values[field.index]

    def get_int8(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT8)  # type: ignore[no-any-return]

    def get_int16(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT16)  # type: ignore[no-any-return]

    def get_int32(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT32)  # type: ignore[no-any-return]

    def get_int64(self, name: str) -> int | None:
        return self._get_checked(name, Type.INT64)  # type: ignore[no-any-return]

    def get_float32(self, name: str) -> float | None:
        return self._get_checked(name, Type.FLOAT32)  # type: ignore[no-any-return]

    def get_float64(self, name: str) -> float | None:
        return self._get_checked(name, Type.FLOAT64)  # type: ignore[no-any-return]

    def get_boolean(self, name: str) -> bool | None:
        return self._get_checked(name, Type.BOOLEAN)  # type: ignore[no-any-return]

    def get_string(self, name: str) -> str | None:
        return self._get_checked(name, Type.STRING)  # type: ignore[no-any-return]

    def get_bytes(self, name: str) -> bytes | None:
        value = self._get_checked(name, Type.BYTES)
        return None if value is None else bytes(value)

    def get_array(self, name: str) -> list[Any] | None:
        return self._get_checked(name, Type.ARRAY)  # type: ignore[no-any-return]

    def get_map(self, name: str) -> dict[Any, Any] | None:
        return self._get_checked(name, Type.MAP)  # type: ignore[no-any-return]

    def get_struct(self, name: str) -> Struct | None:
        return self._get_checked(name, Type.STRUCT)  # type: ignore[no-any-return]

    def validate(self) -> None:
        """Raise :class:`DataError` unless every required field without default is set and valid."""
        values = self.values
        for field in self.schema.fields:
            schema = field.schema
            value = values[field.index]
            if value is None and (schema.optional or schema.default_value is not None):
                continue
            _check(schema, value, f'field: "{field.name}"')

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Struct):
            return NotImplemented
        return self.schema == other.schema and self.values == other.values

    def __hash__(self) -> int:
        return hash((self.schema, deep_hash(self.values)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_struct, (self.schema, self.values))

    def __repr__(self) -> str:
        fields = self.schema.fields
        parts = [
            f"{fields[i].name}={java_str(v)}" for i, v in enumerate(self.values) if v is not None
        ]
        return "Struct{" + ",".join(parts) + "}"


def _restore_struct(schema: Schema, values: list[Any]) -> Struct:
    return Struct.from_valid_values(schema, list(values))


# The slot descriptors' setters: the only way to set the read-only slots.
_set_schema: Callable[[Struct, Schema], None] = vars(Struct)["schema"].__set__
_set_values: Callable[[Struct, list[Any]], None] = vars(Struct)["values"].__set__


def java_str(value: Any) -> str:
    """Render a Connect value the way Java's ``toString`` does (``true``, ``[1, 2]``, ``{a=1}``)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_str(k)}={java_str(v)}" for k, v in value.items()) + "}"
    return str(value)
