"""HasHeaderKey: true for records with at least one header of a given name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance, NonEmptyString
from sparkcat.api.transform import Predicate

NAME_CONFIG = "name"
OVERVIEW_DOC = (
    "A predicate which is true for records with at least one header with the configured name."
)
CONFIG_DEF = ConfigDef().define(
    NAME_CONFIG,
    ConfigType.STRING,
    validator=NonEmptyString(),
    importance=Importance.MEDIUM,
    documentation="The header name.",
)


class HasHeaderKey(Predicate[Any]):
    """True when the record has a header whose key is ``name``."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._name: str = CONFIG_DEF.parse(configs)[NAME_CONFIG]

    def test(self, record: Any) -> bool:
        return record.headers.last_with_name(self._name) is not None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def __repr__(self) -> str:
        return f"HasHeaderKey{{name='{getattr(self, '_name', None)}'}}"


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "HasHeaderKey"]
