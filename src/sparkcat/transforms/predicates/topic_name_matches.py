"""TopicNameMatches: true for records whose topic fully matches a (Java) regex."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import (
    CompositeValidator,
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
)
from sparkcat.api.errors import ConfigError
from sparkcat.api.transform import Predicate
from sparkcat.transforms._base import RegexValidator
from sparkcat.transforms._java_regex import compile_java_regex

PATTERN_CONFIG = "pattern"
OVERVIEW_DOC = (
    "A predicate which is true for records with a topic name that matches the configured "
    "regular expression."
)
CONFIG_DEF = ConfigDef().define(
    PATTERN_CONFIG,
    ConfigType.STRING,
    validator=CompositeValidator.of(NonEmptyString(), RegexValidator()),
    importance=Importance.MEDIUM,
    documentation="A Java regular expression for matching against the name of a record's topic.",
)


class TopicNameMatches(Predicate[Any]):
    """True when the topic is not ``None`` and ``pattern`` matches all of it."""

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        value = CONFIG_DEF.parse(configs)[PATTERN_CONFIG]
        try:
            self._pattern = compile_java_regex(value)
        except re.error as e:
            raise ConfigError(
                PATTERN_CONFIG, value, f"entry must be a Java-compatible regular expression: {e}"
            ) from e

    def test(self, record: Any) -> bool:
        topic = record.topic
        return topic is not None and self._pattern.fullmatch(topic) is not None

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def __repr__(self) -> str:
        pattern = getattr(self, "_pattern", None)
        return f"TopicNameMatches{{pattern={pattern.pattern if pattern else None}}}"


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "TopicNameMatches"]
