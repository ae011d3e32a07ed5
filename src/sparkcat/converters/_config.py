"""What every converter's configuration shares (Kafka's ``ConverterConfig``).

``converter.type`` (``key``/``value``/``header``) is set by the framework: by
``configure(configs, is_key)`` for key and value converters, and in the configs themselves for
header converters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance, ValidString
from sparkcat.api.converter import CONVERTER_TYPE_CONFIG, ConverterType

TYPE_DOC = "How this converter will be used."


def new_converter_config_def() -> ConfigDef:
    """A fresh ConfigDef holding ``converter.type`` (required, one of key/value/header)."""
    return ConfigDef().define(
        CONVERTER_TYPE_CONFIG,
        ConfigType.STRING,
        ConfigDef.NO_DEFAULT_VALUE,
        ValidString.in_(*(t.value for t in ConverterType)),
        Importance.LOW,
        TYPE_DOC,
    )


def with_converter_type(configs: Mapping[str, Any], is_key: bool | None) -> dict[str, Any]:
    """``configs`` with ``converter.type`` set from ``is_key`` (``None``: a header converter,
    keeping an explicit ``converter.type`` if the caller gave one)."""
    result = dict(configs)
    if is_key is None:
        result.setdefault(CONVERTER_TYPE_CONFIG, ConverterType.HEADER.value)
    else:
        result[CONVERTER_TYPE_CONFIG] = (ConverterType.KEY if is_key else ConverterType.VALUE).value
    return result
