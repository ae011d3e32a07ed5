"""The descriptor files every Connect protobuf schema may import, and Confluent's field options.

Confluent's ``confluent/meta.proto`` (the ``Meta`` option message carrying ``connect.type``,
decimal ``precision``/``scale`` and docs) and ``confluent/type/decimal.proto`` are built here as
``FileDescriptorProto``s, field by field; the Google files come from the protobuf runtime and
googleapis-common-protos. Schemas that import only these files are registered without
references, as Confluent's serializers do with ``skip.known.types`` and as its deserializers
resolve them (they ship the same files).

Field options are kept as raw bytes (extension 1088 of ``FieldOptions``) and scanned by hand,
so nothing is added to protobuf's default descriptor pool, where another library's copy of
``confluent/meta.proto`` may already live.
"""

from __future__ import annotations

from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    duration_pb2,
    empty_pb2,
    field_mask_pb2,
    message_factory,
    struct_pb2,
    timestamp_pb2,
    wrappers_pb2,
)
from google.type import date_pb2, timeofday_pb2

from sparkcat.api.errors import DataError
from sparkcat.converters.protobuf._varint import read_varint, varint

_F = descriptor_pb2.FieldDescriptorProto
META_LOCATION = "confluent/meta.proto"
DECIMAL_LOCATION = "confluent/type/decimal.proto"
DATE_LOCATION = "google/type/date.proto"
TIME_LOCATION = "google/type/timeofday.proto"
TIMESTAMP_LOCATION = "google/protobuf/timestamp.proto"
WRAPPER_LOCATION = "google/protobuf/wrappers.proto"
DESCRIPTOR_LOCATION = "google/protobuf/descriptor.proto"

DECIMAL_TYPE = "confluent.type.Decimal"
DATE_TYPE = "google.type.Date"
TIME_TYPE = "google.type.TimeOfDay"
TIMESTAMP_TYPE = "google.protobuf.Timestamp"
META_EXTENSION = 1088  # confluent.field_meta and its message/file/enum siblings


def _field(
    message: descriptor_pb2.DescriptorProto,
    name: str,
    number: int,
    kind: int,
    type_name: str = "",
    repeated: bool = False,
) -> None:
    label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    field = message.field.add(name=name, number=number, type=kind, label=label)
    if type_name:
        field.type_name = type_name


def _meta_file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name=META_LOCATION, package="confluent", syntax="proto3", dependency=[DESCRIPTOR_LOCATION]
    )
    file.options.go_package = "../confluent"
    meta = file.message_type.add(name="Meta")
    _field(meta, "doc", 1, _F.TYPE_STRING)
    _field(meta, "params", 2, _F.TYPE_MESSAGE, ".confluent.Meta.ParamsEntry", repeated=True)
    _field(meta, "tags", 3, _F.TYPE_STRING, repeated=True)
    entry = meta.nested_type.add(name="ParamsEntry")
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_STRING)
    for name, extendee in (
        ("file_meta", "FileOptions"),
        ("message_meta", "MessageOptions"),
        ("field_meta", "FieldOptions"),
        ("enum_meta", "EnumOptions"),
        ("enum_value_meta", "EnumValueOptions"),
    ):
        file.extension.add(
            name=name,
            number=META_EXTENSION,
            label=_F.LABEL_OPTIONAL,
            type=_F.TYPE_MESSAGE,
            type_name=".confluent.Meta",
            extendee=f".google.protobuf.{extendee}",
        )
    return file


def _decimal_file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(
        name=DECIMAL_LOCATION, package="confluent.type", syntax="proto3"
    )
    file.options.go_package = "../types"
    decimal = file.message_type.add(name="Decimal")
    # the unscaled value as big-endian two's complement, as Java's BigInteger.toByteArray()
    _field(decimal, "value", 1, _F.TYPE_BYTES)
    _field(decimal, "precision", 2, _F.TYPE_UINT32)
    _field(decimal, "scale", 3, _F.TYPE_INT32)
    return file


def _copied(module_descriptor: object) -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto()
    file.ParseFromString(module_descriptor.serialized_pb)  # type: ignore[attr-defined]
    return file


BUILTIN_FILES: dict[str, descriptor_pb2.FileDescriptorProto] = {
    DESCRIPTOR_LOCATION: _copied(descriptor_pb2.DESCRIPTOR),
    TIMESTAMP_LOCATION: _copied(timestamp_pb2.DESCRIPTOR),
    WRAPPER_LOCATION: _copied(wrappers_pb2.DESCRIPTOR),
    DATE_LOCATION: _copied(date_pb2.DESCRIPTOR),
    TIME_LOCATION: _copied(timeofday_pb2.DESCRIPTOR),
    META_LOCATION: _meta_file(),
    DECIMAL_LOCATION: _decimal_file(),
    # other well-known files a foreign schema may import
    "google/protobuf/any.proto": _copied(any_pb2.DESCRIPTOR),
    "google/protobuf/duration.proto": _copied(duration_pb2.DESCRIPTOR),
    "google/protobuf/empty.proto": _copied(empty_pb2.DESCRIPTOR),
    "google/protobuf/field_mask.proto": _copied(field_mask_pb2.DESCRIPTOR),
    "google/protobuf/struct.proto": _copied(struct_pb2.DESCRIPTOR),
}
_SERIALIZED = {name: file.SerializeToString() for name, file in BUILTIN_FILES.items()}

WRAPPER_TYPES = {
    f"google.protobuf.{m.name}": m.name for m in BUILTIN_FILES[WRAPPER_LOCATION].message_type
}


def is_builtin(location: str) -> bool:
    """Files every Confluent client knows (Confluent's own rule: these prefixes)."""
    return location.startswith(("confluent/", "google/protobuf/", "google/type/"))


def new_pool(files: list[descriptor_pb2.FileDescriptorProto]) -> descriptor_pool.DescriptorPool:
    """A private pool with the builtins and ``files`` (dependencies first).

    One pool per schema: two versions of one file name cannot share a pool."""
    pool = descriptor_pool.DescriptorPool()
    for serialized in _SERIALIZED.values():
        pool.AddSerializedFile(serialized)
    for file in files:
        if file.name not in BUILTIN_FILES:
            try:
                pool.Add(file)
            except (TypeError, KeyError, ValueError) as e:
                raise DataError(f"Invalid Protobuf schema {file.name}: {e}") from e
    return pool


_META_POOL = new_pool([])
_Meta = message_factory.GetMessageClass(_META_POOL.FindMessageTypeByName("confluent.Meta"))


_OPTIONS = "Protobuf options"


def meta_option(params: dict[str, str], doc: str | None = None) -> bytes:
    """The serialized ``(confluent.field_meta)`` option holding ``params`` and ``doc``."""
    payload: bytes = _Meta(params=params, doc=doc or "").SerializeToString(deterministic=True)
    return varint(META_EXTENSION << 3 | 2) + varint(len(payload)) + payload


def read_meta(options: bytes) -> tuple[str, dict[str, str]]:
    """``(doc, params)`` of the Confluent meta option in serialized ``options`` (empty if none)."""
    pos = 0
    while pos < len(options):
        key, pos = read_varint(options, pos, _OPTIONS)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = read_varint(options, pos, _OPTIONS)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = read_varint(options, pos, _OPTIONS)
            if number == META_EXTENSION:
                meta = _Meta.FromString(options[pos : pos + length])
                return meta.doc, dict(meta.params)
            pos += length
        else:
            break  # groups: not in any options Confluent writes
    return "", {}
