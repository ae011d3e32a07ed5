"""The capabilities the built-in converters declare hold: the framework's shortcuts for a
declared ``null_pass_through`` give what the calls they skip would give."""

from __future__ import annotations

from typing import Any

import pytest

from sparkcat.api.converter import Converter
from sparkcat.converters.avro.converter import AvroConverter
from sparkcat.converters.bytes import ByteArrayConverter
from sparkcat.converters.json.converter import JsonConverter
from sparkcat.converters.json_schema.converter import JsonSchemaConverter
from sparkcat.converters.numbers import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
)
from sparkcat.converters.protobuf.converter import ProtobufConverter
from sparkcat.converters.string import StringConverter

# A registry nobody listens on: a null must not need one.
REGISTRY = {"schema.registry.url": "http://127.0.0.1:1"}

CASES: list[tuple[type[Converter], dict[str, Any]]] = [
    (ByteArrayConverter, {}),
    (StringConverter, {}),
    (StringConverter, {"converter.encoding": "UTF-16"}),
    (JsonConverter, {"schemas.enable": "true"}),
    (JsonConverter, {"schemas.enable": "false"}),
    (ShortConverter, {}),
    (IntegerConverter, {}),
    (LongConverter, {}),
    (FloatConverter, {}),
    (DoubleConverter, {}),
    (BooleanConverter, {}),
    (AvroConverter, REGISTRY),
    (ProtobufConverter, REGISTRY),
    (JsonSchemaConverter, REGISTRY),
]


@pytest.mark.parametrize("is_key", [True, False])
@pytest.mark.parametrize(("cls", "configs"), CASES)
def test_a_declared_null_pass_through_holds(
    cls: type[Converter], configs: dict[str, Any], is_key: bool
) -> None:
    assert cls.null_pass_through, f"{cls.__name__} should declare null_pass_through"
    converter = cls()
    converter.configure(configs, is_key)
    assert converter.from_connect_data("orders", None, None) is None
    read = converter.to_connect_data("orders", None)
    assert read.value is None
    assert converter.to_connect_data("payments", None) == read
