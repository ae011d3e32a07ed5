"""RegexRouter: rewrite the topic with a regex and a replacement (Kafka's ``RegexRouter``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from sparkcat.api.config import ConfigDef, ConfigType, Importance
from sparkcat.api.errors import ConfigError
from sparkcat.transforms._base import RegexValidator, SimpleTransformation
from sparkcat.transforms._java_regex import compile_java_regex, java_replacement

REGEX_CONFIG = "regex"
REPLACEMENT_CONFIG = "replacement"
OVERVIEW_DOC = (
    "Update the record topic using the configured regular expression and replacement string."
    "<p/>Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. If the "
    "pattern matches the input topic, <code>java.util.regex.Matcher#replaceFirst()</code> is "
    "used with the replacement string to obtain the new topic."
)
CONFIG_DEF = (
    ConfigDef()
    .define(
        REGEX_CONFIG,
        ConfigType.STRING,
        validator=RegexValidator(),
        importance=Importance.HIGH,
        documentation="Regular expression to use for matching.",
    )
    .define(
        REPLACEMENT_CONFIG,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="Replacement string.",
    )
)
_log = logging.getLogger(__name__)


class RegexRouter(SimpleTransformation):
    """If ``regex`` matches the whole topic, the topic becomes the first match replaced by
    ``replacement`` (Java syntax: ``$1``, ``${name}``); otherwise the record is unchanged.

    One difference: an invalid group reference in ``replacement`` is reported by
    :meth:`configure` (Kafka fails on the first matching record).
    """

    CONFIG_DEF = CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self._parse(configs)
        self._regex = compile_java_regex(parsed[REGEX_CONFIG])
        replacement = parsed[REPLACEMENT_CONFIG]
        try:
            self._expand = java_replacement(self._regex, replacement)
        except ValueError as e:
            raise ConfigError(REPLACEMENT_CONFIG, replacement, str(e)) from e

    def apply(self, record: Any) -> Any:
        topic = record.topic
        if self._regex.fullmatch(topic) is None:
            _log.debug("Not rerouting topic '%s' as it does not match the configured regex", topic)
            return record
        # Java's replaceFirst searches again from the start: the leftmost match may be shorter.
        updated = self._regex.sub(self._expand, topic, count=1)
        return record.new_record(
            updated,
            record.kafka_partition,
            record.key_schema,
            record.key,
            record.value_schema,
            record.value,
            record.timestamp,
        )


__all__ = ["CONFIG_DEF", "OVERVIEW_DOC", "RegexRouter"]
