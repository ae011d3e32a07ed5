"""Filter: drop every record; meant to be used with a predicate (Kafka's ``Filter``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef
from sparkcat.transforms._base import SimpleTransformation

OVERVIEW_DOC = (
    "Drops all records, filtering them from subsequent transformations in the chain. This is "
    "intended to be used conditionally to filter out records matching (or not matching) a "
    "particular Predicate."
)
CONFIG_DEF = ConfigDef()


class Filter(SimpleTransformation):
    """Returns ``None`` for every record, which ends the chain for it."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def apply(self, record: Any) -> None:
        return None


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "Filter"]
