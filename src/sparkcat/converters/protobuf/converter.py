"""ProtobufConverter: Connect data <-> protobuf in Confluent's wire format, schemas in a
Schema Registry.

Every message is magic byte 0, the schema's registry id (4 bytes, big-endian), the message
indexes (which message of the schema file: a zigzag-varint count and that many zigzag varints,
or the single byte 0 for the file's first message) and the protobuf encoding of the value.

The registered schema is the base64 of the schema's serialized ``FileDescriptorProto``
(``schemaType: PROTOBUF``), which Confluent's registry accepts as it accepts ``.proto`` text;
the converter reads schemas back with ``format=serialized``. Every struct of a record schema is
a message of that one file (nested), and the files it imports (``confluent/meta.proto``,
``google/type/date.proto``, ``google/protobuf/timestamp.proto``...) are all files every
Confluent client ships, so no schema references are registered (Confluent's
``skip.known.types``). Reading resolves a schema's references to other files through the
registry (their subjects and versions), except for those well-known files.

Messages are built by upb's dynamic message classes (``message_factory``), one class per
schema, from keyword arguments (:mod:`._to_protobuf`); decoding parses with the same classes
and reads attributes (:mod:`._to_connect`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from typing import Any, NamedTuple, cast

from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.message import DecodeError

from sparkcat.api.batch import ConnectDataBatch
from sparkcat.api.data import Schema, SchemaAndValue, Type
from sparkcat.api.errors import DataError
from sparkcat.api.records import Headers
from sparkcat.converters.protobuf._builtins import is_builtin, new_pool
from sparkcat.converters.protobuf._to_protobuf import to_protobuf
from sparkcat.converters.protobuf._varint import read_varint, varint
from sparkcat.converters.protobuf.config import CONFIG_DEF, ProtobufConverterConfig
from sparkcat.converters.protobuf.protobuf_data import DataOptions, ProtobufData
from sparkcat.converters.schema_registry.converter import SchemaRegistryConverter
from sparkcat.converters.schema_registry.wire import HEADER_SIZE, header, schema_id_of

_NULL = SchemaAndValue.NULL
_new_sv = tuple.__new__
_TO_BYTES = "Failed to serialize Protobuf data from topic"
_TO_CONNECT = "Failed to deserialize data for topic"
FIRST_MESSAGE = b"\x00"


_Writer = Callable[[Any], bytes]  # Struct -> header + message indexes + payload


class _Reader(NamedTuple):
    schema: Schema
    decode: Callable[[bytes], SchemaAndValue]  # the whole message, header included
    parse: Callable[[bytes], Any]  # payload -> message
    convert: Callable[[Any], Any]  # message -> Connect value
    start: int  # where the payload starts (header and message indexes before it)


def _zigzag(value: int) -> bytes:
    return varint((value << 1) ^ (value >> 63))


def encode_indexes(indexes: list[int]) -> bytes:
    """Confluent's message-index array; ``[0]`` is written as the single byte 0."""
    if indexes == [0]:
        return FIRST_MESSAGE
    return _zigzag(len(indexes)) + b"".join(_zigzag(i) for i in indexes)


def _read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    result, pos = read_varint(data, pos, "message indexes")
    return (result >> 1) ^ -(result & 1), pos


def decode_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """``(message indexes, payload offset)`` of the index array at ``pos``."""
    count, pos = _read_zigzag(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > 100:
        raise DataError(f"Invalid message indexes: count {count}")
    indexes = []
    for _ in range(count):
        index, pos = _read_zigzag(data, pos)
        indexes.append(index)
    return indexes, pos


def message_at(file: descriptor_pb2.FileDescriptorProto, indexes: list[int]) -> str:
    """The full name of the message ``indexes`` points at in ``file``."""
    messages: Any = file.message_type
    names = [file.package] if file.package else []
    for index in indexes:
        if not 0 <= index < len(messages):
            raise DataError(
                f"Invalid message indexes {indexes}: no message {index} among {len(messages)}"
            )
        names.append(messages[index].name)
        messages = messages[index].nested_type
    return ".".join(names)


def indexes_of(file: descriptor_pb2.FileDescriptorProto, name: str) -> list[int]:
    """The message indexes of message ``name`` (full name) in ``file``."""
    prefix = f"{file.package}." if file.package else ""
    path = name[len(prefix) :].split(".") if name.startswith(prefix) else []
    messages: Any = file.message_type
    indexes = []
    for part in path:
        found = [i for i, m in enumerate(messages) if m.name == part]
        if not found:
            raise DataError(f"Message {name} is not defined in schema {file.name}")
        indexes.append(found[0])
        messages = messages[found[0]].nested_type
    if not indexes:
        raise DataError(f"Message {name} is not defined in schema {file.name}")
    return indexes


def schema_text(file: descriptor_pb2.FileDescriptorProto) -> str:
    return base64.b64encode(file.SerializeToString()).decode("ascii")


def parse_schema_text(text: str) -> descriptor_pb2.FileDescriptorProto:
    try:
        file = descriptor_pb2.FileDescriptorProto()
        file.ParseFromString(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError, DecodeError) as e:
        raise DataError(
            f"Invalid Protobuf schema: not a base64 FileDescriptorProto ({type(e).__name__}: {e})"
        ) from e
    return file


def message_class(
    file: descriptor_pb2.FileDescriptorProto,
    name: str,
    dependencies: list[descriptor_pb2.FileDescriptorProto] | None = None,
) -> Any:
    """The upb message class of message ``name`` of ``file`` (in a pool of its own, with the
    builtin files and ``dependencies``)."""
    pool = new_pool([*(dependencies or []), file])
    try:
        descriptor = pool.FindMessageTypeByName(name)
    except KeyError as e:
        raise DataError(f"Message {name} is not defined in schema {file.name}") from e
    return message_factory.GetMessageClass(descriptor)


class ProtobufConverter(SchemaRegistryConverter[ProtobufConverterConfig, _Writer, _Reader]):
    """``io.confluent.connect.protobuf.ProtobufConverter``."""

    schema_type = "PROTOBUF"
    schema_format = "serialized"
    config_def = CONFIG_DEF
    config_class = ProtobufConverterConfig

    def _configured(self, config: ProtobufConverterConfig) -> None:
        self._options = DataOptions(
            enhanced_schema_support=config.enhanced_schema_support,
            generate_index_for_unions=config.generate_index_for_unions,
            scrub_invalid_names=config.scrub_invalid_names,
            int_for_enums=config.int_for_enums,
            optional_for_nullables=config.optional_for_nullables,
            wrapper_for_nullables=config.wrapper_for_nullables,
            wrapper_for_raw_primitives=config.wrapper_for_raw_primitives,
            generate_struct_for_nulls=config.generate_struct_for_nulls,
        )
        self._data = ProtobufData(self._options)

    def protobuf_schema(self, schema: Schema) -> descriptor_pb2.FileDescriptorProto:
        """The schema file this converter registers for ``schema``."""
        return self._data.from_connect_schema(schema)[0]

    # -- Connect -> bytes ------------------------------------------------------------------
    def from_connect_data(
        self, topic: str, schema: Schema | None, value: Any, headers: Headers | None = None
    ) -> bytes | None:
        """Serialize ``value``; ``None`` for a null value (a tombstone)."""
        if value is None:
            return None
        if schema is None:
            raise DataError(
                f"{_TO_BYTES} {topic}: sparkcat's ProtobufConverter needs a schema "
                "(schemaless values are not supported)"
            )
        last_topic, last_schema, writer = self._last_write
        try:
            if schema is not last_schema or topic != last_topic or writer is None:
                writer = self._writer_for(topic, schema)
            return writer(value)
        except DataError as e:
            raise DataError(f"{_TO_BYTES} {topic}: {e}") from e
        except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as e:
            raise DataError(f"{_TO_BYTES} {topic}: {type(e).__name__}: {e}") from e

    def _new_writer(self, topic: str, schema: Schema) -> _Writer:
        file, name = self._data.from_connect_schema(schema)
        cls = message_class(file, name)  # checks the schema before it is registered
        text = schema_text(file)
        schema_id, writer_text = self._serde.writer_schema(topic, name, text)
        if writer_text != text:  # use.latest.version: the subject's latest schema
            file = parse_schema_text(writer_text)
            names = {message_at(file, [i]) for i in range(len(file.message_type))}
            if name not in names:
                name = message_at(file, [0])
            cls = message_class(file, name)
        prefix = header(schema_id) + encode_indexes(indexes_of(file, name))
        return to_protobuf(schema, self._options, cls, prefix)

    # -- bytes -> Connect ------------------------------------------------------------------
    def to_connect_data(
        self, topic: str, data: bytes | None, headers: Headers | None = None
    ) -> SchemaAndValue:
        """Deserialize ``data``; :class:`DataError` naming ``topic`` for malformed input."""
        if data is None:
            return _NULL
        last_topic, last_prefix, reader = self._last_read
        try:
            # Header and message indexes are prefix-free codes: a message starting with the
            # previous message's prefix has the same schema and message.
            if reader is None or not data.startswith(last_prefix) or topic != last_topic:
                reader = self._reader_of(topic, data)
            return reader.decode(data)
        except DataError as e:
            raise DataError(f"{_TO_CONNECT} {topic} to Protobuf: {e}") from e
        except (DecodeError, ValueError, TypeError, KeyError, IndexError) as e:
            raise DataError(f"{_TO_CONNECT} {topic} to Protobuf: {type(e).__name__}: {e}") from e

    def _reader_of(self, topic: str, data: bytes) -> _Reader:
        schema_id_of(data)
        if len(data) > HEADER_SIZE and data[HEADER_SIZE] == 0:
            start = HEADER_SIZE + 1
        else:
            start = decode_indexes(data, HEADER_SIZE)[1]
        return self._reader_for(topic, data[:start])

    def _new_reader(self, topic: str, key: bytes) -> _Reader:
        """The reader of messages starting with ``key`` (header and message indexes)."""
        schema_id = schema_id_of(key)
        indexes, _ = decode_indexes(key, HEADER_SIZE)
        text = self._serde.schema_by_id(schema_id)
        file = parse_schema_text(text)
        dependencies = []
        for location, dependency_text in self._serde.references_of(schema_id, is_builtin):
            dependency = parse_schema_text(dependency_text)
            dependency.name = location  # what the importing file names it
            dependencies.append(dependency)
        name = message_at(file, indexes)
        parse = message_class(file, name, dependencies).FromString
        references = self._serde.references(schema_id) if dependencies else None
        version = self._serde.version_of(topic, name, schema_id, text, references)
        schema, convert = self._data.to_connect_schema([*dependencies, file], name, version)
        start = len(key)

        def decode(data: bytes) -> SchemaAndValue:
            return _new_sv(SchemaAndValue, (schema, convert(parse(data[start:]))))

        return _Reader(schema, decode, parse, convert, start)

    # -- the columnar path -----------------------------------------------------------------
    def from_connect_data_batch(
        self, topic: str, schema: Schema | None, values: list[Any]
    ) -> list[bytes | None]:
        """Structs of one STRUCT schema: the schema's generated encoder mapped over the column;
        anything else (nulls, a value that fails, registry errors) record by record, with the
        per-record method's bytes and errors."""
        if schema is not None and schema.type is Type.STRUCT:
            try:
                return list(map(self._writer_for(topic, schema), values))
            except Exception:
                pass  # e.g. a null value: the per-record method knows what it gives
        return super().from_connect_data_batch(topic, schema, values)

    def to_connect_data_batch(self, topic: str, datas: list[bytes | None]) -> ConnectDataBatch:
        """Messages of one schema and message (one header prefix): parse and convert over
        the column into one schema and a value list; anything else record by record."""
        first = datas[0] if datas else None
        if isinstance(first, bytes):
            try:
                reader = self._reader_of(topic, first)
                prefix = first[: reader.start]
                if all(isinstance(d, bytes) and d.startswith(prefix) for d in datas):
                    parse, convert, start = reader.parse, reader.convert, reader.start
                    messages = cast("list[bytes]", datas)
                    values = [convert(parse(d[start:])) for d in messages]
                    return ConnectDataBatch(reader.schema, values)
            except Exception:
                pass  # malformed or mixed messages: per record, with its errors
        return super().to_connect_data_batch(topic, datas)
