"""RecordIsTombstone: true for records whose value is null."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef
from sparkcat.api.transform import Predicate

OVERVIEW_DOC = "A predicate which is true for records which are tombstones (i.e. have null value)."
CONFIG_DEF = ConfigDef()


class RecordIsTombstone(Predicate[Any]):
    """True when ``record.value is None``."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def test(self, record: Any) -> bool:
        return record.value is None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def __repr__(self) -> str:
        return "RecordIsTombstone{}"


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "RecordIsTombstone"]
