"""Projection of a value from one schema onto a compatible one (Kafka's ``SchemaProjector``).

Private module; import the public names from :mod:`sparkcat.api.data`.
"""

from __future__ import annotations

from typing import Any

from sparkcat.api._schema import Schema, Type
from sparkcat.api._struct import Struct
from sparkcat.api.errors import SchemaProjectorError

_NUMERIC = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)
# (source, target) pairs where the target type can hold every source value.
_PROMOTABLE = frozenset(
    (_NUMERIC[i], _NUMERIC[j]) for i in range(len(_NUMERIC)) for j in range(i, len(_NUMERIC))
)


class SchemaProjector:
    """Projects values between compatible schemas (schema evolution).

    Types must match or be a numeric promotion (INT8 → INT16 → INT32 → INT64 → FLOAT32 →
    FLOAT64); names and parameters must be equal. An optional source onto a required target
    needs a target default, used for ``None``. STRUCT fields are matched by name: a target
    field missing from the source is left unset if optional, set to its default if it has one,
    and otherwise an error. Every failure raises :class:`SchemaProjectorError`.
    """

    @staticmethod
    def project(source: Schema, value: Any, target: Schema) -> Any:
        """``value`` (valid for ``source``) converted to a value valid for ``target``."""
        _check_maybe_compatible(source, target)
        if source.optional and not target.optional:
            if target.default_value is None:
                raise SchemaProjectorError(
                    "Writer schema is optional, however, target schema does not provide a "
                    "default value."
                )
            if value is None:
                return target.default_value
            return _project_required(source, value, target)
        if value is None:
            return None
        return _project_required(source, value, target)


def _project_required(source: Schema, value: Any, target: Schema) -> Any:
    target_type = target.type
    if target_type is Type.STRUCT:
        return _project_struct(source, value, target)
    if target_type is Type.ARRAY:
        value_source, value_target = _schemas(source.value_schema, target.value_schema)
        return [SchemaProjector.project(value_source, v, value_target) for v in value]
    if target_type is Type.MAP:
        key_source, key_target = _schemas(source.key_schema, target.key_schema)
        value_source, value_target = _schemas(source.value_schema, target.value_schema)
        return {
            SchemaProjector.project(key_source, k, key_target): SchemaProjector.project(
                value_source, v, value_target
            )
            for k, v in value.items()
        }
    return _project_primitive(source, value, target)


def _schemas(source: Schema | None, target: Schema | None) -> tuple[Schema, Schema]:
    if source is None or target is None:
        raise SchemaProjectorError("Cannot project a container without element schemas.")
    return source, target


def _project_struct(source: Schema, value: Struct, target: Schema) -> Struct:
    projected = Struct(target)
    for target_field in target.fields:
        name = target_field.name
        source_field = source.field(name)
        if source_field is not None:
            try:
                field_value = SchemaProjector.project(
                    source_field.schema, value.get(name), target_field.schema
                )
            except SchemaProjectorError as e:
                raise SchemaProjectorError(f"Error projecting {name}") from e
            projected.put(target_field, field_value)
        elif target_field.schema.optional:
            pass  # a new optional field stays unset
        elif target_field.schema.default_value is not None:
            projected.put(target_field, target_field.schema.default_value)
        else:
            raise SchemaProjectorError(
                f"Required field `{name}` is missing from source schema: {source!r}"
            )
    return projected


def _project_primitive(source: Schema, value: Any, target: Schema) -> Any:
    # Logical values (date, Decimal, ...) are not numbers and pass through unchanged.
    if (
        (source.type, target.type) in _PROMOTABLE
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    ):
        if target.type is Type.FLOAT32 or target.type is Type.FLOAT64:
            return float(value)
        return int(value)
    return value


def _check_maybe_compatible(source: Schema, target: Schema) -> None:
    if source.type is not target.type and (source.type, target.type) not in _PROMOTABLE:
        raise SchemaProjectorError(
            f"Schema type mismatch. source type: {source.type} and target type: {target.type}"
        )
    if source.name != target.name:
        raise SchemaProjectorError(
            f"Schema name mismatch. source name: {source.name} and target name: {target.name}"
        )
    if source.parameters != target.parameters:
        raise SchemaProjectorError(
            f"Schema parameters not equal. source parameters: {_params(source)} and target "
            f"parameters: {_params(target)}"
        )


def _params(schema: Schema) -> str:
    if schema.parameters is None:
        return "null"
    return "{" + ", ".join(f"{k}={v}" for k, v in schema.parameters.items()) + "}"
