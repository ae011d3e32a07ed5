"""Subject name strategies, by Confluent's class names.

``TopicNameStrategy``: ``<topic>-key`` / ``<topic>-value``; ``RecordNameStrategy``: the
record's full name; ``TopicRecordNameStrategy``: ``<topic>-<record full name>``. Confluent's
newer default ``AssociatedNameStrategy`` falls back to the topic name when no association is
set in the registry; sparkcat has no associations, so it behaves as ``TopicNameStrategy``.
"""

from __future__ import annotations

from collections.abc import Callable

from sparkcat.api.errors import ConfigError, DataError

_PACKAGE = "io.confluent.kafka.serializers.subject."
TOPIC_NAME_STRATEGY = _PACKAGE + "TopicNameStrategy"
RECORD_NAME_STRATEGY = _PACKAGE + "RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = _PACKAGE + "TopicRecordNameStrategy"
ASSOCIATED_NAME_STRATEGY = _PACKAGE + "AssociatedNameStrategy"

SubjectNameStrategy = Callable[[str, bool, "str | None"], str]
"""``(topic, is_key, record full name or None) -> subject``."""


def _topic_name(topic: str, is_key: bool, record_name: str | None) -> str:
    return f"{topic}-{'key' if is_key else 'value'}"


def _record_name(topic: str, is_key: bool, record_name: str | None) -> str:
    if record_name is None:
        raise DataError(
            "The subject name strategy RecordNameStrategy needs a named record schema "
            "(a Connect STRUCT with a name)"
        )
    return record_name


def _topic_record_name(topic: str, is_key: bool, record_name: str | None) -> str:
    return f"{topic}-{_record_name(topic, is_key, record_name)}"


_STRATEGIES: dict[str, SubjectNameStrategy] = {
    TOPIC_NAME_STRATEGY: _topic_name,
    ASSOCIATED_NAME_STRATEGY: _topic_name,
    RECORD_NAME_STRATEGY: _record_name,
    TOPIC_RECORD_NAME_STRATEGY: _topic_record_name,
}
# Confluent's legacy package for the same strategies.
_STRATEGIES.update(
    {
        name.replace(_PACKAGE, "io.confluent.kafka.serializers.subject.strategy."): fn
        for name, fn in list(_STRATEGIES.items())
        if name != ASSOCIATED_NAME_STRATEGY
    }
)


def strategy(name: str) -> SubjectNameStrategy:
    """The strategy named by its Confluent class name (or simple name)."""
    found = _STRATEGIES.get(name) or _STRATEGIES.get(_PACKAGE + name)
    if found is None:
        raise ConfigError(f"Invalid subject name strategy: {name}")
    return found
