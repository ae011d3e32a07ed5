"""Generated per-schema functions for STRUCT values, the hot path of JsonConverter.

A struct encoder is one straight-line function: read each slot of the Struct, handle nulls
and the values Java prints differently, build the payload dict in one display. A decoder does
the reverse and fills the new Struct's slots at once. Values of a Struct were validated by
``Struct.put``, so encoding only re-checks what JSON needs. Only indices and fixed snippets
are spliced into the generated source; names, schemas and helpers are passed as globals.

This module reads ``Struct``'s slots (``_schema``, ``_values``) directly: going through
``get_without_default`` per field would cost more than writing the JSON.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sparkcat.api.data import Schema, Struct, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.json._encode import NULL_REQUIRED, encode_double

if TYPE_CHECKING:
    from sparkcat.converters.json._decode import DecoderFactory
    from sparkcat.converters.json._encode import Encoder, EncoderFactory

_INT_BOUNDS = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_PLAIN = (Type.BOOLEAN, Type.STRING, *_INT_BOUNDS)


def _compile(source: str, name: str, namespace: dict[str, Any]) -> Any:
    exec(compile(source, f"<sparkcat.json {name}>", "exec"), namespace)
    return namespace[name]


def _fail_null() -> Any:
    raise DataError(NULL_REQUIRED)


def _mismatch(value: Any) -> Any:
    raise DataError("Mismatching schema.")


def _encode_float(value: Any) -> Any:
    return encode_double(float(value))


def struct_encoder(factory: EncoderFactory, schema: Schema) -> Encoder:
    """An encoder for non-null Struct values of ``schema``."""
    ns: dict[str, Any] = {"S": schema, "Struct": Struct, "MISMATCH": _mismatch}
    body: list[str] = []
    items: list[str] = []
    for i, field in enumerate(schema.fields):
        fs = field.schema
        ns[f"K{i}"] = field.name
        if fs.default_value is not None and factory.replace_null:
            ns[f"C{i}"] = factory.default_to_json(fs, fs.default_value)
            body.append(f"    if x{i} is None: x{i} = C{i}")
            guard = "    elif {cond}: "
        elif not fs.optional:
            ns[f"N{i}"] = _fail_null
            body.append(f"    if x{i} is None: x{i} = N{i}()")
            guard = "    elif {cond}: "
        else:
            guard = f"    if x{i} is not None and ({{cond}}): "
        if fs.name is None and fs.type is Type.FLOAT64:
            ns[f"E{i}"] = _encode_float
            cond = f"not (x{i}.__class__ is float and (1e-3 <= x{i} < 1e7 or -1e7 < x{i} <= -1e-3))"
            body.append(guard.format(cond=cond) + f"x{i} = E{i}(x{i})")
        elif not (fs.name is None and fs.type in _PLAIN):
            ns[f"E{i}"] = factory.value_encoder(fs)
            body.append(guard.format(cond="True") + f"x{i} = E{i}(x{i})")
        items.append(f"K{i}: x{i}")
    source = "\n".join(
        [
            "def encode_struct(s):",
            "    if s.__class__ is not Struct and not isinstance(s, Struct): MISMATCH(s)",
            "    if s._schema is not S and s._schema != S: MISMATCH(s)",
            # Unpacking the slot list is one bytecode; "x0, = ..." keeps the 1-field case valid.
            "    " + "".join(f"x{i}, " for i in range(len(schema.fields))) + "= s._values"
            if schema.fields
            else "    pass",
            *body,
            "    return {" + ", ".join(items) + "}",
        ]
    )
    return _compile(source, "encode_struct", ns)  # type: ignore[no-any-return]


def _fast_check(i: int, fs: Schema) -> str | None:
    """A condition that is true when slot ``x{i}`` needs no conversion at all."""
    if fs.name is not None:
        return None
    if fs.type in _INT_BOUNDS:
        low, high = _INT_BOUNDS[fs.type]
        return f"x{i}.__class__ is int and {low} <= x{i} <= {high}"
    if fs.type is Type.BOOLEAN:
        return f"x{i}.__class__ is bool"
    if fs.type is Type.STRING:
        return f"x{i}.__class__ is str"
    if fs.type is Type.FLOAT64:
        return f"x{i}.__class__ is float"
    return None


def struct_decoder(factory: DecoderFactory, schema: Schema) -> Any:
    """A decoder for non-null JSON objects of ``schema`` → Struct."""
    ns: dict[str, Any] = {
        "S": schema,
        "NEW": Struct.__new__,
        "Struct": Struct,
        "NOT_OBJECT": factory.not_object,
    }
    body: list[str] = []
    for i, field in enumerate(schema.fields):
        fs = field.schema
        ns[f"K{i}"] = field.name
        ns[f"D{i}"] = factory.type_decoder(fs)
        body.append(f"    x{i} = g(K{i})")
        check = _fast_check(i, fs)
        convert = f"x{i} = D{i}(x{i})"
        if fs.default_value is not None and factory.replace_null:
            ns[f"C{i}"] = fs.default_value
            body.append(f"    if x{i} is None: x{i} = C{i}")
            guard = "    else: " if check is None else f"    elif not ({check}): "
        elif not fs.optional:
            ns[f"N{i}"] = factory.null_handler(fs)
            body.append(f"    if x{i} is None: x{i} = N{i}()")
            guard = "    else: " if check is None else f"    elif not ({check}): "
        else:
            guard = f"    if x{i} is not None" + ("" if check is None else f" and not ({check})")
            guard += ": "
        body.append(guard + convert)
    values = ", ".join(f"x{i}" for i in range(len(schema.fields)))
    source = "\n".join(
        [
            "def decode_struct(p):",
            "    if p.__class__ is not dict: NOT_OBJECT(p)",
            "    g = p.get",
            *body,
            "    s = NEW(Struct)",
            "    s._schema = S",
            f"    s._values = [{values}]",
            "    return s",
        ]
    )
    return _compile(source, "decode_struct", ns)
