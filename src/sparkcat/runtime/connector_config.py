"""Connector configs: Kafka's ``ConnectorConfig``, ``SourceConnectorConfig`` and
``SinkConnectorConfig`` definitions and the sink rules. Validation results are rendered as
the REST API's ``ConfigInfos`` by :mod:`sparkcat.runtime.rest.config_infos`.

The pipeline that validates a whole connector config (§1.5) is
:func:`sparkcat.runtime.herder.validation.validate_connector_config`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sparkcat.api.config import (
    NO_DEFAULT_VALUE,
    CaseInsensitiveValidString,
    CompositeValidator,
    ConfigDef,
    ConfigType,
    ConfigValue,
    Importance,
    LambdaValidator,
    NonEmptyString,
    NonEmptyStringWithoutControlChars,
    NonNullValidator,
    Range,
    ValidString,
    Width,
)
from sparkcat.api.errors import ConfigError, ConnectError

if TYPE_CHECKING:
    from sparkcat.runtime.isolation.plugins import PluginRegistry

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"
DLQ_TOPIC_NAME_CONFIG = "errors.deadletterqueue.topic.name"
TOPIC_CREATION_PREFIX = "topic.creation."

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_SUPPORT_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"


def _unique_aliases(kind: str) -> CompositeValidator:
    def check(name: str, value: Any) -> None:
        if len(value) > len(set(value)):
            raise ConfigError(name, value, "Duplicate alias provided.")

    return CompositeValidator.of(
        NonNullValidator(), LambdaValidator.with_(check, f"unique {kind} aliases")
    )


def plugin_class_validator(registry: PluginRegistry | None, kind: str) -> LambdaValidator | None:
    """A validator for a CLASS key naming a plugin of ``kind`` (Kafka's class loading plus
    ``ConcreteSubClassValidator``); ``None`` values pass. No registry: no check."""
    if registry is None:
        return None
    from sparkcat.runtime.isolation.extras import MissingExtraError
    from sparkcat.runtime.isolation.plugins import kind_base

    def check(name: str, value: Any) -> None:
        if value is None:
            return
        try:
            cls = registry.find(str(value), kind)
        except MissingExtraError as exc:  # a built-in whose pip extra is not installed
            raise ConfigError(name, value, str(exc)) from exc
        except (ImportError, AttributeError, TypeError):
            cls = None
        if cls is None:
            raise ConfigError(name, value, f"Class {value} could not be found.")
        base = kind_base(kind)
        if not issubclass(cls, base):
            raise ConfigError(f"Class {value} does not implement the {base.__name__} interface")

    return LambdaValidator.with_(check, f"A concrete subclass of {kind}")


def connector_config_def(registry: PluginRegistry | None = None) -> ConfigDef:
    """The keys of every connector (``ConnectorConfig.configDef()``)."""
    t, imp, w = ConfigType, Importance, Width
    converter = plugin_class_validator(registry, "converter")
    header = plugin_class_validator(registry, "header_converter")
    return (
        ConfigDef()
        .define(NAME_CONFIG, t.STRING, NO_DEFAULT_VALUE, NonEmptyStringWithoutControlChars(),
                imp.HIGH, "Unique name of the connector; a name in use cannot be reused.",
                COMMON_GROUP, 1, w.MEDIUM, "Connector name")
        .define(CONNECTOR_CLASS_CONFIG, t.STRING, NO_DEFAULT_VALUE, None, imp.HIGH,
                "Class of the connector: a Kafka class name, an alias such as FileStreamSink, "
                "module:Class, a dotted path or an entry point name.",
                COMMON_GROUP, 2, w.LONG, "Connector class")
        .define(TASKS_MAX_CONFIG, t.INT, 1, Range.at_least(1), imp.HIGH,
                "Most tasks this connector may run.", COMMON_GROUP, 3, w.SHORT, "Tasks max")
        .define(TASKS_MAX_ENFORCE_CONFIG, t.BOOLEAN, True, None, imp.LOW,
                "(Deprecated) Fail the connector when it generates more than tasks.max tasks.",
                COMMON_GROUP, 4, w.SHORT, "Enforce tasks max")
        .define(KEY_CONVERTER_CLASS_CONFIG, t.CLASS, None, converter, imp.LOW,
                "Key converter for this connector (overrides the worker's).",
                COMMON_GROUP, 5, w.SHORT, "Key converter class")
        .define(VALUE_CONVERTER_CLASS_CONFIG, t.CLASS, None, converter, imp.LOW,
                "Value converter for this connector (overrides the worker's).",
                COMMON_GROUP, 6, w.SHORT, "Value converter class")
        .define(HEADER_CONVERTER_CLASS_CONFIG, t.CLASS, None, header, imp.LOW,
                "Header converter for this connector (overrides the worker's).",
                COMMON_GROUP, 7, w.SHORT, "Header converter class")
        .define(TRANSFORMS_CONFIG, t.LIST, [], _unique_aliases("transformation"), imp.LOW,
                "Aliases of the transformations applied to records, in order.",
                TRANSFORMS_GROUP, 8, w.LONG, "Transforms")
        .define(PREDICATES_CONFIG, t.LIST, [], _unique_aliases("predicate"), imp.LOW,
                "Aliases of the predicates transformations may use.",
                PREDICATES_GROUP, 9, w.LONG, "Predicates")
        .define("config.action.reload", t.STRING, "restart", ValidString.in_("none", "restart"),
                imp.LOW, "What to do when a config provider says a value changed: restart the "
                "connector, or nothing.", COMMON_GROUP, 10, w.MEDIUM, "Reload Action")
        .define("errors.retry.timeout", t.LONG, 0, None, imp.MEDIUM,
                "How long to retry a failed operation, in ms (0: never, -1: forever).",
                ERROR_GROUP, 1, w.MEDIUM, "Retry Timeout for Errors")
        .define("errors.retry.delay.max.ms", t.LONG, 60000, None, imp.MEDIUM,
                "Longest wait between retries, in ms.", ERROR_GROUP, 2, w.MEDIUM,
                "Maximum Delay Between Retries for Errors")
        .define("errors.tolerance", t.STRING, "none", ValidString.in_("none", "all"), imp.MEDIUM,
                "none: an error fails the task; all: skip problematic records.",
                ERROR_GROUP, 3, w.SHORT, "Error Tolerance")
        .define("errors.log.enable", t.BOOLEAN, False, None, imp.MEDIUM,
                "Log each error and failed operation.", ERROR_GROUP, 4, w.SHORT, "Log Errors")
        .define("errors.log.include.messages", t.BOOLEAN, False, None, imp.MEDIUM,
                "Include the failed record in error logs.", ERROR_GROUP, 5, w.SHORT,
                "Log Error Details")
    )  # fmt: skip


def _at_least_zero_or_null(name: str, value: Any) -> None:
    if value is not None:
        Range.at_least(0)(name, value)


def source_config_def(registry: PluginRegistry | None = None) -> ConfigDef:
    """:func:`connector_config_def` plus the source keys (``SourceConnectorConfig``)."""
    t, imp, w = ConfigType, Importance, Width
    return (
        ConfigDef(connector_config_def(registry))
        .define("topic.creation.groups", t.LIST, [], _unique_aliases("topic creation group"),
                imp.LOW, "Groups of topic.creation.<group>.* settings for topics the connector "
                "creates ('default' always exists).", TOPIC_CREATION_GROUP, 1, w.LONG,
                "Topic Creation Groups")
        .define("exactly.once.support", t.STRING, "requested",
                CaseInsensitiveValidString.in_("requested", "required"), imp.MEDIUM,
                "required: fail validation unless the connector supports exactly-once.",
                EXACTLY_ONCE_SUPPORT_GROUP, 2, w.SHORT, "Exactly once support")
        .define("transaction.boundary", t.STRING, "poll",
                CaseInsensitiveValidString.in_("poll", "interval", "connector"), imp.MEDIUM,
                "Where exactly-once transactions end: each poll, an interval, or as the "
                "connector decides.", EXACTLY_ONCE_SUPPORT_GROUP, 3, w.SHORT,
                "Transaction Boundary")
        .define("transaction.boundary.interval.ms", t.LONG, None,
                LambdaValidator.with_(_at_least_zero_or_null, "[0,...]"), imp.LOW,
                "Transaction length for transaction.boundary=interval (default: the worker's "
                "offset.flush.interval.ms).", EXACTLY_ONCE_SUPPORT_GROUP, 4, w.SHORT,
                "Transaction boundary interval")
        .define("offsets.storage.topic", t.STRING, None, NonEmptyString(), imp.LOW,
                "A separate offsets topic for this connector (distributed mode only).",
                OFFSETS_TOPIC_GROUP, 1, w.LONG, "Offsets topic")
    )  # fmt: skip


def _valid_regex(name: str, value: Any) -> None:
    try:
        re.compile(str(value))
    except re.error as exc:
        raise ConfigError(name, value, f"Invalid regex: {exc}") from exc


def sink_config_def(registry: PluginRegistry | None = None) -> ConfigDef:
    """:func:`connector_config_def` plus the sink keys (``SinkConnectorConfig``)."""
    t, imp, w = ConfigType, Importance, Width
    return (
        ConfigDef(connector_config_def(registry))
        .define(TOPICS_CONFIG, t.LIST, "", None, imp.HIGH,
                "Topics to consume (comma-separated); exclusive with topics.regex.",
                COMMON_GROUP, 4, w.LONG, "Topics")
        .define(TOPICS_REGEX_CONFIG, t.STRING, "", LambdaValidator.with_(_valid_regex,
                "A valid regex"), imp.HIGH, "Regular expression of the topics to consume; "
                "exclusive with topics.", COMMON_GROUP, 4, w.LONG, "Topics regex")
        .define(DLQ_TOPIC_NAME_CONFIG, t.STRING, "", None, imp.MEDIUM,
                "Topic that receives records that failed (empty: no dead letter queue).",
                ERROR_GROUP, 6, w.MEDIUM, "Dead Letter Queue Topic Name")
        .define("errors.deadletterqueue.topic.replication.factor", t.SHORT, 3, None,
                imp.MEDIUM, "Replication factor of the dead letter queue topic when it is "
                "created.", ERROR_GROUP, 7, w.MEDIUM,
                "Dead Letter Queue Topic Replication Factor")
        .define("errors.deadletterqueue.context.headers.enable", t.BOOLEAN, False, None,
                imp.MEDIUM, "Add headers describing the error to dead letter queue records.",
                ERROR_GROUP, 8, w.MEDIUM, "Enable Error Context Headers")
    )  # fmt: skip


def parse_topics_list(props: Mapping[str, str | None]) -> list[str]:
    """``topics`` as Kafka parses it: trimmed, empty entries and duplicates dropped."""
    raw = props.get(TOPICS_CONFIG) or ""
    topics: list[str] = []
    for topic in (t.strip() for t in raw.split(",")):
        if topic and topic not in topics:
            topics.append(topic)
    return topics


def _add_error(validated: dict[str, ConfigValue], name: str, value: Any, message: str) -> None:
    entry = validated.get(name)
    if entry is None:
        entry = validated[name] = ConfigValue(name, value)
    entry.add_error_message(message)


def validate_sink_rules(props: Mapping[str, str | None], validated: dict[str, ConfigValue]) -> None:
    """Add the sink rules' errors to ``validated``, Kafka's messages."""
    topics, regex = props.get(TOPICS_CONFIG), props.get(TOPICS_REGEX_CONFIG)
    dlq = (props.get(DLQ_TOPIC_NAME_CONFIG) or "").strip()
    has_topics, has_regex = bool((topics or "").strip()), bool((regex or "").strip())
    if has_topics and has_regex:
        message = "topics and topics.regex are mutually exclusive options, but both are set."
        _add_error(validated, TOPICS_CONFIG, topics, message)
        _add_error(validated, TOPICS_REGEX_CONFIG, regex, message)
    if not has_topics and not has_regex:
        message = "Must configure one of topics or topics.regex"
        _add_error(validated, TOPICS_CONFIG, topics, message)
        _add_error(validated, TOPICS_REGEX_CONFIG, regex, message)
    if not dlq:
        return
    if has_topics:
        listed = parse_topics_list(props)
        if dlq in listed:
            _add_error(validated, TOPICS_CONFIG, topics,
                       f"The DLQ topic '{dlq}' may not be included in the list of topics "
                       f"('topics=[{', '.join(listed)}]') consumed by the connector")  # fmt: skip
    if has_regex and regex is not None:
        try:
            matched = re.fullmatch(regex, dlq) is not None
        except re.error:
            matched = False
        if matched:
            _add_error(validated, TOPICS_REGEX_CONFIG, regex,
                       f"The DLQ topic '{dlq}' may not be matched by the regex for the topics "
                       f"('topics.regex={regex}') consumed by the connector")  # fmt: skip


def uses_topic_creation(props: Mapping[str, str | None]) -> bool:
    return any(k.startswith(TOPIC_CREATION_PREFIX) for k in props)


def has_dlq_topic(props: Mapping[str, str | None]) -> bool:
    return bool((props.get(DLQ_TOPIC_NAME_CONFIG) or "").strip())


def connector_kind_error() -> ConnectError:
    return ConnectError(
        "Connector implementations must be a subclass of either SourceConnector or SinkConnector"
    )


__all__ = [
    "CONNECTOR_CLASS_CONFIG",
    "NAME_CONFIG",
    "TASKS_MAX_CONFIG",
    "connector_config_def",
    "parse_topics_list",
    "sink_config_def",
    "source_config_def",
    "validate_sink_rules",
]
