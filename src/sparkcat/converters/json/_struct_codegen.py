"""Generated per-schema functions for STRUCT values, the hot path of JsonConverter.

A struct encoder is one straight-line function: read the Struct's values, handle nulls and the
values Java prints differently, build the payload dict in one display. A decoder does the
reverse and builds the Struct from all its values at once. Values of a Struct were validated by
``Struct.put`` (or promised valid to ``Struct.from_valid_values``), so encoding only re-checks
what JSON needs. Only indices and fixed snippets are spliced into the generated source; names,
schemas and helpers are passed as globals.

For a top-level STRUCT schema the converter also gets *message* functions: the encoder
returns the final bytes (``{"schema":…,"payload":…}`` with the schema's bytes spliced in, or
the bare payload) and the decoder takes the message bytes of a known envelope prefix to a
``SchemaAndValue``, so a record costs one generated call on top of orjson.
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

import orjson

from sparkcat.api.data import Date, Decimal, Schema, SchemaAndValue, Struct, Time, Timestamp, Type
from sparkcat.api.errors import DataError
from sparkcat.converters.json._encode import NULL_REQUIRED, encode_double

if TYPE_CHECKING:
    from collections.abc import Callable

    from sparkcat.converters.json._decode import DecoderFactory
    from sparkcat.converters.json._encode import Encoder, EncoderFactory

_INT_BOUNDS = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_PLAIN = (Type.BOOLEAN, Type.STRING, *_INT_BOUNDS)
# Connect's logical types, whose values need their own encoders; any other schema name
# (Debezium's io.debezium.time.Timestamp, ...) is encoded as its type.
_LOGICAL_NAMES = frozenset((Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME,
                            Timestamp.LOGICAL_NAME))  # fmt: skip
_MAX_INLINE_DEPTH = 4


def _compile(source: str, name: str, namespace: dict[str, Any]) -> Any:
    exec(compile(source, f"<sparkcat.json {name}>", "exec"), namespace)
    return namespace[name]


def _fail_null() -> Any:
    raise DataError(NULL_REQUIRED)


def _mismatch(value: Any) -> Any:
    raise DataError("Mismatching schema.")


def _encode_float(value: Any) -> Any:
    return encode_double(float(value))


def _unpack(count: int, source: str) -> str:
    # "x0, = ..." keeps the 1-field case valid; unpacking a sequence is one bytecode.
    if count == 0:
        return "    pass"
    return "    " + "".join(f"x{i}, " for i in range(count)) + "= " + source


def _encode_lines(factory: EncoderFactory, schema: Schema, ns: dict[str, Any]) -> list[str]:
    """Statements that read a Struct ``s`` of ``schema`` into ``x0 …`` ready for orjson."""
    ns.update(S=schema, Struct=Struct, MISMATCH=_mismatch)
    return [
        "    if s.__class__ is not Struct and not isinstance(s, Struct): MISMATCH(s)",
        "    if s.schema is not S and s.schema != S: MISMATCH(s)",
        _unpack(len(schema.fields), "s.values"),
        *_field_lines(factory, schema, ns, "x", "    ", 0),
    ]


def _field_lines(
    factory: EncoderFactory, schema: Schema, ns: dict[str, Any], var: str, indent: str, depth: int
) -> list[str]:
    """Statements that make the slots ``{var}0 …`` of ``schema``'s fields JSON-ready.

    A nested STRUCT field is encoded inline, into its own slots ``{var}{i}_0 …`` and a dict
    display, rather than by a call to its encoder: a Debezium envelope holds three structs,
    and the calls cost more than their JSON. Names in ``ns`` carry the slot's path.
    """
    body: list[str] = []
    for i, field in enumerate(schema.fields):
        fs = field.schema
        slot = f"{var}{i}"
        tag = slot[1:]
        ns[f"K{tag}"] = field.name
        if fs.default_value is not None and factory.replace_null:
            ns[f"C{tag}"] = factory.default_to_json(fs, fs.default_value)
            body.append(f"if {slot} is None: {slot} = C{tag}")
            guard = "elif {cond}: "
        elif not fs.optional:
            ns[f"N{tag}"] = _fail_null
            body.append(f"if {slot} is None: {slot} = N{tag}()")
            guard = "elif {cond}: "
        else:
            guard = f"if {slot} is not None and ({{cond}}): "
        plain = fs.name is None or fs.name not in _LOGICAL_NAMES
        if plain and fs.type is Type.STRUCT and depth < _MAX_INLINE_DEPTH:
            body.append(guard.format(cond="True"))
            body += _nested_lines(factory, fs, ns, slot, depth)
        elif plain and fs.type is Type.FLOAT64:
            ns[f"E{tag}"] = _encode_float
            cond = (f"not ({slot}.__class__ is float and (1e-3 <= {slot} < 1e7 "
                    f"or -1e7 < {slot} <= -1e-3))")  # fmt: skip
            body.append(guard.format(cond=cond) + f"{slot} = E{tag}({slot})")
        elif not (plain and fs.type in _PLAIN):
            ns[f"E{tag}"] = factory.value_encoder(fs)
            body.append(guard.format(cond="True") + f"{slot} = E{tag}({slot})")
    return [indent + line for line in body]


def _nested_lines(
    factory: EncoderFactory, schema: Schema, ns: dict[str, Any], slot: str, depth: int
) -> list[str]:
    """The block under a guard that encodes the non-null Struct in ``slot`` in place (the
    checks and results of :func:`struct_encoder`)."""
    tag = slot[1:]
    ns[f"S{tag}"] = schema
    ns.setdefault("Struct", Struct)
    ns.setdefault("MISMATCH", _mismatch)
    count = len(schema.fields)
    inner = f"{slot}_"
    lines = [
        f"    if {slot}.__class__ is not Struct and not isinstance({slot}, Struct): "
        f"MISMATCH({slot})",
        f"    if {slot}.schema is not S{tag} and {slot}.schema != S{tag}: MISMATCH({slot})",
    ]
    if count:
        lines.append("    " + "".join(f"{inner}{j}, " for j in range(count)) + f"= {slot}.values")
    lines += _field_lines(factory, schema, ns, inner, "    ", depth + 1)
    display = ", ".join(f"K{inner[1:]}{j}: {inner}{j}" for j in range(count))
    lines.append(f"    {slot} = {{{display}}}")
    return lines


def _payload_display(schema: Schema) -> str:
    return "{" + ", ".join(f"K{i}: x{i}" for i in range(len(schema.fields))) + "}"


def struct_encoder(factory: EncoderFactory, schema: Schema) -> Encoder:
    """An encoder for non-null Struct values of ``schema`` (to the payload dict)."""
    ns: dict[str, Any] = {}
    body = _encode_lines(factory, schema, ns)
    source = "\n".join(["def encode_struct(s):", *body, "    return " + _payload_display(schema)])
    return _compile(source, "encode_struct", ns)  # type: ignore[no-any-return]


def struct_message_encoder(
    factory: EncoderFactory, schema: Schema, prefix: bytes | None, encode_any: Encoder
) -> Callable[[Any], bytes]:
    """``value`` of ``schema`` → the message bytes: ``prefix + payload + b"}"`` (the envelope)
    or the payload alone (``prefix`` None). ``encode_any`` handles what is not a Struct
    (``None``, wrong classes) with the general rules."""
    ns: dict[str, Any] = {"dumps": orjson.dumps, "ANY": encode_any}
    body = _encode_lines(factory, schema, ns)
    payload = "dumps(" + _payload_display(schema) + ")"
    if prefix is None:
        result = payload
        other = "dumps(ANY(s))"
    else:
        # One %-format builds the envelope in a single allocation (% in the schema escaped).
        ns["ENVELOPE"] = prefix.replace(b"%", b"%%") + b"%b}"
        result = f"ENVELOPE % {payload}"
        other = "ENVELOPE % dumps(ANY(s))"
    source = "\n".join(
        [
            "def encode_message(s):",
            f"    if s.__class__ is not Struct: return {other}",
            *body[1:],
            f"    return {result}",
        ]
    )
    return _compile(source, "encode_message", ns)  # type: ignore[no-any-return]


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


def _decode_lines(
    factory: DecoderFactory, schema: Schema, ns: dict[str, Any], indent: str
) -> list[str]:
    """Statements turning the JSON values ``x0 …`` of ``schema``'s fields into Connect values."""
    body: list[str] = []
    for i, field in enumerate(schema.fields):
        fs = field.schema
        ns[f"K{i}"] = field.name
        ns[f"D{i}"] = factory.type_decoder(fs)
        check = _fast_check(i, fs)
        convert = f"x{i} = D{i}(x{i})"
        if fs.default_value is not None and factory.replace_null:
            ns[f"C{i}"] = fs.default_value
            body.append(f"if x{i} is None: x{i} = C{i}")
            guard = "else: " if check is None else f"elif not ({check}): "
        elif not fs.optional:
            ns[f"N{i}"] = factory.null_handler(fs)
            body.append(f"if x{i} is None: x{i} = N{i}()")
            guard = "else: " if check is None else f"elif not ({check}): "
        else:
            guard = f"if x{i} is not None" + ("" if check is None else f" and not ({check})")
            guard += ": "
        body.append(guard + convert)
    return [indent + line for line in body]


def _values_list(schema: Schema) -> str:
    return "[" + ", ".join(f"x{i}" for i in range(len(schema.fields))) + "]"


def struct_decoder(factory: DecoderFactory, schema: Schema) -> Any:
    """A decoder for non-null JSON objects of ``schema`` → Struct."""
    ns: dict[str, Any] = {
        "S": schema,
        "STRUCT": Struct.from_valid_values,
        "NOT_OBJECT": factory.not_object,
    }
    fetch = [f"    x{i} = g(K{i})" for i in range(len(schema.fields))]
    source = "\n".join(
        [
            "def decode_struct(p):",
            "    if p.__class__ is not dict: NOT_OBJECT(p)",
            "    g = p.get",
            *fetch,
            *_decode_lines(factory, schema, ns, "    "),
            f"    return STRUCT(S, {_values_list(schema)})",
        ]
    )
    return _compile(source, "decode_struct", ns)


def struct_message_decoder(
    factory: DecoderFactory,
    schema: Schema,
    prefix: bytes,
    decode_any: Callable[[Any], Any],
    loads: Callable[[bytes], Any] = orjson.loads,
) -> Callable[[bytes], SchemaAndValue | None]:
    """Message bytes → ``SchemaAndValue`` for messages that are ``prefix`` (an envelope whose
    schema is ``schema``) + payload + ``}``; ``None`` for any other message (the caller parses
    it in full). ``decode_any`` is the general decoder of ``schema``'s payloads; ``loads``
    parses the payload and raises ``orjson.JSONDecodeError`` for what needs the full parse."""
    count = len(schema.fields)
    ns: dict[str, Any] = {
        "S": schema,
        "P": prefix,
        "LP": len(prefix),
        "loads": loads,
        "JSONDecodeError": orjson.JSONDecodeError,
        "STRUCT": Struct.from_valid_values,
        "SV": SchemaAndValue,
        "NEW_SV": tuple.__new__,  # SchemaAndValue is a NamedTuple: skips its Python __new__
        "ANY": decode_any,
        # All fields in one C call; a missing field (KeyError) takes the general decoder.
        "FIELDS": itemgetter(*(field.name for field in schema.fields)) if count else None,
    }
    if count == 0:
        fetch = "pass"
    elif count == 1:
        fetch = "x0 = FIELDS(p)"  # itemgetter of one key returns the value itself
    else:
        fetch = "".join(f"x{i}, " for i in range(count)) + "= FIELDS(p)"
    source = "\n".join(
        [
            "def decode_message(data):",
            "    if not (data.startswith(P) and data[-1] == 125):",  # 125 is "}"
            "        return None",
            "    try:",
            "        p = loads(data[LP:-1])",
            "    except JSONDecodeError:",  # not only a payload (extra fields, leading zeros)
            "        return None",
            "    if p.__class__ is dict:",
            "        try:",
            "            " + fetch,
            "        except KeyError:",
            "            return NEW_SV(SV, (S, ANY(p)))",
            *_decode_lines(factory, schema, ns, "        "),
            f"        return NEW_SV(SV, (S, STRUCT(S, {_values_list(schema)})))",
            "    return NEW_SV(SV, (S, ANY(p)))",
        ]
    )
    return _compile(source, "decode_message", ns)  # type: ignore[no-any-return]
